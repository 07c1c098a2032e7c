package fsm

import (
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TableVolumes is the name of the table, for Index and blocking queries.
const TableVolumes = "volumes"

// Volumes change only through entries whose preconditions the FSM
// checks against the state the entries before them left: a status
// transition names the statuses it starts from, an agent's report names
// the storage host it comes from, and quotas are consumed in the same
// transaction as the create or extend that needs them. Two racing
// requests therefore never both win.

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableVolumes,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"project": {Name: "project", Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
				"host":    {Name: "host", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Host"}},
				// attached_host: volume_attached_index.go.
				"attached_host": {Name: "attached_host", AllowMissing: true, Indexer: attachedHostIndex{}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.VolumeRecordSnapshot,
		table:      TableVolumes,
		newRecord:  func() any { return new(structs.Volume) },
	})
	registerApply(structs.VolumeCreateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeCreateEntry
		if err := decodeBody(structs.VolumeCreateType, body, &e); err != nil {
			return err
		}
		return s.CreateVolume(index, e.Volume)
	})
	registerApply(structs.VolumeUpdateType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeUpdateEntry
		if err := decodeBody(structs.VolumeUpdateType, body, &e); err != nil {
			return err
		}
		return s.UpdateVolume(index, &e)
	})
	registerApply(structs.VolumeDeleteType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeDeleteEntry
		if err := decodeBody(structs.VolumeDeleteType, body, &e); err != nil {
			return err
		}
		return s.DeleteVolume(index, &e)
	})
}

// CreateVolume stores a new volume after checking its type, its source
// and the project's quotas.
func (s *StateStore) CreateVolume(index uint64, v *structs.Volume) error {
	txn := s.writeTxn()
	defer txn.Abort()
	if err := createVolumeTxn(txn, index, v); err != nil {
		return err
	}
	return commitAt(txn, index, TableVolumes)
}

// createVolumeTxn is CreateVolume in txn, which the caller commits.
func createVolumeTxn(txn *memdb.Txn, index uint64, v *structs.Volume) error {
	if v == nil || v.ID == "" || v.ProjectID == "" {
		return structs.Errorf(structs.KindInvalid, "volume create without an id or a project")
	}
	if v.SizeGB < 1 {
		return structs.Errorf(structs.KindInvalid, "volume size must be at least 1 GB, not %d", v.SizeGB)
	}
	if existing, err := first[*structs.Volume](txn, nil, TableVolumes, "id", v.ID); err != nil {
		return err
	} else if existing != nil {
		return structs.Errorf(structs.KindConflict, "volume %s already exists", v.ID)
	}
	vt, err := volumeTypeByIDOrName(txn, nil, v.VolumeTypeID)
	if err != nil {
		return err
	}
	if vt == nil {
		return structs.Errorf(structs.KindNotFound, "Volume type %s could not be found.", v.VolumeTypeID)
	}
	if err := checkVolumeSource(txn, v); err != nil {
		return err
	}
	if err := checkVolumeQuota(txn, v.ProjectID, 1, 0, int64(v.SizeGB), v.SizeGB); err != nil {
		return err
	}
	c := v.Copy()
	c.VolumeTypeID = vt.ID
	c.CreateIndex, c.ModifyIndex = index, index
	if err := txn.Insert(TableVolumes, c); err != nil {
		return fmt.Errorf("insert volume %s: %w", v.ID, err)
	}
	return nil
}

