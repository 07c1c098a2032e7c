package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Volume attach events, as Nova's instance actions name them.
const (
	evAttachVolume = "compute_attach_volume"
	evDetachVolume = "compute_detach_volume"
)

// volumeOpFrom are the vm_states a volume may be attached or detached
// in (Nova's check_instance_state for attach_volume, less the shelved
// states: a shelved instance has no host to attach on).
var volumeOpFrom = []string{vmActive, vmPaused, vmStopped}

// Attaching a volume is a task of the instance's own agent, as a power
// operation is: the op handler moves the volume to attaching (or
// detaching) and records the attachment in the same entry that asks the
// agent for the hot-plug, and the agent's report of the action both ends
// the task and settles the volume (in-use, or available again). Every
// step is in Raft, and the driver's attach and detach are idempotent, so
// a leader change or an agent restart mid-way only repeats the action.

func init() {
	// Tasks and agents' reports settle attachments, and purging an
	// instance releases its volumes.
	taskTables = append(taskTables, TableVolumes)
	allocUpdateTables = append(allocUpdateTables, TableVolumes)
	registerOp(structs.OpAttachVolume, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		return t.startAttachVolume(inst, e)
	})
	registerOp(structs.OpDetachVolume, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
		return t.startDetachVolume(inst, e)
	})
}

// volumeOf reads the volume an attach or detach names, as the
// instance's project sees it.
func (t *taskTxn) volumeOf(inst *structs.Instance, e *structs.InstanceTaskEntry) (*structs.Volume, error) {
	if e.Volume == nil || e.Volume.VolumeID == "" {
		return nil, structs.Errorf(structs.KindInvalid, "%s needs a volume", e.Op)
	}
	v, err := first[*structs.Volume](t.txn, nil, TableVolumes, "id", e.Volume.VolumeID)
	if err != nil {
		return nil, err
	}
	if v == nil || v.ProjectID != inst.ProjectID {
		return nil, structs.Errorf(structs.KindNotFound, "Volume %s could not be found.", e.Volume.VolumeID)
	}
	return v.Copy(), nil
}

func (t *taskTxn) putVolume(v *structs.Volume) error {
	v.ModifyIndex, v.UpdatedAt = t.index, t.at
	if err := t.txn.Insert(TableVolumes, v); err != nil {
		return fmt.Errorf("update volume %s: %w", v.ID, err)
	}
	return nil
}

// startAttachVolume checks the instance and the volume, reserves the
// volume for the instance (attaching, with its attachment) and asks the
// instance's agent to attach it.
func (t *taskTxn) startAttachVolume(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if err := checkState(inst, e.Op, volumeOpFrom...); err != nil {
		return err
	}
	v, err := t.volumeOf(inst, e)
	if err != nil {
		return err
	}
	if v.AttachmentOf(inst.ID) != nil {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s already attached", v.ID)
	}
	if v.Status != structs.VolumeAvailable {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be available or downloading to reserve, but the current status is %s.", v.ID, v.Status)
	}
	a, err := t.needAlloc(inst, e.Op)
	if err != nil {
		return err
	}
	if v.ProviderLocation == "" {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s has no storage yet", v.ID)
	}
	if e.Volume.AttachmentID == "" {
		return structs.Errorf(structs.KindInvalid, "attach_volume needs an attachment id")
	}
	export, err := t.volumeExport(v, a.HostID, e.Volume.AttachmentID)
	if err != nil {
		return err
	}
	device, err := attachDevice(t.txn, inst.ID, e.Volume.Device)
	if err != nil {
		return err
	}
	v.Status = structs.VolumeAttaching
	v.Attachments = append(v.Attachments, &structs.VolumeAttachment{ID: e.Volume.AttachmentID, InstanceID: inst.ID,
		Host: a.HostID, Device: device, Mode: "rw", Tag: e.Volume.Tag, DeleteOnTermination: e.Volume.DeleteOnTermination})
	if err := t.putVolume(v); err != nil {
		return err
	}
	arg := structs.VolumeActionArg{VolumeID: v.ID, AttachmentID: e.Volume.AttachmentID, Path: v.ProviderLocation, Device: device}
	switch {
	case v.Backend == structs.VolumeBackendRBD:
		arg.Path, arg.RBD = "", v.ProviderLocation
	case export != nil:
		arg.Path, arg.NBD = "", export
	}
	return t.startVolumeAction(inst, e, a, structs.ActionAttachVolume, arg, evAttachVolume)
}

