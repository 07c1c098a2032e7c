package fsm

import (
	"fmt"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableFlavors is the name of the table, for Index and blocking queries.
const TableFlavors = "flavors"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableFlavors,
			Indexes: map[string]*memdb.IndexSchema{
				"id":   idIndex("ID"),
				"name": {Name: "name", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.FlavorSnapshot,
		table:      TableFlavors,
		newRecord:  func() any { return new(structs.Flavor) },
	})
	registerApply(structs.FlavorUpsertRequestType, applyFlavorUpsert)
	registerApply(structs.FlavorDeleteRequestType, applyFlavorDelete)
}

func applyFlavorUpsert(s *StateStore, index uint64, version uint8, body []byte) any {
	var req structs.FlavorUpsertRequest
	if err := decodeBody(structs.FlavorUpsertRequestType, body, &req); err != nil {
		return err
	}
	if req.CheckIndex != 0 {
		if err := s.checkFlavorIndex(req.Flavors, req.CheckIndex); err != nil {
			return err
		}
	}
	return s.upsertFlavors(index, req.Flavors, req.CreateOnly)
}

// checkFlavorIndex is an upsert's compare-and-set: one flavor, stored
// and last modified at index.
func (s *StateStore) checkFlavorIndex(flavors []*structs.Flavor, index uint64) error {
	if len(flavors) != 1 || flavors[0] == nil {
		return structs.Errorf(structs.KindInvalid, "a flavor upsert with a check index names exactly one flavor")
	}
	stored, err := s.FlavorByID(nil, flavors[0].ID)
	if err != nil {
		return err
	}
	if stored == nil || stored.ModifyIndex != index {
		return structs.Errorf(structs.KindConflict, "%s: %s", structs.ErrFlavorChanged, flavors[0].ID)
	}
	return nil
}

func applyFlavorDelete(s *StateStore, index uint64, version uint8, body []byte) any {
	var req structs.FlavorDeleteRequest
	if err := decodeBody(structs.FlavorDeleteRequestType, body, &req); err != nil {
		return err
	}
	return s.DeleteFlavors(index, req.IDs)
}

// UpsertFlavors creates or replaces flavors at index. A name already used
// by another flavor is a conflict, and nothing of the request is written.
func (s *StateStore) UpsertFlavors(index uint64, flavors []*structs.Flavor) error {
	return s.upsertFlavors(index, flavors, false)
}

func (s *StateStore) upsertFlavors(index uint64, flavors []*structs.Flavor, createOnly bool) error {
	txn := s.writeTxn()
	defer txn.Abort()
	for _, f := range flavors {
		if f == nil {
			return structs.Errorf(structs.KindInvalid, "flavor upsert with an empty flavor")
		}
		f = f.Copy()
		if f.ExtraSpecs == nil {
			// Entries from older servers may lack the map.
			f.ExtraSpecs = map[string]string{}
		}
		if createOnly {
			if existing, err := txn.First(TableFlavors, "id", f.ID); err != nil {
				return fmt.Errorf("flavor lookup %s: %w", f.ID, err)
			} else if existing != nil {
				return structs.Errorf(structs.KindConflict, "flavor with id %q already exists", f.ID)
			}
		}
		byName, err := txn.First(TableFlavors, "name", f.Name)
		if err != nil {
			return fmt.Errorf("flavor lookup by name %s: %w", f.Name, err)
		}
		if byName != nil && byName.(*structs.Flavor).ID != f.ID {
			return structs.Errorf(structs.KindConflict, "flavor name %q is used by flavor %s", f.Name, byName.(*structs.Flavor).ID)
		}
		err = upsert(txn, TableFlavors, index, f,
			func(create, modify uint64) { f.CreateIndex, f.ModifyIndex = create, modify },
			func(o any) uint64 { return o.(*structs.Flavor).CreateIndex }, f.ID)
		if err != nil {
			return err
		}
	}
	return commitAt(txn, index, TableFlavors)
}

// DeleteFlavors removes flavors by id; a missing id fails the whole
// request so a client never half-deletes a list.
func (s *StateStore) DeleteFlavors(index uint64, ids []string) error {
	txn := s.writeTxn()
	defer txn.Abort()
	for _, id := range ids {
		if err := deleteByID(txn, TableFlavors, "flavor", id); err != nil {
			return err
		}
	}
	return commitAt(txn, index, TableFlavors)
}

// FlavorByID returns a flavor or nil.
func (s *StateStore) FlavorByID(ws memdb.WatchSet, id string) (*structs.Flavor, error) {
	return first[*structs.Flavor](s.ReadTxn(), ws, TableFlavors, "id", id)
}

// FlavorByIDOrName looks up by id first, then by name, as Nova's CLI does.
func (s *StateStore) FlavorByIDOrName(ws memdb.WatchSet, key string) (*structs.Flavor, error) {
	txn := s.ReadTxn()
	f, err := first[*structs.Flavor](txn, ws, TableFlavors, "id", key)
	if err != nil || f != nil {
		return f, err
	}
	return first[*structs.Flavor](txn, ws, TableFlavors, "name", key)
}

// Flavors lists every flavor, sorted by id as Nova sorts numeric ids
// (shorter first, then lexically), so "2" comes before "10".
func (s *StateStore) Flavors(ws memdb.WatchSet) ([]*structs.Flavor, error) {
	out, err := list[*structs.Flavor](s.ReadTxn(), ws, TableFlavors)
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].ID, out[j].ID
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	})
	return out, nil
}