// checkVolumeSource checks that a volume's snapshot or source volume
// exists in its project, is available and is not larger than it.
func checkVolumeSource(txn *memdb.Txn, v *structs.Volume) error {
	switch {
	case v.SnapshotID != "":
		snap, err := first[*structs.VolumeSnapshot](txn, nil, TableVolumeSnapshots, "id", v.SnapshotID)
		if err != nil {
			return err
		}
		if snap == nil || snap.ProjectID != v.ProjectID {
			return structs.Errorf(structs.KindNotFound, "Snapshot %s could not be found.", v.SnapshotID)
		}
		if snap.Status != structs.SnapshotAvailable {
			return structs.Errorf(structs.KindInvalid, "Invalid snapshot: Originating snapshot status must be one of 'available' values")
		}
		if v.SizeGB < snap.SizeGB {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: Volume size '%d'GB cannot be smaller than the snapshot size %dGB. They must be >= original snapshot size.", v.SizeGB, snap.SizeGB)
		}
	case v.SourceVolumeID != "":
		src, err := first[*structs.Volume](txn, nil, TableVolumes, "id", v.SourceVolumeID)
		if err != nil {
			return err
		}
		if src == nil || src.ProjectID != v.ProjectID {
			return structs.Errorf(structs.KindNotFound, "Volume %s could not be found.", v.SourceVolumeID)
		}
		if src.Status != structs.VolumeAvailable && src.Status != structs.VolumeInUse {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Source volume status must be available or in-use, not %s", src.Status)
		}
		if v.SizeGB < src.SizeGB {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: Volume size '%d'GB cannot be smaller than original volume size %dGB. They must be >= original volume size.", v.SizeGB, src.SizeGB)
		}
	}
	return nil
}

// UpdateVolume applies one change to a volume, if its preconditions
// hold.
func (s *StateStore) UpdateVolume(index uint64, e *structs.VolumeUpdateEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	v, err := volumeForEntry(txn, e.ID, e.Host, e.FromStatus)
	if err != nil {
		return err
	}
	c := v.Copy()
	if e.Status != "" {
		if !slices.Contains(structs.VolumeStatuses, e.Status) {
			return structs.Errorf(structs.KindInvalid, "unknown volume status %q", e.Status)
		}
		if !e.Reset && !structs.VolumeTransitionAllowed(v.Status, e.Status) {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s cannot go from %s to %s.", v.ID, v.Status, e.Status)
		}
		// An attached volume ends its extend in-use, never available
		// (Cinder's extend_volume_completion looks at the attachments).
		if e.Status == structs.VolumeAvailable && v.Status == structs.VolumeExtending && len(v.Attachments) > 0 && !e.Reset {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s is attached: its extend ends in-use.", v.ID)
		}
		if e.Status == structs.VolumeDeleting {
			if len(v.Attachments) > 0 {
				return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s is attached", v.ID)
			}
			if err := snapshotsBeforeVolumeDelete(txn, index, v.ID, e); err != nil {
				return err
			}
		}
		c.Status = e.Status
	}
	if err := applyUploadAndType(c, e); err != nil {
		return err
	}
	if e.SizeGB != 0 && e.SizeGB != v.SizeGB {
		if e.SizeGB < v.SizeGB {
			return structs.Errorf(structs.KindInvalid, "Invalid input received: New size for extend must be greater than current size. (current: %d, extended: %d).", v.SizeGB, e.SizeGB)
		}
		if err := checkVolumeQuota(txn, v.ProjectID, 0, 0, int64(e.SizeGB-v.SizeGB), e.SizeGB); err != nil {
			return err
		}
		c.SizeGB = e.SizeGB
	}
	setString(&c.Name, e.Name)
	setString(&c.Description, e.Description)
	setString(&c.ProviderLocation, e.ProviderLocation)
	setString(&c.ErrorMessage, e.ErrorMessage)
	if e.Bootable != nil {
		c.Bootable = *e.Bootable
	}
	c.Metadata = mergeMetadata(c.Metadata, e.Metadata, e.ReplaceMetadata, e.DeleteMetadata)
	if e.UpdatedAt != 0 {
		c.UpdatedAt = e.UpdatedAt
	}
	c.ModifyIndex = index
	if err := txn.Insert(TableVolumes, c); err != nil {
		return fmt.Errorf("update volume %s: %w", v.ID, err)
	}
	// A volume made for a server's build moves the build on once its
	// storage host made it or failed to (boot_volume_build.go).
	if c.MadeFor != nil && v.Status == structs.VolumeCreating && c.Status != structs.VolumeCreating {
		b := &volumeBuild{s: s, txn: txn, index: index, at: c.UpdatedAt}
		if err := b.volumeReported(c); err != nil {
			return err
		}
		return commitAt(txn, index, buildTables...)
	}
	if e.Cascade {
		return commitAt(txn, index, TableVolumes, TableVolumeSnapshots)
	}
	return commitAt(txn, index, TableVolumes)
}

