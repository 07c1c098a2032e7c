package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// The volumes a server create makes (block devices with a Source) are
// created by the create's own entry, each MadeFor its instance, and the
// instance waits in BUILD (Instance.VolumeBuild) without an evaluation.
// The storage hosts' reports are entries: the one that leaves the last
// volume available attaches the volumes and commits the instance's
// evaluation, the one that leaves a volume in error ends the build as
// Nova's build abort does (ERROR with its fault, the volumes released,
// those with delete_on_termination deleted). The leader's
// VolumeBuildTimeoutType entry ends a wait that lasts too long. Nothing
// of the wait lives outside the state, so no agent crash or leader
// change loses it.

func init() {
	registerApply(structs.VolumeBuildTimeoutType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.VolumeBuildTimeoutEntry
		if err := decodeBody(structs.VolumeBuildTimeoutType, body, &e); err != nil {
			return err
		}
		return s.TimeOutVolumeBuilds(index, &e)
	})
}

// buildTables are the tables a change to a volume build may write.
var buildTables = []string{TableVolumes, TableInstances, TableEvals, TableInstanceActions}

// volumeBuild is one entry's view of the builds it changes.
type volumeBuild struct {
	s     *StateStore
	txn   *memdb.Txn
	index uint64
	at    int64
}

// createBuildVolumes creates a create entry's volumes, each made for
// one of its instances that waits for it, and reports whether it
// created any.
func createBuildVolumes(txn *memdb.Txn, index uint64, e *structs.InstanceCreateEntry) (bool, error) {
	waiting := map[string]bool{}
	for _, inst := range e.Instances {
		waiting[inst.ID] = inst.VolumeBuild != nil
	}
	for _, v := range e.Volumes {
		if v.MadeFor == nil || !waiting[v.MadeFor.InstanceID] {
			return false, structs.Errorf(structs.KindInvalid, "volume %s is not made for an instance of the create", v.ID)
		}
		if err := createVolumeTxn(txn, index, v); err != nil {
			return false, err
		}
	}
	return len(e.Volumes) > 0, nil
}

// startBuilds settles the builds a create entry starts: a volume no
// storage host could take is in error from the start.
func (b *volumeBuild) startBuilds(instances []*structs.Instance) error {
	for _, inst := range instances {
		if inst.VolumeBuild == nil {
			continue
		}
		stored, err := first[*structs.Instance](b.txn, nil, TableInstances, "id", inst.ID)
		if err != nil {
			return err
		}
		if err := b.advance(stored); err != nil {
			return err
		}
	}
	return nil
}

// volumeReported moves the build a volume was made for on, after its
// storage host's report took it out of creating.
func (b *volumeBuild) volumeReported(v *structs.Volume) error {
	inst, err := first[*structs.Instance](b.txn, nil, TableInstances, "id", v.MadeFor.InstanceID)
	if err != nil {
		return err
	}
	if inst == nil || inst.VolumeBuild == nil {
		// The build ended (failed or deleted) while the volume was made.
		return settleMadeVolume(b.txn, b.index, b.at, v)
	}
	return b.advance(inst)
}

// advance releases inst once every volume made for it is available,
// or ends its build when one is not going to be.
func (b *volumeBuild) advance(inst *structs.Instance) error {
	waiting := false
	for _, bd := range inst.BlockDevices {
		if bd.Source == "" {
			continue
		}
		v, err := first[*structs.Volume](b.txn, nil, TableVolumes, "id", bd.VolumeID)
		if err != nil {
			return err
		}
		switch {
		case v == nil:
			return b.fail(inst, structs.VolumeNotCreatedMessage(bd.VolumeID, b.waited(inst), "deleted"))
		case v.Status == structs.VolumeCreating:
			waiting = true
		case v.Status != structs.VolumeAvailable:
			return b.fail(inst, structs.VolumeNotCreatedMessage(v.ID, b.waited(inst), v.Status))
		}
	}
	if waiting {
		return nil
	}
	return b.release(inst)
}

// waited is how long inst's build has waited, in whole seconds.
func (b *volumeBuild) waited(inst *structs.Instance) int64 {
	return max(b.at-inst.VolumeBuild.StartedAt, 0) / 1e9
}

// release attaches the volumes made for inst and hands it to the
// scheduler with its evaluation.
func (b *volumeBuild) release(inst *structs.Instance) error {
	c := inst.Copy()
	for _, bd := range c.BlockDevices {
		if bd.Source == "" || bd.Path != "" {
			continue
		}
		if err := attachBootVolume(b.txn, b.index, b.at, c, bd); err != nil {
			return b.fail(inst, structs.Message(err))
		}
	}
	ev := c.VolumeBuild.Eval.Copy()
	c.VolumeBuild, c.TaskState = nil, structs.TaskScheduling
	c.UpdatedAt, c.ModifyIndex = b.at, b.index
	if err := replaceInstance(b.txn, inst, c); err != nil {
		return err
	}
	if ev == nil {
		return nil
	}
	internEval(ev)
	ev.CreateIndex, ev.ModifyIndex = b.index, b.index
	if err := b.txn.Insert(TableEvals, ev); err != nil {
		return fmt.Errorf("insert eval %s: %w", ev.ID, err)
	}
	b.s.announceEvals(b.txn, ev)
	return nil
}

