package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Volumes follow their instance when it moves (resize, cold and live
// migration, evacuation, shelve and unshelve): the attachments stay, and
// each volume is reached from the instance's new host as any attachment
// is, as its file on the volume's storage host, else as the storage
// host's NBD export of the attachment. A move's destination lists them
// on its allocation (Allocation.Volumes) and spawns the instance with
// them. While the instance moves, an attachment's MoveHost names the
// other host that uses it, so the storage host serves its export from
// the placement of the destination until the move is over; the
// attachment's Host follows the instance when the move commits (back
// again on a revert, none while it is shelved offloaded).

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
// follow it (409, as for any state that forbids the operation): one it
// boots from (its root disk is the volume's file on its host), a live
// migration with volumes attached, or a volume whose storage host serves
// no NBD exports (storage nbd_address), which only its own instances can
// reach.
func (t *taskTxn) checkVolumesFollow(inst *structs.Instance, op string) error {
	if !hostLeavingOps[op] {
		return nil
	}
	vols, err := t.instanceVolumes(inst)
	if err != nil || len(vols) == 0 {
		return err
	}
	if inst.RootVolume() != nil {
		return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s: it boots from a volume, which cannot follow it to another host yet", op, inst.ID)
	}
	if op == structs.OpLiveMigrate {
		return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s while it has volumes attached: live migration with volumes is not supported yet", op, inst.ID)
	}
	for _, v := range vols {
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

// moveVolumes lists the volumes attached to inst as host reaches them,
// for a move's destination there, and marks each attachment as used by
// host too (MoveHost) so that its export is served.
func (t *taskTxn) moveVolumes(inst *structs.Instance, host string) ([]structs.VolumeActionArg, error) {
	vols, err := t.instanceVolumes(inst)
	if err != nil || len(vols) == 0 {
		return nil, err
	}
	out := make([]structs.VolumeActionArg, 0, len(vols))
	for _, raw := range vols {
		v := raw.Copy()
		att := v.AttachmentOf(inst.ID)
		if isRootVolume(inst, v.ID) {
			continue // refused before (checkVolumesFollow)
		}
		export, err := t.volumeExport(v, host, att.ID)
		if err != nil {
			return nil, err
		}
		arg := structs.VolumeActionArg{VolumeID: v.ID, AttachmentID: att.ID, Path: v.ProviderLocation, Device: att.Device}
		if export != nil {
			arg.Path, arg.NBD = "", export
		}
		out = append(out, arg)
		att.MoveHost = host
		if err := t.putVolume(v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// settleMovedVolumes records where inst's attachments are once a move
// task (or a shelve offload) ends: on the instance's host (none when it
// is offloaded or lost), and, for a resize or cold migration waiting for
// its confirmation, also on the source, which a revert starts again.
func (t *taskTxn) settleMovedVolumes(inst *structs.Instance, errText string) error {
	task := inst.Task
	if task == nil || !volumeMoveKinds[task.Kind] {
		return nil
	}
	moveHost := ""
	if errText == "" && inst.VMState == structs.VMStateResized && task.SourceHostID != inst.HostID {
		moveHost = task.SourceHostID
	}
	return t.placeVolumes(inst, inst.HostID, moveHost)
}

// placeVolumes sets the host and move host of every attachment of inst
// that differs.
func (t *taskTxn) placeVolumes(inst *structs.Instance, host, moveHost string) error {
	vols, err := t.instanceVolumes(inst)
	if err != nil {
		return err
	}
	for _, raw := range vols {
		if att := raw.AttachmentOf(inst.ID); att.Host == host && att.MoveHost == moveHost {
			continue
		}
		v := raw.Copy()
		att := v.AttachmentOf(inst.ID)
		att.Host, att.MoveHost = host, moveHost
		if err := t.putVolume(v); err != nil {
			return err
		}
	}
	return nil
}