// DeleteVolume removes a volume's record, if its preconditions hold.
func (s *StateStore) DeleteVolume(index uint64, e *structs.VolumeDeleteEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	v, err := volumeForEntry(txn, e.ID, e.Host, e.FromStatus)
	if err != nil {
		return err
	}
	if len(v.Attachments) > 0 {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s is attached", v.ID)
	}
	if err := checkNoSnapshots(txn, v.ID); err != nil {
		return err
	}
	if err := txn.Delete(TableVolumes, v); err != nil {
		return fmt.Errorf("delete volume %s: %w", v.ID, err)
	}
	return commitAt(txn, index, TableVolumes)
}

// volumeForEntry finds the volume an entry names and checks the
// entry's preconditions: the storage host it comes from and the
// statuses it starts from.
func volumeForEntry(txn *memdb.Txn, id, host string, from []string) (*structs.Volume, error) {
	v, err := first[*structs.Volume](txn, nil, TableVolumes, "id", id)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, structs.Errorf(structs.KindNotFound, "Volume %s could not be found.", id)
	}
	if host != "" && v.Host != host {
		return nil, structs.Errorf(structs.KindConflict, "volume %s is not on host %s", id, host)
	}
	if len(from) > 0 && !slices.Contains(from, v.Status) {
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: Volume status must be %s, not %s.", statusList(from), v.Status)
	}
	return v, nil
}

// statusList renders statuses as Cinder's messages do: "available or
// error".
func statusList(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	out := s[0]
	for _, x := range s[1 : len(s)-1] {
		out += ", " + x
	}
	return out + " or " + s[len(s)-1]
}

// checkNoSnapshots refuses to delete a volume that still has snapshots,
// as Cinder does.
func checkNoSnapshots(txn *memdb.Txn, volumeID string) error {
	snaps, err := list[*structs.VolumeSnapshot](txn, nil, TableVolumeSnapshots, "volume", volumeID)
	if err != nil {
		return err
	}
	if len(snaps) > 0 {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s still has %d dependent snapshots.", volumeID, len(snaps))
	}
	return nil
}

func setString(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

// mergeMetadata applies a metadata change: replace, or merge set, then
// drop the keys of del.
func mergeMetadata(cur, set map[string]string, replace bool, del []string) map[string]string {
	if !replace && len(set) == 0 && len(del) == 0 {
		return cur
	}
	out := make(map[string]string, len(cur)+len(set))
	if !replace {
		for k, v := range cur {
			out[k] = v
		}
	}
	for k, v := range set {
		out[k] = v
	}
	for _, k := range del {
		delete(out, k)
	}
	return out
}

// Volume returns one volume, or nil.
func (s *StateStore) Volume(ws memdb.WatchSet, id string) (*structs.Volume, error) {
	return first[*structs.Volume](s.ReadTxn(), ws, TableVolumes, "id", id)
}

// Volumes lists a project's volumes, or every volume for "".
func (s *StateStore) Volumes(ws memdb.WatchSet, projectID string) ([]*structs.Volume, error) {
	if projectID == "" {
		return list[*structs.Volume](s.ReadTxn(), ws, TableVolumes)
	}
	return list[*structs.Volume](s.ReadTxn(), ws, TableVolumes, "project", projectID)
}

// VolumesByHost lists the volumes a storage host keeps.
func (s *StateStore) VolumesByHost(ws memdb.WatchSet, hostID string) ([]*structs.Volume, error) {
	return list[*structs.Volume](s.ReadTxn(), ws, TableVolumes, "host", hostID)
}
