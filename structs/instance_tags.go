package structs

import (
	"slices"
	"strings"
)

// MaxServerTags is how many tags one instance may have, as in Nova.
const MaxServerTags = 50

// ValidateTag checks one server tag: 1 to 60 characters, no "/" or ","
// (Nova's tag pattern, as tags travel in URLs and comma-separated
// filters).
func ValidateTag(tag string) error {
	if tag == "" || len([]rune(tag)) > 60 || strings.ContainsAny(tag, "/,") {
		return Errorf(KindInvalid, "Invalid tag %q: a tag is 1-60 characters without '/' or ','", tag)
	}
	return nil
}

// SortedTags returns tags sorted and without duplicates.
func SortedTags(tags []string) []string {
	out := slices.Clone(tags)
	slices.Sort(out)
	return slices.Compact(out)
}

// HasTag reports whether inst has tag.
func (i *Instance) HasTag(tag string) bool {
	_, ok := slices.BinarySearch(i.Tags, tag)
	return ok
}
