package fsm

import (
	"fmt"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

func init() {
	registerApply(structs.FlavorAccessType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.FlavorAccessEntry
		if err := decodeBody(structs.FlavorAccessType, body, &e); err != nil {
			return err
		}
		return s.UpdateFlavorAccess(index, &e)
	})
}

// UpdateFlavorAccess adds a project to or removes one from a private
// flavor's access list, refusing as Nova does: public flavors have no
// list, a project is listed once, and only a listed one is removed.
func (s *StateStore) UpdateFlavorAccess(index uint64, e *structs.FlavorAccessEntry) error {
	if (e.AddProject == "") == (e.RemoveProject == "") {
		return structs.Errorf(structs.KindInvalid, "a flavor access change adds or removes exactly one project")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	f, err := first[*structs.Flavor](txn, nil, TableFlavors, "id", e.FlavorID)
	if err != nil {
		return err
	}
	if f == nil {
		return structs.Errorf(structs.KindNotFound, "Flavor %s could not be found.", e.FlavorID)
	}
	if f.IsPublic {
		return structs.Errorf(structs.KindConflict, "Can not add access to a public flavor.")
	}
	c := f.Copy()
	if p := e.AddProject; p != "" {
		if slices.Contains(c.Projects, p) {
			return structs.Errorf(structs.KindConflict, "Flavor access already exists for flavor %s and project %s combination.", f.ID, p)
		}
		c.Projects = append(c.Projects, p)
		slices.Sort(c.Projects)
	} else {
		p := e.RemoveProject
		if !slices.Contains(c.Projects, p) {
			return structs.Errorf(structs.KindNotFound, "Flavor access not found for %s / %s combination.", f.ID, p)
		}
		c.Projects = slices.DeleteFunc(c.Projects, func(x string) bool { return x == p })
		if len(c.Projects) == 0 {
			c.Projects = nil
		}
	}
	c.ModifyIndex = index
	if err := txn.Insert(TableFlavors, c); err != nil {
		return fmt.Errorf("store flavor %s: %w", c.ID, err)
	}
	return commitAt(txn, index, TableFlavors)
}
