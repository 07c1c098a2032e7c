package client

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// A move's destination (resize, cold migration, evacuation, unshelve)
// spawns the instance with the volumes attached to it, as the servers
// list them on its allocation (Allocation.Volumes): the root volume of
// an instance booted from a volume, and a volume's file, are part of
// the spawn's spec (spawnDriver waits for a root's export); a storage host's NBD export of the
// attachment (what the servers list for a move, on the storage host
// too), which the storage agent starts serving when it sees the
// destination released, is hot-plugged once the instance is defined,
// with attachExport's patience, rather than named in the spawn, whose
// QEMU would fail to start if the export were not served yet.

// movedVolumes splits the allocation's volumes into the root volume
// (nil when the allocation does not list it), the files the spawn
// attaches and the exports attached after it. The root volume is part
// of the spawn however it is reached: the guest boots from it. ok is
// false when the allocation lists none (not a move's destination, or
// older servers): the spawn attaches the instance's creation-time
// volumes.
func movedVolumes(a *structs.Allocation, inst *structs.Instance, ceph *CephAttach) (root *virt.Volume, files []virt.Volume, exports []structs.VolumeActionArg, ok bool) {
	if a.Volumes == nil {
		return nil, nil, nil, false
	}
	rootID := ""
	if bd := inst.RootVolume(); bd != nil {
		rootID = bd.VolumeID
	}
	for _, v := range a.Volumes {
		switch {
		case v.VolumeID == rootID:
			rv := argVolume(v, ceph)
			root = &rv
		case v.NBD != nil || v.RBD != "":
			// Network volumes are hot-plugged once the instance is
			// defined (an RBD image through this host's Ceph settings).
			exports = append(exports, v)
		default:
			files = append(files, virt.Volume{ID: v.VolumeID, Path: v.Path, Device: v.Device})
		}
	}
	return root, files, exports, true
}

// attachMovedExports hot-plugs the exports of a move's destination into
// the instance it just spawned. Attaching is idempotent, so a spawn
// resumed after a restart attaches them again without harm.
func (r *runner) attachMovedExports() error {
	_, _, exports, _ := movedVolumes(r.alloc, r.inst, r.c.cfg.Ceph)
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
