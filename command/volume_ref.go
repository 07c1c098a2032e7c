package command

import (
	"fmt"
	"strings"

	"github.com/stratus-cloud/stratus/api"
)

// volumeID resolves what a user typed for a volume, as instances are
// resolved: an ID, else an exact name, else a unique ID prefix, among
// the volumes vols can see. Names are not unique in Cinder either, so a
// name two volumes share is refused with their IDs rather than guessed.
func (e *env) volumeID(vols *api.Volumes, ref string) (string, error) {
	if ref == "" {
		return "", fmt.Errorf("no volume given")
	}
	_, _, err := vols.Info(ref, e.queryOptions())
	if err == nil || !api.IsNotFound(err) {
		return ref, err
	}
	list, _, lerr := vols.List(e.queryOptions())
	if lerr != nil {
		return ref, err
	}
	matches := refMatches(ref, list, func(v *api.Volume) (string, string) { return v.Name, v.ID })
	switch len(matches) {
	case 0:
		return ref, err
	case 1:
		return matches[0], nil
	}
	return ref, fmt.Errorf("%q matches %d volumes (%s); use an ID", ref, len(matches), strings.Join(matches, ", "))
}