// fail ends inst's build as Nova's build abort does: the create action
// fails, the instance goes to ERROR with the fault, and its volumes are
// released (_cleanup_volumes): detached, those with
// delete_on_termination deleted (a volume still being made is deleted
// once its storage host reports it).
func (b *volumeBuild) fail(inst *structs.Instance, reason string) error {
	msg := structs.BuildAbortedMessage(inst.ID, reason)
	t := &taskTxn{txn: b.txn, index: b.index, at: b.at, hb: newHostBatch(), store: b.s}
	if err := finishCreate(t, inst, msg); err != nil {
		return err
	}
	c := inst.Copy()
	c.VMState, c.TaskState, c.PowerState = structs.VMStateError, "", structs.PowerNoState
	c.Fault = &structs.Fault{Code: 500, Message: msg, CreatedAt: b.at}
	c.VolumeBuild, c.BlockDevices = nil, nil
	c.UpdatedAt, c.ModifyIndex = b.at, b.index
	if err := replaceInstance(b.txn, inst, c); err != nil {
		return err
	}
	return releaseInstanceVolumes(b.txn, b.index, b.at, inst.ID)
}

// settleMadeVolume ends a volume's tie to a build that ended: deleted
// when its mapping said delete_on_termination, left to the project
// otherwise. A volume still being made keeps the tie until its storage
// host reports it.
func settleMadeVolume(txn *memdb.Txn, index uint64, at int64, v *structs.Volume) error {
	if v.MadeFor == nil || v.Status == structs.VolumeCreating {
		return nil
	}
	c := v.Copy()
	deleteIt := c.MadeFor.DeleteOnTermination && len(c.Attachments) == 0 &&
		(c.Status == structs.VolumeAvailable || c.Status == structs.VolumeError)
	c.MadeFor = nil
	if deleteIt {
		c.Status = structs.VolumeDeleting
	}
	c.ModifyIndex, c.UpdatedAt = index, at
	if err := txn.Insert(TableVolumes, c); err != nil {
		return fmt.Errorf("settle volume %s: %w", v.ID, err)
	}
	return nil
}

// TimeOutVolumeBuilds ends the builds of e's instances that still wait
// for a volume Limit after they started.
func (s *StateStore) TimeOutVolumeBuilds(index uint64, e *structs.VolumeBuildTimeoutEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	b := &volumeBuild{s: s, txn: txn, index: index, at: e.At}
	for _, id := range e.InstanceIDs {
		inst, err := first[*structs.Instance](txn, nil, TableInstances, "id", id)
		if err != nil {
			return err
		}
		if inst == nil || inst.VolumeBuild == nil || e.At-inst.VolumeBuild.StartedAt < e.Limit {
			continue
		}
		if err := b.timeOut(inst); err != nil {
			return err
		}
	}
	return commitAt(txn, index, buildTables...)
}

// timeOut fails inst's build with the first volume not yet available.
func (b *volumeBuild) timeOut(inst *structs.Instance) error {
	for _, bd := range inst.BlockDevices {
		if bd.Source == "" {
			continue
		}
		v, err := first[*structs.Volume](b.txn, nil, TableVolumes, "id", bd.VolumeID)
		if err != nil {
			return err
		}
		status := "deleted"
		if v != nil {
			status = v.Status
		}
		if status != structs.VolumeAvailable {
			return b.fail(inst, structs.VolumeNotCreatedMessage(bd.VolumeID, b.waited(inst), status))
		}
	}
	return b.release(inst)
}

// VolumeBuilds lists the instances waiting for their volumes, for the
// leader's timeout; it reads the volumes, which are far fewer than the
// instances, and each waiting instance has one made for it.
func (s *StateStore) VolumeBuilds(ws memdb.WatchSet) ([]*structs.Instance, error) {
	txn := s.ReadTxn()
	vols, err := list[*structs.Volume](txn, ws, TableVolumes)
	if err != nil {
		return nil, err
	}
	var out []*structs.Instance
	seen := map[string]bool{}
	for _, v := range vols {
		if v.MadeFor == nil || seen[v.MadeFor.InstanceID] {
			continue
		}
		seen[v.MadeFor.InstanceID] = true
		inst, err := first[*structs.Instance](txn, ws, TableInstances, "id", v.MadeFor.InstanceID)
		if err != nil {
			return nil, err
		}
		if inst != nil && inst.VolumeBuild != nil {
			out = append(out, inst)
		}
	}
	return out, nil
}