// volumeExport is where an attachment of v to an instance on host
// reaches it: nil on v's own host (its file), else the storage host's
// NBD export of the attachment, which the storage agent serves once it
// sees the attachment. A storage host without an NBD server (no
// HostAttrStorageNBDAddress) serves only its own instances.
func (t *taskTxn) volumeExport(v *structs.Volume, host, attachmentID string) (*structs.VolumeExport, error) {
	// Every host reaches an RBD volume through Ceph itself.
	if v.Host == host || v.Backend == structs.VolumeBackendRBD {
		return nil, nil
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
		return nil, structs.Errorf(structs.KindInvalid, "Invalid volume: volume %s is kept on another host than the instance, and its storage host serves no NBD exports (storage nbd_address)", v.ID)
	}
	return &structs.VolumeExport{Name: structs.VolumeExportName(v.ID, attachmentID), Address: addr}, nil
}

// startDetachVolume moves an attached volume to detaching and asks the
// instance's agent to unplug it.
func (t *taskTxn) startDetachVolume(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	if err := checkState(inst, e.Op, volumeOpFrom...); err != nil {
		return err
	}
	v, err := t.volumeOf(inst, e)
	if err != nil {
		return err
	}
	att := v.AttachmentOf(inst.ID)
	if att == nil {
		return structs.Errorf(structs.KindNotFound, "Volume %s is not attached to the instance", v.ID)
	}
	if isRootVolume(inst, v.ID) {
		return structs.Errorf(structs.KindInvalid, "Cannot detach a root device volume")
	}
	if v.Status != structs.VolumeInUse {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach.")
	}
	a, err := t.needAlloc(inst, e.Op)
	if err != nil {
		return err
	}
	v.Status = structs.VolumeDetaching
	if err := t.putVolume(v); err != nil {
		return err
	}
	arg := structs.VolumeActionArg{VolumeID: v.ID, AttachmentID: att.ID, Path: v.ProviderLocation, Device: att.Device}
	if v.Backend == structs.VolumeBackendRBD {
		arg.Path, arg.RBD = "", v.ProviderLocation
	}
	return t.startVolumeAction(inst, e, a, structs.ActionDetachVolume, arg, evDetachVolume)
}

// startVolumeAction asks a's agent for the action and puts the instance
// in the task, without a task_state (Nova sets none for attaches).
func (t *taskTxn) startVolumeAction(inst *structs.Instance, e *structs.InstanceTaskEntry, a *structs.Allocation,
	action string, arg structs.VolumeActionArg, event string) error {
	if err := t.ask(a, action, arg.String()); err != nil {
		return err
	}
	if err := t.startEvent(inst, requestIDOf(e), event, a.HostID); err != nil {
		return err
	}
	return t.begin(inst, e, &structs.Task{Kind: structs.TaskKindPower, Step: structs.StepAgent,
		SourceHostID: a.HostID, SourceAllocID: a.ID, VolumeID: arg.VolumeID, SwapFromVolumeID: arg.FromVolumeID}, "")
}

// attachDevice is the guest device an attach records: the SCSI name
// asked for (Nova's /dev/ form), or the first SCSI name from sdb on that
// none of the instance's volumes has. Volumes sit on a SCSI bus, so a
// vdX or hdX name is a hint the driver cannot follow, as Nova's libvirt
// driver ignores it: the name recorded is the one the disk gets.
func attachDevice(txn *memdb.Txn, instanceID, asked string) (string, error) {
	if !strings.HasPrefix(strings.TrimPrefix(asked, "/dev/"), "sd") {
		asked = ""
	}
	used := map[string]bool{}
	vols, err := list[*structs.Volume](txn, nil, TableVolumes)
	if err != nil {
		return "", err
	}
	for _, v := range vols {
		if att := v.AttachmentOf(instanceID); att != nil {
			used[strings.TrimPrefix(att.Device, "/dev/")] = true
		}
	}
	if asked != "" {
		name := strings.TrimPrefix(asked, "/dev/")
		if used[name] {
			return "", structs.Errorf(structs.KindInvalid, "The supplied device path (%s) is in use.", asked)
		}
		return "/dev/" + name, nil
	}
	for c := 'b'; c <= 'z'; c++ {
		if name := "sd" + string(c); !used[name] {
			return "/dev/" + name, nil
		}
	}
	return "", structs.Errorf(structs.KindInvalid, "instance %s has no free device name left", instanceID)
}

