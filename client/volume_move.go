package client

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// A move's destination (resize, cold migration, evacuation, unshelve)
// spawns the instance with the volumes attached to it, as the servers
// list them on its allocation (Allocation.Volumes): a volume's file is
// part of the spawn's spec; a storage host's NBD export of the
// attachment (what the servers list for a move, on the storage host
// too), which the storage agent starts serving when it sees the
// destination released, is hot-plugged once the instance is defined,
// with attachExport's patience, rather than named in the spawn, whose
// QEMU would fail to start if the export were not served yet.

// movedVolumes splits the allocation's volumes into the files the spawn
// attaches and the exports attached after it. ok is false when the
// allocation lists none (not a move's destination, or older servers):
// the spawn attaches the instance's creation-time volumes.
func movedVolumes(a *structs.Allocation) (files []virt.Volume, exports []structs.VolumeActionArg, ok bool) {
	if a.Volumes == nil {
		return nil, nil, false
	}
	for _, v := range a.Volumes {
		if v.NBD != nil || v.RBD != "" {
			// Network volumes are hot-plugged once the instance is
			// defined (an RBD image through this host's Ceph settings).
			exports = append(exports, v)
			continue
		}
		files = append(files, virt.Volume{ID: v.VolumeID, Path: v.Path, Device: v.Device})
	}
	return files, exports, true
}

// attachMovedExports hot-plugs the exports of a move's destination into
// the instance it just spawned. Attaching is idempotent, so a spawn
// resumed after a restart attaches them again without harm.
func (r *runner) attachMovedExports() error {
	_, exports, _ := movedVolumes(r.alloc)
	if len(exports) == 0 {
		return nil
	}
	d := r.c.driver
	va, err := optional[virt.VolumeAttacher](d, d.Capabilities().AttachVolume, "attach_volume")
	if err != nil {
		return err
	}
	for _, arg := range exports {
		attach := r.attachExport
		if arg.RBD != "" {
			attach = r.attachRBD
		}
		if err := attach(va, arg); err != nil {
			return fmt.Errorf("volume %s: %w", arg.VolumeID, err)
		}
	}
	return nil
}
