package fsm

import (
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableVolumeSnapshots is the name of the table, for Index and blocking
// queries.
const TableVolumeSnapshots = "volume_snapshots"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableVolumeSnapshots,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"project": {Name: "project", Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
				"volume":  {Name: "volume", Indexer: &memdb.StringFieldIndex{Field: "VolumeID"}},
				"host":    {Name: "host", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Host"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.VolumeSnapRecordSnapshot,
		table:      TableVolumeSnapshots,
		newRecord:  func() any { return new(structs.VolumeSnapshot) },
	})
	registerApply(structs.VolumeSnapshotCreateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeSnapshotCreateEntry
		if err := decodeBody(structs.VolumeSnapshotCreateType, body, &e); err != nil {
			return err
		}
		return s.CreateVolumeSnapshot(index, &e)
	})
	registerApply(structs.VolumeSnapshotUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeSnapshotUpdateEntry
		if err := decodeBody(structs.VolumeSnapshotUpdateType, body, &e); err != nil {
			return err
		}
		return s.UpdateVolumeSnapshot(index, &e)
	})
	registerApply(structs.VolumeSnapshotDeleteType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeSnapshotDeleteEntry
		if err := decodeBody(structs.VolumeSnapshotDeleteType, body, &e); err != nil {
			return err
		}
		return s.DeleteVolumeSnapshot(index, &e)
	})
}

// CreateVolumeSnapshot stores a new snapshot of an available volume (or
// an in-use one with AllowInUse), on the volume's storage host, after
// checking the project's quotas. Its size is the volume's.
func (s *StateStore) CreateVolumeSnapshot(index uint64, e *structs.VolumeSnapshotCreateEntry) error {
	snap := e.Snapshot
	if snap == nil || snap.ID == "" || snap.VolumeID == "" {
		return structs.Errorf(structs.KindInvalid, "snapshot create without an id or a volume")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	if existing, err := first[*structs.VolumeSnapshot](txn, nil, TableVolumeSnapshots, "id", snap.ID); err != nil {
		return err
	} else if existing != nil {
		return structs.Errorf(structs.KindConflict, "snapshot %s already exists", snap.ID)
	}
	v, err := first[*structs.Volume](txn, nil, TableVolumes, "id", snap.VolumeID)
	if err != nil {
		return err
	}
	if v == nil || (snap.ProjectID != "" && v.ProjectID != snap.ProjectID) {
		return structs.Errorf(structs.KindNotFound, "Volume %s could not be found.", snap.VolumeID)
	}
	ok := v.Status == structs.VolumeAvailable || (e.AllowInUse && v.Status == structs.VolumeInUse)
	if !ok {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available, but current status is: %s.", v.ID, v.Status)
	}
	if err := checkVolumeQuota(txn, v.ProjectID, 0, 1, int64(v.SizeGB), 0); err != nil {
		return err
	}
	c := snap.Copy()
	c.ProjectID, c.SizeGB, c.Host = v.ProjectID, v.SizeGB, v.Host
	c.CreateIndex, c.ModifyIndex = index, index
	if err := txn.Insert(TableVolumeSnapshots, c); err != nil {
		return fmt.Errorf("insert snapshot %s: %w", snap.ID, err)
	}
	return commitAt(txn, index, TableVolumeSnapshots)
}

// UpdateVolumeSnapshot applies one change to a snapshot, if its
// preconditions hold.
func (s *StateStore) UpdateVolumeSnapshot(index uint64, e *structs.VolumeSnapshotUpdateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	snap, err := snapshotForEntry(txn, e.ID, e.Host, e.FromStatus)
	if err != nil {
		return err
	}
	c := snap.Copy()
	if e.Status != "" {
		c.Status = e.Status
	}
	setString(&c.Name, e.Name)
	setString(&c.Description, e.Description)
	setString(&c.ProviderLocation, e.ProviderLocation)
	setString(&c.ErrorMessage, e.ErrorMessage)
	c.Metadata = mergeMetadata(c.Metadata, e.Metadata, e.ReplaceMetadata, e.DeleteMetadata)
	if e.UpdatedAt != 0 {
		c.UpdatedAt = e.UpdatedAt
	}
	c.ModifyIndex = index
	if err := txn.Insert(TableVolumeSnapshots, c); err != nil {
		return fmt.Errorf("update snapshot %s: %w", snap.ID, err)
	}
	return commitAt(txn, index, TableVolumeSnapshots)
}

// DeleteVolumeSnapshot removes a snapshot's record, releasing its quota.
func (s *StateStore) DeleteVolumeSnapshot(index uint64, e *structs.VolumeSnapshotDeleteEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	snap, err := snapshotForEntry(txn, e.ID, e.Host, e.FromStatus)
	if err != nil {
		return err
	}
	if err := txn.Delete(TableVolumeSnapshots, snap); err != nil {
		return fmt.Errorf("delete snapshot %s: %w", snap.ID, err)
	}
	return commitAt(txn, index, TableVolumeSnapshots)
}

func snapshotForEntry(txn *memdb.Txn, id, host string, from []string) (*structs.VolumeSnapshot, error) {
	snap, err := first[*structs.VolumeSnapshot](txn, nil, TableVolumeSnapshots, "id", id)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return nil, structs.Errorf(structs.KindNotFound, "Snapshot %s could not be found.", id)
	}
	if host != "" && snap.Host != host {
		return nil, structs.Errorf(structs.KindConflict, "snapshot %s is not on host %s", id, host)
	}
	if len(from) > 0 && !slices.Contains(from, snap.Status) {
		return nil, structs.Errorf(structs.KindInvalid, "Invalid snapshot: Snapshot status must be %s, not %s.", statusList(from), snap.Status)
	}
	return snap, nil
}

// VolumeSnapshot returns one snapshot, or nil.
func (s *StateStore) VolumeSnapshot(ws memdb.WatchSet, id string) (*structs.VolumeSnapshot, error) {
	return first[*structs.VolumeSnapshot](s.ReadTxn(), ws, TableVolumeSnapshots, "id", id)
}

// VolumeSnapshots lists a project's snapshots, or every one for "".
func (s *StateStore) VolumeSnapshots(ws memdb.WatchSet, projectID string) ([]*structs.VolumeSnapshot, error) {
	if projectID == "" {
		return list[*structs.VolumeSnapshot](s.ReadTxn(), ws, TableVolumeSnapshots)
	}
	return list[*structs.VolumeSnapshot](s.ReadTxn(), ws, TableVolumeSnapshots, "project", projectID)
}

// VolumeSnapshotsByHost lists the snapshots a storage host keeps.
func (s *StateStore) VolumeSnapshotsByHost(ws memdb.WatchSet, hostID string) ([]*structs.VolumeSnapshot, error) {
	return list[*structs.VolumeSnapshot](s.ReadTxn(), ws, TableVolumeSnapshots, "host", hostID)
}
