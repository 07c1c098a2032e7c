package fsm

import (
	"fmt"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

func init() {
	registerApply(structs.VolumeTypeAccessType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeTypeAccessEntry
		if err := decodeBody(structs.VolumeTypeAccessType, body, &e); err != nil {
			return err
		}
		return s.VolumeTypeAccess(index, &e)
	})
}

// VolumeTypeAccess adds a project to a private type's projects or
// removes it, with Cinder's refusals: a public type has no access list,
// an existing access is a conflict, a missing one not found.
func (s *StateStore) VolumeTypeAccess(index uint64, e *structs.VolumeTypeAccessEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	t, err := volumeTypeByIDOrName(txn, nil, e.TypeID)
	if err != nil {
		return err
	}
	if t == nil || t.ID != e.TypeID {
		return structs.Errorf(structs.KindNotFound, "Volume type %s could not be found.", e.TypeID)
	}
	if t.IsPublic {
		return structs.Errorf(structs.KindInvalid, "Invalid volume type: Type access modification is not applicable to public volume type.")
	}
	has := slices.Contains(t.Projects, e.ProjectID)
	switch {
	case e.Remove && !has:
		return structs.Errorf(structs.KindNotFound, "Volume type access not found for %s / %s combination.", t.ID, e.ProjectID)
	case !e.Remove && has:
		return structs.Errorf(structs.KindConflict, "Volume type access for %s / %s combination already exists.", t.ID, e.ProjectID)
	}
	c := *t
	if e.Remove {
		c.Projects = slices.DeleteFunc(slices.Clone(t.Projects), func(p string) bool { return p == e.ProjectID })
	} else {
		c.Projects = append(slices.Clone(t.Projects), e.ProjectID)
	}
	c.ModifyIndex = index
	if err := txn.Insert(TableVolumeTypes, &c); err != nil {
		return fmt.Errorf("volume type %s access: %w", t.ID, err)
	}
	return commitAt(txn, index, TableVolumeTypes)
}
