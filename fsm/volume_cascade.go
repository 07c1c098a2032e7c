package fsm

import (
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// snapshotsBeforeVolumeDelete is the snapshots' part of a volume going
// to deleting: without Cascade a volume with snapshots is refused, as
// Cinder refuses it; with Cascade every snapshot of the volume goes to
// deleting in the same transaction (Cinder's cascade delete), so the
// storage host, which works through snapshots before volumes, removes
// them first. A snapshot outside CascadeFrom refuses the whole entry,
// with Cinder's words.
func snapshotsBeforeVolumeDelete(txn *memdb.Txn, index uint64, volumeID string, e *structs.VolumeUpdateEntry) error {
	if !e.Cascade {
		return checkNoSnapshots(txn, volumeID)
	}
	snaps, err := list[*structs.VolumeSnapshot](txn, nil, TableVolumeSnapshots, "volume", volumeID)
	if err != nil {
		return err
	}
	for _, s := range snaps {
		if len(e.CascadeFrom) > 0 && !slices.Contains(e.CascadeFrom, s.Status) {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Failed to update snapshot.")
		}
		if s.Status == structs.SnapshotDeleting {
			continue
		}
		c := s.Copy()
		c.Status, c.ModifyIndex = structs.SnapshotDeleting, index
		if e.UpdatedAt != 0 {
			c.UpdatedAt = e.UpdatedAt
		}
		if err := txn.Insert(TableVolumeSnapshots, c); err != nil {
			return fmt.Errorf("cascade snapshot %s: %w", s.ID, err)
		}
	}
	return nil
}
