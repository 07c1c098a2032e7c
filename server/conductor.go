package server

import (
	"time"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// lifecycleInterval is how often the leader looks for lifecycle work
// that time or a failure triggers; lifecycleRetry is how long it leaves
// an instance alone after an operation on it was refused.
const (
	lifecycleInterval = 500 * time.Millisecond
	lifecycleRetry    = 10 * time.Second
)

// lifecycle is the conductor's periodic pass on the leader: the part of
// Nova's nova-conductor role that no request starts, whose tasks (state
// machines stepped by FSM entries) are fsm/conductor*.go. It does what no
// agent report or plan triggers. Everything it does is an
// ordinary operation committed through Raft, decided from state alone,
// so a new leader simply takes over where this one stopped:
//   - confirm resizes whose confirm window passed;
//   - offload instances shelved for longer than the offload time;
//   - reclaim soft-deleted instances whose interval passed;
//   - fail moves whose destination (or source) host went down;
//   - drain hosts: move every instance off them.
func (s *Server) lifecycle(stopCh chan struct{}) {
	tick := time.NewTicker(lifecycleInterval)
	defer tick.Stop()
	refused := map[string]time.Time{}
	for {
		select {
		case <-stopCh:
			return
		case <-tick.C:
		}
		if err := s.lifecycleOnce(time.Now(), refused); err != nil {
			s.logger.Warn("lifecycle pass failed", "error", err)
		}
	}
}

// lifecycleOnce does one pass. refused remembers when an operation on
// an instance was last refused, so a drain whose migrations find no host
// retries every lifecycleRetry rather than every pass.
func (s *Server) lifecycleOnce(now time.Time, refused map[string]time.Time) error {
	for id, at := range refused {
		if now.Sub(at) >= lifecycleRetry {
			delete(refused, id)
		}
	}
	run := func(id, op, reason string) {
		if _, ok := refused[id]; ok {
			return
		}
		var err error
		if op == structs.OpForceDelete {
			err = s.reclaim(id)
		} else {
			err = s.systemTask(id, op, reason)
		}
		if err != nil && !s.isShuttingDown() {
			refused[id] = now
			s.logger.Warn("lifecycle operation refused", "instance", id, "op", op, "error", err)
		}
	}
	state := s.fsm.State()
	insts, err := state.Instances(nil)
	if err != nil {
		return err
	}
	for _, inst := range insts {
		if op, reason := s.dueOperation(state, inst, now); op != "" {
			run(inst.ID, op, reason)
		}
	}
	return s.drainHosts(state, insts, now, run)
}

// dueOperation is what time or a dead host asks of an instance, if
// anything.
func (s *Server) dueOperation(state *fsm.StateStore, inst *structs.Instance, now time.Time) (op, reason string) {
	cfg := s.config
	age := func(at int64) time.Duration { return now.Sub(time.Unix(0, at)) }
	switch {
	case inst.Task != nil:
		return s.stuckTask(state, inst)
	case inst.TaskState != "":
		return "", ""
	case inst.VMState == structs.VMStateResized && inst.Resize != nil && cfg.ResizeConfirmWindow > 0 && age(inst.Resize.FinishedAt) >= cfg.ResizeConfirmWindow:
		return structs.OpAutoConfirm, ""
	case inst.VMState == structs.VMStateShelved && cfg.ShelvedOffloadTime > 0 && age(inst.ShelvedAt) >= cfg.ShelvedOffloadTime:
		return structs.OpShelveOffload, ""
	case inst.VMState == structs.VMStateSoftDeleted && cfg.ReclaimInstanceInterval > 0 && age(inst.DeletedAt) >= cfg.ReclaimInstanceInterval:
		return structs.OpForceDelete, ""
	}
	return "", ""
}

// stuckTask fails a move that waits on a host that is down: its agent
// cannot report, so the move would wait forever.
func (s *Server) stuckTask(state *fsm.StateStore, inst *structs.Instance) (op, reason string) {
	t := inst.Task
	var waitOn string
	switch {
	case t.Kind == structs.TaskKindPower || t.Kind == structs.TaskKindShelve || t.Kind == structs.TaskKindOffload || t.Kind == structs.TaskKindRevert:
		return "", "" // they finish when the host is back (or the instance is deleted)
	case t.Step == structs.StepSourceStop || t.Step == structs.StepSourceSend:
		waitOn = t.SourceHostID
		if t.DestHostID != "" {
			if h, _ := state.HostByID(nil, t.DestHostID); h == nil || !h.Up() {
				waitOn = t.DestHostID
			}
		}
	case t.Step == structs.StepDestSpawn:
		waitOn = t.DestHostID
	default:
		return "", ""
	}
	h, err := state.HostByID(nil, waitOn)
	if err != nil || (h != nil && h.Up()) {
		return "", ""
	}
	return structs.OpAbortMigration, "host " + waitOn + " went down during the " + t.Kind
}

// reclaim deletes a soft-deleted instance for good.
func (s *Server) reclaim(id string) error {
	var reply structs.GenericResponse
	return (&Instance{srv: s}).Delete(&structs.InstanceDeleteRequest{InstanceIDs: []string{id}, Force: true, Admin: true}, &reply)
}

// drainHosts moves instances off draining hosts, one operation per
// instance per pass, and marks a drain complete when nothing is left.
func (s *Server) drainHosts(state *fsm.StateStore, insts []*structs.Instance, now time.Time, run func(id, op, reason string)) error {
	hosts, err := state.Hosts(nil)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		if h.Drain == nil || h.Drain.Complete {
			continue
		}
		allocs, err := state.AllocationsByHost(nil, h.ID)
		if err != nil {
			return err
		}
		if len(allocs) == 0 {
			d := *h.Drain
			d.Complete, d.CompletedAt = true, now.UnixNano()
			if _, err := s.apply(structs.HostEnabledUpdateType, &structs.HostEnabledUpdateEntry{
				HostID: h.ID, Enabled: false, Reason: h.DisabledReason, Drain: &d,
			}); err != nil {
				return err
			}
			s.logger.Info("host drained", "host", h.Name)
			continue
		}
		for _, inst := range insts {
			if op := drainOperation(h, inst); op != "" {
				run(inst.ID, op, "")
			}
		}
	}
	return nil
}

// drainOperation is what moves inst off (or lets go of) draining host h.
func drainOperation(h *structs.Host, inst *structs.Instance) string {
	if !inst.Stable() {
		return ""
	}
	if inst.VMState == structs.VMStateResized && inst.Resize != nil && (inst.Resize.SourceHostID == h.ID || inst.HostID == h.ID) {
		return structs.OpAutoConfirm // a finished move off (or onto) the host: keep the destination
	}
	if inst.HostID != h.ID {
		return ""
	}
	switch inst.VMState {
	case structs.VMStateActive, structs.VMStatePaused:
		if h.HasCapability(structs.HostCapabilityLiveMigrate) {
			return structs.OpLiveMigrate
		}
		if inst.VMState == structs.VMStateActive {
			return structs.OpMigrate
		}
	case structs.VMStateStopped:
		return structs.OpMigrate
	case structs.VMStateShelved:
		return structs.OpShelveOffload
	}
	return ""
}
