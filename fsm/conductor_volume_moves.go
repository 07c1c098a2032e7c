package fsm

import (
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// Volumes follow their instance when it moves (resize, cold and live
// migration, evacuation, shelve and unshelve): the attachments stay, and
// each volume is reached from the instance's new host as any attachment
// is, as its file on the volume's storage host, else as the storage
// host's NBD export of the attachment. A move's destination lists them
// on its allocation (Allocation.Volumes) and spawns the instance with
// them, always through the storage host's NBD export of the
// attachment, on the storage host too: the export may still serve the
// move's other host (a revert's source), and QEMU's image locks forbid
// two processes opening the file. While the instance moves, an
// attachment's MoveHost names the other host that uses it, so the
// storage host serves its export from the release of the destination
// to spawn (not before: a source on the storage host holds the file
// until it stops) until the move is over; the attachment's Host follows
// the instance when the move commits (back to the source as a revert
// starts, so that the export has ended before a source on the storage
// host opens the file again; none while the instance is shelved
// offloaded), and Exported records that it is reached through the
// export there.

// hostLeavingOps are the operations that take an instance off its host
// (or may).
var hostLeavingOps = map[string]bool{structs.OpResize: true, structs.OpMigrate: true, structs.OpLiveMigrate: true,
	structs.OpEvacuate: true, structs.OpShelve: true, structs.OpShelveOffload: true}

// volumeMoveKinds are the tasks whose end settles where the instance's
// attachments are.
var volumeMoveKinds = map[string]bool{structs.TaskKindResize: true, structs.TaskKindMigrate: true,
	structs.TaskKindLiveMigrate: true, structs.TaskKindEvacuate: true, structs.TaskKindUnshelve: true,
	structs.TaskKindRevert: true, structs.TaskKindOffload: true}

// instanceVolumes are the volumes the Compute API attached to inst (not
// the Block Storage API's external records), as stored.
func (t *taskTxn) instanceVolumes(inst *structs.Instance) ([]*structs.Volume, error) {
	vols, err := list[*structs.Volume](t.txn, nil, TableVolumes, "project", inst.ProjectID)
	if err != nil {
		return nil, err
	}
	var out []*structs.Volume
	for _, v := range vols {
		if att := v.AttachmentOf(inst.ID); att != nil && !att.External {
			out = append(out, v)
		}
	}
	return out, nil
}

// checkVolumesFollow refuses to move an instance whose volumes could not
// follow it (409, as for any state that forbids the operation): a
// volume whose storage host serves no NBD exports (storage
// nbd_address), which only its own instances can reach, and, for a
// live migration, which carries the guest's disks as they are, a volume
// attached as its file. The volume an instance boots from follows it as
// any other: the destination boots from its export or RBD image.
func (t *taskTxn) checkVolumesFollow(inst *structs.Instance, op string) error {
	if !hostLeavingOps[op] {
		return nil
	}
	vols, err := t.instanceVolumes(inst)
	if err != nil || len(vols) == 0 {
		return err
	}
	for _, v := range vols {
		if v.Backend == structs.VolumeBackendRBD {
			continue // every host reaches it through Ceph
		}
		// A live migration carries the guest's disks as they are: a
		// volume's file on its storage host has no export to go on with.
		if att := v.AttachmentOf(inst.ID); op == structs.OpLiveMigrate && att.Host == v.Host && !att.Exported {
			return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s: volume %s is attached as a file of its storage host, which a live migration cannot carry; migrate it cold", op, inst.ID, v.ID)
		}
	}
	for _, v := range vols {
		if v.Backend == structs.VolumeBackendRBD {
			continue
		}
		sh, err := t.host(v.Host)
		if err != nil {
			return err
		}
		if sh == nil || sh.Attributes[structs.HostAttrStorageNBDAddress] == "" {
			return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s: volume %s is kept on a host that serves no NBD exports (storage nbd_address), so it cannot follow the instance to another host", op, inst.ID, v.ID)
		}
	}
	return nil
}

// moveVolumes lists the volumes attached to inst for a move's
// destination, its root volume among them: each attachment's NBD export,
// on the storage host too (the export may still serve the move's other
// host, and two processes never open a volume's file at once), or RBD
// image.
func (t *taskTxn) moveVolumes(inst *structs.Instance) ([]structs.VolumeActionArg, error) {
	vols, err := t.instanceVolumes(inst)
	if err != nil || len(vols) == 0 {
		return nil, err
	}
	out := make([]structs.VolumeActionArg, 0, len(vols))
	for _, v := range vols {
		att := v.AttachmentOf(inst.ID)
		if v.Backend == structs.VolumeBackendRBD {
			// The destination opens the image through Ceph, as any host.
			out = append(out, structs.VolumeActionArg{VolumeID: v.ID, AttachmentID: att.ID, Device: att.Device, RBD: v.ProviderLocation})
			continue
		}
		sh, err := t.host(v.Host)
		if err != nil {
			return nil, err
		}
		var addr string
		if sh != nil {
			addr = sh.Attributes[structs.HostAttrStorageNBDAddress]
		}
		if addr == "" {
			return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s is kept on a host that serves no NBD exports (storage nbd_address), so it cannot follow the instance", v.ID)
		}
		out = append(out, structs.VolumeActionArg{VolumeID: v.ID, AttachmentID: att.ID, Device: att.Device,
			NBD: &structs.VolumeExport{Name: structs.VolumeExportName(v.ID, att.ID), Address: addr}})
	}
	return out, nil
}

// volumesMoving marks inst's attachments as used by the destination
// dest too, through their exports, when it is about to spawn: not
// before, since a source on the storage host holds the volume's file
// until it stops.
func (t *taskTxn) volumesMoving(inst *structs.Instance, dest string) error {
	return t.updateAttachments(inst, func(att *structs.VolumeAttachment) {
		att.MoveHost, att.MoveExported = dest, true
	})
}

// settleMovedVolumes records where inst's attachments are once a move
// task (or a shelve offload) ends: on the destination, through the
// export, when the move got there (and, for a resize or cold migration
// waiting for its confirmation, still on the source, which a revert
// starts again); back on the source alone when it failed; on no host
// when the instance is offloaded.
func (t *taskTxn) settleMovedVolumes(inst *structs.Instance, errText string) error {
	task := inst.Task
	if task == nil || !volumeMoveKinds[task.Kind] || task.Kind == structs.TaskKindRevert {
		return nil
	}
	if task.DestHostID != "" && task.DestHostID == task.SourceHostID {
		return nil // resized in place: the same guest, its disks as they were
	}
	arrived := errText == "" && task.DestHostID != "" && inst.HostID == task.DestHostID
	if arrived && task.DestHostID != task.SourceHostID && len(inst.BlockDevices) > 0 {
		// Data volumes it was created with are attachments like any
		// other now: their files' paths were the first host's (a
		// rebuild finds them on the guest, as hot-plugged ones).
		inst.BlockDevices = slices.DeleteFunc(slices.Clone(inst.BlockDevices),
			func(bd *structs.BlockDevice) bool { return bd.BootIndex != 0 })
	}
	err := t.updateAttachments(inst, func(att *structs.VolumeAttachment) {
		switch {
		case task.Kind == structs.TaskKindOffload:
			att.Host, att.Exported, att.MoveHost, att.MoveExported = "", false, "", false
		case arrived && inst.VMState == structs.VMStateResized:
			att.Host, att.Exported, att.MoveHost, att.MoveExported = inst.HostID, true, att.Host, att.Exported
		case arrived:
			att.Host, att.Exported, att.MoveHost, att.MoveExported = inst.HostID, true, "", false
		default:
			att.MoveHost, att.MoveExported = "", false
		}
	})
	if err != nil || !arrived {
		return err
	}
	return t.rootFollows(inst)
}

// rootFollows records on inst's root volume (its block device of boot
// index 0) how its host reaches the volume now that its attachment
// moved: as the destination's spawn did (its RBD image, or its storage
// host's export of the attachment), or as its file again when a revert
// gave the attachment back to a source on the storage host. A rebuild
// or a restarted agent's spawn boots from it.
func (t *taskTxn) rootFollows(inst *structs.Instance) error {
	root := inst.RootVolume()
	if root == nil {
		return nil
	}
	v, err := first[*structs.Volume](t.txn, nil, TableVolumes, "id", root.VolumeID)
	if err != nil || v == nil {
		return err
	}
	att := v.AttachmentOf(inst.ID)
	if att == nil {
		return nil
	}
	bd := *root
	bd.Path, bd.NBD, bd.RBD = "", nil, ""
	switch {
	case v.Backend == structs.VolumeBackendRBD:
		bd.RBD = v.ProviderLocation
	case att.Exported || att.Host != v.Host:
		sh, err := t.host(v.Host)
		if err != nil {
			return err
		}
		if sh == nil || sh.Attributes[structs.HostAttrStorageNBDAddress] == "" {
			return nil // checked before the move; left as it was
		}
		bd.NBD = &structs.VolumeExport{Name: structs.VolumeExportName(v.ID, att.ID), Address: sh.Attributes[structs.HostAttrStorageNBDAddress]}
	default:
		bd.Path = v.ProviderLocation
	}
	devices := slices.Clone(inst.BlockDevices)
	for i, d := range devices {
		if d.BootIndex == 0 {
			devices[i] = &bd
		}
	}
	inst.BlockDevices = devices
	return nil
}

// volumesConfirmed ends the source's use of inst's attachments (a
// confirmed resize or cold migration).
func (t *taskTxn) volumesConfirmed(inst *structs.Instance) error {
	return t.updateAttachments(inst, func(att *structs.VolumeAttachment) {
		att.MoveHost, att.MoveExported = "", false
	})
}

// volumesReverted gives inst's attachments back to the source of the
// resize or cold migration being reverted, as the source had them, as
// soon as the revert starts: the destination is being deleted, and a
// source on the storage host must find the volume's file free of the
// export when it starts again.
func (t *taskTxn) volumesReverted(inst *structs.Instance) error {
	err := t.updateAttachments(inst, func(att *structs.VolumeAttachment) {
		if att.MoveHost == "" {
			return // resized in place, or attached since
		}
		att.Host, att.Exported, att.MoveHost, att.MoveExported = att.MoveHost, att.MoveExported, "", false
	})
	if err != nil {
		return err
	}
	return t.rootFollows(inst)
}

// updateAttachments applies fn to each of inst's attachments, storing
// the volumes it changed.
func (t *taskTxn) updateAttachments(inst *structs.Instance, fn func(att *structs.VolumeAttachment)) error {
	vols, err := t.instanceVolumes(inst)
	if err != nil {
		return err
	}
	for _, raw := range vols {
		v := raw.Copy()
		att := v.AttachmentOf(inst.ID)
		before := *att
		fn(att)
		if att.Host == before.Host && att.Exported == before.Exported && att.MoveHost == before.MoveHost && att.MoveExported == before.MoveExported {
			continue
		}
		if err := t.putVolume(v); err != nil {
			return err
		}
	}
	return nil
}
