package client

import (
	"errors"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// volumeAction carries out an attach or detach action with the driver's
// hot-plug: the volume's file (on this host) becomes a disk of the
// instance, or stops being one. Both are idempotent, so an agent that
// restarts mid-action and carries it out again reports the same
// outcome: the driver keeps an attach of the same file as it is, and a
// detach of a volume already gone is done.
func (r *runner) volumeAction(action string) error {
	ctx, d, id := r.c.ctx, r.c.driver, r.alloc.InstanceID
	arg, err := structs.ParseVolumeActionArg(r.alloc.ActionArg)
	if err != nil {
		return err
	}
	va, err := optional[virt.VolumeAttacher](d, d.Capabilities().AttachVolume, "attach_volume")
	if err != nil {
		return err
	}
	if action == structs.ActionAttachVolume {
		if arg.NBD != nil {
			return r.attachExport(va, arg)
		}
		if arg.RBD != "" {
			return r.attachRBD(va, arg)
		}
		if arg.Path == "" {
			return errors.New("the volume has no file on this host")
		}
		return va.AttachVolume(ctx, id, &virt.Volume{ID: arg.VolumeID, Path: arg.Path, Device: arg.Device})
	}
	err = va.DetachVolume(ctx, id, arg.VolumeID)
	if errors.Is(err, virt.ErrVolumeNotAttached) {
		r.logger.Info("volume already detached", "volume_id", arg.VolumeID)
		return nil
	}
	return err
}

// rootVolume is the volume an instance boots from, for its spawn; nil
// when it boots from an image.
func rootVolume(inst *structs.Instance, ceph *CephAttach) *virt.Volume {
	bd := inst.RootVolume()
	if bd == nil {
		return nil
	}
	v := blockDeviceVolume(bd, ceph)
	return &v
}

// dataVolumes are the volumes an instance was created with besides its
// root volume: attached from its first boot.
func dataVolumes(inst *structs.Instance, ceph *CephAttach) []virt.Volume {
	var out []virt.Volume
	for _, bd := range inst.BlockDevices {
		if bd.BootIndex != 0 {
			out = append(out, blockDeviceVolume(bd, ceph))
		}
	}
	return out
}

// blockDeviceVolume is the driver's volume of a block device: its file
// on this host, its storage host's NBD export, or its RBD image.
func blockDeviceVolume(bd *structs.BlockDevice, ceph *CephAttach) virt.Volume {
	return argVolume(structs.VolumeActionArg{VolumeID: bd.VolumeID, Device: bd.Device, Path: bd.Path, NBD: bd.NBD, RBD: bd.RBD}, ceph)
}

// argVolume is the driver's volume of an attach's argument. An RBD
// image on a host without ceph settings gets a network source with no
// monitors, which the driver refuses with its reason.
func argVolume(arg structs.VolumeActionArg, ceph *CephAttach) virt.Volume {
	v := virt.Volume{ID: arg.VolumeID, Device: arg.Device, Path: arg.Path}
	switch {
	case arg.NBD != nil:
		v.Path, v.Network = "", nbdDisk(arg.NBD)
	case arg.RBD != "":
		v.Path, v.Network = "", rbdNetworkDisk(arg.RBD, ceph)
	}
	return v
}
