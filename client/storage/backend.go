package storage

import (
	"context"

	"github.com/stratus-cloud/stratus/structs"
)

// Source is what a new volume is made from: nothing (an empty volume),
// an image file from the image cache, a snapshot or another volume of
// the same backend.
type Source struct {
	ImagePath  string
	SnapshotID string
	VolumeID   string
}

// Backend keeps volumes and their snapshots. Every method is idempotent:
// the agent calls it again after a restart or a lost report, and a call
// that finds its work done succeeds.
type Backend interface {
	// CreateVolume makes v's storage from src at v.SizeGB and returns
	// where it is (its provider location).
	CreateVolume(ctx context.Context, v *structs.Volume, src Source) (string, error)
	// ExtendVolume grows v's storage to v.SizeGB.
	ExtendVolume(ctx context.Context, v *structs.Volume) error
	// DeleteVolume removes the storage of volume id, if this backend
	// made it; what it did not make it leaves alone.
	DeleteVolume(ctx context.Context, id string) error
	// CreateSnapshot copies volume snap.VolumeID as it is now and
	// returns where the copy is.
	CreateSnapshot(ctx context.Context, snap *structs.VolumeSnapshot) (string, error)
	// DeleteSnapshot removes a snapshot's copy, if this backend made it.
	DeleteSnapshot(ctx context.Context, id string) error
	// CapacityGB is the pool's size.
	CapacityGB() (int64, error)
}
