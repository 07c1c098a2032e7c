package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableVolumeTypes is the name of the table, for Index and blocking
// queries. __DEFAULT__ is not stored: every read answers it.
const TableVolumeTypes = "volume_types"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableVolumeTypes,
			Indexes: map[string]*memdb.IndexSchema{
				"id":   idIndex("ID"),
				"name": {Name: "name", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.VolumeTypeRecordSnapshot,
		table:      TableVolumeTypes,
		newRecord:  func() any { return new(structs.VolumeType) },
	})
	registerApply(structs.VolumeTypeUpsertType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeTypeUpsertEntry
		if err := decodeBody(structs.VolumeTypeUpsertType, body, &e); err != nil {
			return err
		}
		return s.UpsertVolumeType(index, e.Type)
	})
	registerApply(structs.VolumeTypeDeleteType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeTypeDeleteEntry
		if err := decodeBody(structs.VolumeTypeDeleteType, body, &e); err != nil {
			return err
		}
		return s.DeleteVolumeType(index, e.ID)
	})
}

// UpsertVolumeType stores a volume type; its name must be unique and
// __DEFAULT__ cannot be changed.
func (s *StateStore) UpsertVolumeType(index uint64, t *structs.VolumeType) error {
	if t == nil || t.ID == "" || t.Name == "" {
		return structs.Errorf(structs.KindInvalid, "volume type without an id or a name")
	}
	if t.ID == structs.DefaultVolumeTypeID || t.Name == structs.DefaultVolumeTypeName {
		return structs.Errorf(structs.KindConflict, "Volume Type %s already exists.", structs.DefaultVolumeTypeName)
	}
	txn := s.writeTxn()
	defer txn.Abort()
	if other, err := first[*structs.VolumeType](txn, nil, TableVolumeTypes, "name", t.Name); err != nil {
		return err
	} else if other != nil && other.ID != t.ID {
		return structs.Errorf(structs.KindConflict, "Volume Type %s already exists.", t.Name)
	}
	c := *t
	// The projects of a private type change only through
	// VolumeTypeAccessEntry, so an upsert made from an older read
	// never drops one.
	c.Projects = nil
	if old, err := first[*structs.VolumeType](txn, nil, TableVolumeTypes, "id", t.ID); err != nil {
		return err
	} else if old != nil {
		c.Projects = old.Projects
	}
	err := upsert(txn, TableVolumeTypes, index, &c,
		func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
		func(o any) uint64 { return o.(*structs.VolumeType).CreateIndex }, c.ID)
	if err != nil {
		return err
	}
	return commitAt(txn, index, TableVolumeTypes)
}

// DeleteVolumeType removes a volume type no volume uses.
func (s *StateStore) DeleteVolumeType(index uint64, id string) error {
	if id == structs.DefaultVolumeTypeID {
		return structs.Errorf(structs.KindInvalid, "Invalid volume type: The default volume type cannot be deleted.")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	vols, err := list[*structs.Volume](txn, nil, TableVolumes)
	if err != nil {
		return err
	}
	for _, v := range vols {
		if v.VolumeTypeID == id {
			return structs.Errorf(structs.KindInvalid, "Target volume type is still in use.")
		}
	}
	if err := deleteByID(txn, TableVolumeTypes, "volume type", id); err != nil {
		return err
	}
	return commitAt(txn, index, TableVolumeTypes)
}

// volumeTypeByIDOrName finds a type by id, then by name; __DEFAULT__
// answers its id and name and "" too.
func volumeTypeByIDOrName(txn *memdb.Txn, ws memdb.WatchSet, key string) (*structs.VolumeType, error) {
	if key == "" || key == structs.DefaultVolumeTypeID || key == structs.DefaultVolumeTypeName {
		return structs.DefaultVolumeType(), nil
	}
	t, err := first[*structs.VolumeType](txn, ws, TableVolumeTypes, "id", key)
	if err != nil || t != nil {
		return t, err
	}
	return first[*structs.VolumeType](txn, ws, TableVolumeTypes, "name", key)
}

// VolumeType returns a type by id or name, or nil.
func (s *StateStore) VolumeType(ws memdb.WatchSet, key string) (*structs.VolumeType, error) {
	return volumeTypeByIDOrName(s.ReadTxn(), ws, key)
}

// VolumeTypes lists every type, __DEFAULT__ first.
func (s *StateStore) VolumeTypes(ws memdb.WatchSet) ([]*structs.VolumeType, error) {
	ts, err := list[*structs.VolumeType](s.ReadTxn(), ws, TableVolumeTypes)
	if err != nil {
		return nil, fmt.Errorf("volume types: %w", err)
	}
	return append([]*structs.VolumeType{structs.DefaultVolumeType()}, ts...), nil
}
