package server

import (
	"slices"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// cascadeDelete starts the deletion of a volume with its snapshots, as
// Cinder's cascade delete does: without force every snapshot must be
// available or error (or already deleting), else the volume is refused
// with Cinder's message. The volume and its snapshots go to deleting in
// one entry, so the storage host, which works through snapshots before
// volumes, removes them first; a host that left the cluster has the
// records removed at once.
func (e *Volume) cascadeDelete(v *structs.Volume, snaps []*structs.VolumeSnapshot, from []string, force, hostGone bool) (uint64, error) {
	var snapFrom []string
	if !force {
		snapFrom = append(slices.Clone(snapshotDeletable), structs.SnapshotDeleting)
		for _, s := range snaps {
			if !slices.Contains(snapFrom, s.Status) {
				return 0, structs.Errorf(structs.KindInvalid, "%s", deleteRefusal)
			}
		}
	}
	if !hostGone {
		// A forced delete steps outside the status machine.
		return e.srv.apply(structs.VolumeUpdateType, &structs.VolumeUpdateEntry{ID: v.ID, FromStatus: from,
			Status: structs.VolumeDeleting, Reset: force, Cascade: true, CascadeFrom: snapFrom,
			UpdatedAt: time.Now().UnixNano()})
	}
	for _, s := range snaps {
		if _, err := e.srv.apply(structs.VolumeSnapshotDeleteType, &structs.VolumeSnapshotDeleteEntry{ID: s.ID, FromStatus: snapFrom}); err != nil {
			return 0, err
		}
	}
	return e.srv.apply(structs.VolumeDeleteType, &structs.VolumeDeleteEntry{ID: v.ID, FromStatus: from})
}