// advanceVolume finishes an attach or detach when the agent reports
// the action carried out: the volume becomes in-use (attached) or
// available (detached), or returns to where it was when the action
// failed; the instance leaves the task either way.
func (t *taskTxn) advanceVolume(inst *structs.Instance, a *structs.Allocation, u *structs.AllocClientUpdate) error {
	task := inst.Task
	if a.ID != task.SourceAllocID || a.ActionSeq == 0 || u.ActionDoneSeq < a.ActionSeq {
		return nil
	}
	errText := u.ActionError
	inst.PowerState = u.PowerState
	inst.VMState = derivedVMState(task.PrevVMState, u)
	return t.end(inst, errText)
}

// settleVolumeTask records the outcome of inst's attach or detach task
// on its volume; other tasks have none.
func (t *taskTxn) settleVolumeTask(inst *structs.Instance, errText string) error {
	task := inst.Task
	if task.Op == structs.OpSwapVolume {
		return t.settleSwapTask(inst, errText)
	}
	if task.VolumeID == "" || (task.Op != structs.OpAttachVolume && task.Op != structs.OpDetachVolume) {
		return nil
	}
	if task.Op == structs.OpDetachVolume && errText == "" && len(inst.BlockDevices) > 0 {
		// A data volume it was created with is no longer one to attach
		// when the instance is spawned again (a rebuild).
		inst.BlockDevices = slices.DeleteFunc(slices.Clone(inst.BlockDevices),
			func(bd *structs.BlockDevice) bool { return bd.VolumeID == task.VolumeID })
	}
	v, err := first[*structs.Volume](t.txn, nil, TableVolumes, "id", task.VolumeID)
	if err != nil || v == nil {
		return err
	}
	return t.settleVolume(v.Copy(), inst.ID, task.Op, errText)
}

// settleVolume records the outcome of an attach or detach on the
// volume.
func (t *taskTxn) settleVolume(v *structs.Volume, instanceID, op, errText string) error {
	attached := op == structs.OpAttachVolume && errText == "" || op == structs.OpDetachVolume && errText != ""
	if attached {
		if att := v.AttachmentOf(instanceID); att != nil && att.AttachedAt == 0 {
			att.AttachedAt = t.at
		}
	} else {
		v.Attachments = slices.DeleteFunc(v.Attachments, func(x *structs.VolumeAttachment) bool { return x.InstanceID == instanceID })
	}
	switch {
	case len(v.Attachments) > 0:
		v.Status = structs.VolumeInUse
	default:
		v.Status = structs.VolumeAvailable
	}
	return t.putVolume(v)
}

// releaseInstanceVolumes detaches a purged instance's volumes, whose
// guest is gone with it: each becomes available again (or stays
// extending, to end its extend available), or, attached with
// delete_on_termination, is handed to its storage host to delete (its
// quota is released when the record goes).
func releaseInstanceVolumes(txn *memdb.Txn, index uint64, at int64, instanceID string) error {
	vols, err := list[*structs.Volume](txn, nil, TableVolumes)
	if err != nil {
		return err
	}
	for _, v := range vols {
		att := v.AttachmentOf(instanceID)
		if att == nil {
			if v.MadeFor != nil && v.MadeFor.InstanceID == instanceID {
				if err := settleMadeVolume(txn, index, at, v); err != nil {
					return err
				}
			}
			continue
		}
		c := v.Copy()
		c.Attachments = slices.DeleteFunc(c.Attachments, func(x *structs.VolumeAttachment) bool { return x.InstanceID == instanceID })
		switch {
		case v.Status == structs.VolumeExtending && (len(c.Attachments) > 0 || !att.DeleteOnTermination):
			// The extend goes on without the instance: its storage
			// host (no guest holds the file any more) or the agents
			// of the other instances finish it.
		case len(c.Attachments) > 0:
			c.Status = structs.VolumeInUse
		case att.DeleteOnTermination:
			c.Status = structs.VolumeDeleting
		default:
			c.Status = structs.VolumeAvailable
		}
		c.ModifyIndex, c.UpdatedAt = index, at
		if err := txn.Insert(TableVolumes, c); err != nil {
			return fmt.Errorf("release volume %s: %w", v.ID, err)
		}
	}
	return nil
}
