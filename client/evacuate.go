package client

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// An evacuation's destination rebuilds the instance on the disks its
// down host left on storage both share, when its driver finds them there
// (virt.SharedDiskFinder, Nova's instance_on_disk), and from the image
// otherwise. The caller's on_shared_storage (before microversion 2.14,
// Allocation.EvacuateDisk) must agree with what the driver finds, or the
// evacuation fails with Nova's InvalidSharedStorage message. A driver
// that cannot look finds nothing. An instance booted from a volume is
// rebuilt on it (its export or RBD image, which every host reaches), as
// Nova takes a volume-backed instance to be on shared storage.

// sharedDisks returns the disks an evacuation's destination builds on,
// nil to build from the image, following rule (an EvacuateDisk*).
func (r *runner) sharedDisks(rule, imageID string) ([]virt.ImportedDisk, error) {
	var found []virt.ImportedDisk
	if f, ok := r.c.driver.(virt.SharedDiskFinder); ok {
		var err error
		if found, err = f.SharedDisks(r.c.ctx, r.alloc.InstanceID, imageID); err != nil {
			return nil, fmt.Errorf("look for the instance's disks on shared storage: %w", err)
		}
	}
	onDisk := len(found) > 0
	// A root volume is on shared storage (its export or RBD image), as
	// Nova takes a volume-backed instance to be: the instance is
	// rebuilt on it, with its own disks found or made anew.
	volumeBacked := r.inst != nil && r.inst.RootVolume() != nil
	if (rule == structs.EvacuateDiskShared && !onDisk && !volumeBacked) || (rule == structs.EvacuateDiskImage && onDisk) {
		r.logger.Error("the instance's disks are not where the evacuation's caller said", "on_shared_storage", rule == structs.EvacuateDiskShared, "found", onDisk)
		return nil, errInvalidSharedStorage{}
	}
	if onDisk {
		r.logger.Info("disk on shared storage, evacuating using existing disk", "disks", len(found))
		return found, nil
	}
	if volumeBacked {
		r.logger.Info("evacuating onto the root volume", "volume_id", r.inst.RootVolume().VolumeID)
		return nil, nil
	}
	r.logger.Info("disk not on shared storage, evacuating from image", "image_id", imageID)
	return nil, nil
}

// errInvalidSharedStorage is Nova's InvalidSharedStorage: its message is
// the fault the servers record, word for word.
type errInvalidSharedStorage struct{}

func (errInvalidSharedStorage) Error() string { return structs.InvalidSharedStorageMessage }
