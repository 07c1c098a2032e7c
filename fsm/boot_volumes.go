package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// An instance created with block devices (boot from volume, or data
// volumes from the first boot) has them attached in the entry that
// creates it: each volume must be available in the instance's project
// and becomes in-use with its attachment: its file on the host the
// instance is pinned to (a storage host without an NBD server), else its
// storage host's NBD export or its RBD image. The agent that spawns the
// instance finds them in Instance.BlockDevices; deleting the instance releases
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
// its guest device and where the instance reaches the volume: its file
// when the instance is pinned to the volume's storage host, else
// through Ceph (RBD) or the storage host's NBD export of the
// attachment, which the storage agent serves from this entry on
// (Exported), so that it is there when the instance spawns wherever the
// scheduler puts it (placeBootVolumes records that host).
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
	if v.ProviderLocation == "" {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s has no storage yet", v.ID)
	}
	if bd.AttachmentID == "" {
		return structs.Errorf(structs.KindInvalid, "block device %s needs an attachment id", v.ID)
	}
	// An unpinned instance has no host yet: "" is never a storage host,
	// so its volumes are reached over the network.
	export, err := (&taskTxn{txn: txn}).volumeExport(v, inst.TargetHostID, bd.AttachmentID)
	if err != nil {
		return err
	}
	device := structs.RootVolumeDevice
	if bd.BootIndex != 0 {
		if device, err = attachDevice(txn, inst.ID, bd.Device); err != nil {
			return err
		}
	}
	bd.Device, bd.Path, bd.NBD, bd.RBD = device, "", nil, ""
	switch {
	case v.Backend == structs.VolumeBackendRBD:
		bd.RBD = v.ProviderLocation
	case export != nil:
		bd.NBD = export
	default:
		bd.Path = v.ProviderLocation
	}
	v.Status, v.MadeFor = structs.VolumeInUse, nil
	v.Attachments = append(v.Attachments, &structs.VolumeAttachment{ID: bd.AttachmentID, InstanceID: inst.ID,
		Host: inst.TargetHostID, Exported: export != nil, Device: device, Mode: "rw", AttachedAt: at, Tag: bd.Tag,
		DeleteOnTermination: bd.DeleteOnTermination})
	v.ModifyIndex, v.UpdatedAt = index, at
	if err := txn.Insert(TableVolumes, v); err != nil {
		return fmt.Errorf("attach volume %s: %w", v.ID, err)
	}
	return nil
}

// placeBootVolumes records the host an instance created with block
// devices was placed on in their attachments (placed reports whether it
// changed any), as an attach records its instance's host. A pinned
// instance's attachments named its host from the start.
func (t *taskTxn) placeBootVolumes(inst *structs.Instance, host string) (placed bool, err error) {
	if len(inst.BlockDevices) == 0 || inst.Task != nil {
		return false, nil
	}
	for _, bd := range inst.BlockDevices {
		raw, err := first[*structs.Volume](t.txn, nil, TableVolumes, "id", bd.VolumeID)
		if err != nil {
			return false, err
		}
		if raw == nil {
			continue
		}
		if att := raw.AttachmentOf(inst.ID); att == nil || att.Host == host || att.ID != bd.AttachmentID {
			continue
		}
		v := raw.Copy()
		v.AttachmentOf(inst.ID).Host = host
		if err := t.putVolume(v); err != nil {
			return false, err
		}
		placed = true
	}
	return placed, nil
}

// isRootVolume reports whether the volume is the instance's root disk,
// which cannot be detached.
func isRootVolume(inst *structs.Instance, volumeID string) bool {
	root := inst.RootVolume()
	return root != nil && root.VolumeID == volumeID
}
