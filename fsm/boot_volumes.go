package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// An instance created with block devices (boot from volume, or data
// volumes from the first boot) has them attached in the entry that
// creates it: each volume must be available in the instance's project
// and kept on the host the instance is pinned to, and becomes in-use
// with its attachment there. The agent that spawns the instance finds
// the files in Instance.BlockDevices; deleting the instance releases
// the volumes (releaseInstanceVolumes), deleting those with
// delete_on_termination.

// attachBootVolumes attaches the block devices of a create's instances
// and reports whether it changed any volume.
func attachBootVolumes(txn *memdb.Txn, index uint64, at int64, instances []*structs.Instance) (bool, error) {
	changed := false
	for _, inst := range instances {
		for _, bd := range inst.BlockDevices {
			if bd.Source != "" {
				continue // made for it: attached once available (boot_volume_build.go)
			}
			if err := attachBootVolume(txn, index, at, inst, bd); err != nil {
				return false, err
			}
			changed = true
		}
	}
	return changed, nil
}

// attachBootVolume records one block device's attachment, filling in
// its guest device and file.
func attachBootVolume(txn *memdb.Txn, index uint64, at int64, inst *structs.Instance, bd *structs.BlockDevice) error {
	raw, err := first[*structs.Volume](txn, nil, TableVolumes, "id", bd.VolumeID)
	if err != nil {
		return err
	}
	if raw == nil || raw.ProjectID != inst.ProjectID {
		return structs.Errorf(structs.KindInvalid, "Block Device Mapping is Invalid: failed to get volume %s.", bd.VolumeID)
	}
	v := raw.Copy()
	if v.Status != structs.VolumeAvailable || len(v.Attachments) > 0 {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available or downloading to reserve, but the current status is %s.", v.ID, v.Status)
	}
	if inst.TargetHostID == "" || v.Host != inst.TargetHostID || v.ProviderLocation == "" {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s is kept on another host than instance %s; attaching across hosts is not supported yet", v.ID, inst.ID)
	}
	if bd.AttachmentID == "" {
		return structs.Errorf(structs.KindInvalid, "block device %s needs an attachment id", v.ID)
	}
	device := structs.RootVolumeDevice
	if bd.BootIndex != 0 {
		if device, err = attachDevice(txn, inst.ID, bd.Device); err != nil {
			return err
		}
	}
	bd.Device, bd.Path = device, v.ProviderLocation
	v.Status, v.MadeFor = structs.VolumeInUse, nil
	v.Attachments = append(v.Attachments, &structs.VolumeAttachment{ID: bd.AttachmentID, InstanceID: inst.ID,
		Host: v.Host, Device: device, Mode: "rw", AttachedAt: at, Tag: bd.Tag, DeleteOnTermination: bd.DeleteOnTermination})
	v.ModifyIndex, v.UpdatedAt = index, at
	if err := txn.Insert(TableVolumes, v); err != nil {
		return fmt.Errorf("attach volume %s: %w", v.ID, err)
	}
	return nil
}

// isRootVolume reports whether the volume is the instance's root disk,
// which cannot be detached.
func isRootVolume(inst *structs.Instance, volumeID string) bool {
	root := inst.RootVolume()
	return root != nil && root.VolumeID == volumeID
}
