package ec2

import "strings"

// idKind is how one kind of EC2 id is checked and named in errors.
type idKind struct {
	prefix    string
	noun      string // "volume", "snapshot" (EC2's messages)
	malformed string // the code of a malformed id
	notFound  string // the code of an id matching none
}

// resolveByID maps EC2 ids of one kind to the records all holds (the
// caller's project's), in the order given: a malformed id is the kind's
// malformed code, ids matching no record (another project's included)
// its not-found code naming them all, and an id matching two records
// (a short id) is refused rather than guessed.
func resolveByID[T any](k idKind, ids []string, all []T, uuid func(T) string) ([]T, error) {
	for _, id := range ids {
		if !validID(k.prefix, id) {
			return nil, ec2Error(k.malformed, "Invalid id: \"%s\" (expecting \"%s-...\")", id, k.prefix)
		}
	}
	out := make([]T, 0, len(ids))
	var missing []string
	for _, id := range ids {
		var found []T
		for _, it := range all {
			if strings.HasPrefix(ec2ID(k.prefix, uuid(it)), id) {
				found = append(found, it)
			}
		}
		switch len(found) {
		case 0:
			missing = append(missing, id)
		case 1:
			out = append(out, found[0])
		default:
			return nil, ec2Error(codeInvalidParameterValue, "The %s id '%s' is ambiguous.", k.noun, id)
		}
	}
	if len(missing) > 0 {
		return nil, ec2Error(k.notFound, "The %s '%s' does not exist.", k.noun, strings.Join(missing, ", "))
	}
	return out, nil
}
