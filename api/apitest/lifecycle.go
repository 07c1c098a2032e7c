package apitest

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// The fake's lifecycle: instance operations, instance actions,
// migrations and host drains.
//
// An operation is accepted whatever the instance's state (inject
// conflicts with Fail). Lock and unlock apply at once. Every other
// operation puts the instance in a task (Task and TaskState set, Status
// unchanged) and records an action with one open event; a move also
// records a migration. Nothing finishes by itself: tests play the servers
// with FinishAction (or UpdateInstance and UpdateAction). A drain
// disables its host and sets Drain; tests move allocations away with
// DeleteAllocation and complete it with UpdateHost.

// fakeOp is what the fake does for an action name.
type fakeOp struct {
	op        string // the operation
	action    string // the recorded action's name
	taskState string // "" for lock and unlock, which apply at once
	kind      string // the task's kind
	event     string // the action's first event
	migration string // the migration type of a move, "" for none
	params    string // the body fields it takes, space-separated
}

var fakeOps = func() map[string]fakeOp {
	ops := map[string]fakeOp{}
	add := func(name, action, task, kind, event, migration, params string) {
		ops[name] = fakeOp{op: name, action: action, taskState: task, kind: kind, event: event, migration: migration, params: params}
	}
	power := api.TaskKindPower
	add(api.OpStart, "start", "powering-on", power, "compute_start_instance", "", "")
	add(api.OpStop, "stop", "powering-off", power, "compute_stop_instance", "", "")
	add(api.ActionReboot, "reboot", "rebooting", power, "compute_reboot_instance", "", "Hard")
	add(api.OpRebootSoft, "reboot", "rebooting", power, "compute_reboot_instance", "", "")
	add(api.OpRebootHard, "reboot", "rebooting_hard", power, "compute_reboot_instance", "", "")
	add(api.OpPause, "pause", "pausing", power, "compute_pause_instance", "", "")
	add(api.OpUnpause, "unpause", "unpausing", power, "compute_unpause_instance", "", "")
	add(api.OpSuspend, "suspend", "suspending", power, "compute_suspend_instance", "", "")
	add(api.OpResume, "resume", "resuming", power, "compute_resume_instance", "", "")
	add(api.OpLock, "lock", "", "", "", "", "Reason")
	add(api.OpUnlock, "unlock", "", "", "", "", "")
	add(api.OpRescue, "rescue", "rescuing", power, "compute_rescue_instance", "", "Image")
	add(api.OpUnrescue, "unrescue", "unrescuing", power, "compute_unrescue_instance", "", "")
	add(api.OpRebuild, "rebuild", "rebuilding", power, "compute_rebuild_instance", "", "Image")
	add(api.OpResize, "resize", "resize_prep", api.TaskKindResize, "conductor_migrate_server", api.MigrationTypeResize, "Flavor")
	add(api.OpConfirmResize, "confirmResize", "resize_confirming", api.TaskKindConfirm, "compute_confirm_resize", "", "")
	add(api.OpRevertResize, "revertResize", "resize_reverting", api.TaskKindRevert, "compute_revert_resize", "", "")
	add(api.OpMigrate, "migrate", "resize_prep", api.TaskKindMigrate, "conductor_migrate_server", api.MigrationTypeMigration, "Host")
	add(api.OpLiveMigrate, "live-migration", "migrating", api.TaskKindLiveMigrate, "conductor_live_migrate_instance", api.MigrationTypeLive, "Host")
	add(api.OpEvacuate, "evacuate", "rebuilding", api.TaskKindEvacuate, "conductor_rebuild_instance", api.MigrationTypeEvacuation, "Host")
	add(api.OpShelve, "shelve", "shelving", api.TaskKindShelve, "compute_shelve_instance", "", "")
	add(api.OpShelveOffload, "shelveOffload", "shelving_offloading", api.TaskKindOffload, "compute_shelve_offload_instance", "", "")
	add(api.OpUnshelve, "unshelve", "unshelving", api.TaskKindUnshelve, "conductor_unshelve_instance", "", "Host")
	add(api.OpRestore, "restore", "restoring", power, "compute_restore_instance", "", "")
	return ops
}()

func (s *Server) instanceAction(_ http.ResponseWriter, r *http.Request) (any, error) {
	var req struct {
		Action                      string
		Hard                        bool
		Flavor, Image, Host, Reason string
	}
	if err := s.decodeBody(&req); err != nil {
		return nil, err
	}
	op, ok := fakeOps[req.Action]
	if !ok {
		return nil, apiErr(api.KindInvalid, "action "+strconv.Quote(req.Action)+" is not one of the instance operations")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"Hard", req.Hard}, {"Flavor", req.Flavor != ""}, {"Image", req.Image != ""}, {"Host", req.Host != ""}, {"Reason", req.Reason != ""}} {
		if f.set && !strings.Contains(" "+op.params+" ", " "+f.name+" ") {
			return nil, apiErr(api.KindInvalid, f.name+" does not apply to the "+req.Action+" action")
		}
	}
	if req.Action == api.OpResize && req.Flavor == "" {
		return nil, apiErr(api.KindInvalid, "the resize action needs a Flavor")
	}
	id := r.PathValue("id")
	inst := s.instances[id]
	if inst == nil {
		return nil, notFound("instance", id)
	}
	now := time.Now().UnixNano()
	index := s.bump()
	act := &api.InstanceAction{RequestID: "req-" + s.idOr(""), InstanceID: id, Action: op.action,
		StartTime: now, UpdatedAt: now, Events: []*api.InstanceActionEvent{}, CreateIndex: index, ModifyIndex: index}
	res := &api.ActionResult{RequestID: act.RequestID}
	switch op.op {
	case api.OpLock:
		inst.Locked, inst.LockedBy, inst.LockedReason = true, "admin", req.Reason
	case api.OpUnlock:
		inst.Locked, inst.LockedBy, inst.LockedReason = false, "", ""
	default:
		act.Events = append(act.Events, &api.InstanceActionEvent{Event: op.event, StartTime: now, HostID: inst.HostID})
		task := &api.Task{Kind: op.kind, Step: "agent", Op: op.op, RequestID: act.RequestID, SourceHostID: inst.HostID,
			StartedAt: now, PrevVMState: inst.VMState, PowerOn: true}
		if req.Action == api.ActionReboot && req.Hard {
			inst.TaskState, task.Op = "rebooting_hard", api.OpRebootHard
		} else {
			inst.TaskState = op.taskState
		}
		if f := s.findFlavor(req.Flavor); f != nil {
			task.NewFlavor = copyFlavor(f)
		}
		if op.migration != "" {
			task.Step = "schedule"
			m := &api.Migration{ID: index, UUID: s.idOr(""), InstanceID: id, Type: op.migration,
				Status: api.MigrationPreMigrating, SourceHostID: inst.HostID, OldFlavorID: inst.FlavorID,
				NewFlavorID: inst.FlavorID, CreatedAt: now, UpdatedAt: now, CreateIndex: index, ModifyIndex: index}
			if h := s.hosts[inst.HostID]; h != nil {
				m.SourceHost = h.Name
			}
			if h := s.findHost(req.Host); h != nil {
				m.DestHostID, m.DestHost, task.TargetHostID = h.ID, h.Name, h.ID
			}
			if task.NewFlavor != nil {
				m.NewFlavorID = task.NewFlavor.ID
			}
			s.migrations[m.ID] = m
			task.MigrationID, res.MigrationID = m.ID, m.ID
		}
		inst.Task = task
	}
	inst.UpdatedAt, inst.ModifyIndex = now, index
	s.actions[id] = append(s.actions[id], act)
	res.Instance = clone(inst)
	return res, nil
}

func (s *Server) instanceActionList(_ http.ResponseWriter, r *http.Request) (any, error) {
	return s.actionsOf(r.PathValue("id")), nil
}

func (s *Server) instanceActionInfo(_ http.ResponseWriter, r *http.Request) (any, error) {
	id, rid := r.PathValue("id"), r.PathValue("request_id")
	if a := s.findAction(id, rid); a != nil {
		return a, nil
	}
	return nil, apiErr(api.KindNotFound, "action "+strconv.Quote(rid)+" of instance "+strconv.Quote(id)+" not found")
}

func (s *Server) migrationList(_ http.ResponseWriter, r *http.Request) (any, error) {
	inst := r.URL.Query().Get("instance")
	out := []*api.Migration{}
	for _, m := range s.migrations {
		if inst == "" || m.InstanceID == inst {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (s *Server) hostDrain(_ http.ResponseWriter, r *http.Request) (any, error) {
	var req struct{ Reason string }
	if len(s.requests[len(s.requests)-1].Body) > 0 {
		if err := s.decodeBody(&req); err != nil {
			return nil, err
		}
	}
	h := s.findHost(r.PathValue("id"))
	if h == nil {
		return nil, notFound("host", r.PathValue("id"))
	}
	if req.Reason == "" {
		req.Reason = "draining"
	}
	h.Enabled, h.DisabledReason, h.ModifyIndex = false, req.Reason, s.bump()
	h.Drain = &api.DrainState{StartedAt: time.Now().UnixNano()}
	return nil, nil
}

// actionsOf returns copies of an instance's actions, newest first.
func (s *Server) actionsOf(instanceID string) []*api.InstanceAction {
	list := s.actions[instanceID]
	out := make([]*api.InstanceAction, 0, len(list))
	for i := len(list) - 1; i >= 0; i-- {
		out = append(out, clone(list[i]))
	}
	return out
}

func (s *Server) findAction(instanceID, requestID string) *api.InstanceAction {
	for _, a := range s.actions[instanceID] {
		if a.RequestID == requestID {
			return a
		}
	}
	return nil
}

// Actions returns copies of the actions of the instance with the given
// ID, newest first.
func (s *Server) Actions(instanceID string) []*api.InstanceAction {
	var out []*api.InstanceAction
	s.locked(func() { out = s.actionsOf(instanceID) })
	return out
}

// AddAction stores a copy of a as an action of a.InstanceID and returns
// another. An empty RequestID gets a generated one.
func (s *Server) AddAction(a *api.InstanceAction) *api.InstanceAction {
	var out *api.InstanceAction
	s.locked(func() {
		c := clone(a)
		if c.RequestID == "" {
			c.RequestID = "req-" + s.idOr("")
		}
		c.CreateIndex, c.ModifyIndex = s.bump(), s.index
		s.actions[c.InstanceID] = append(s.actions[c.InstanceID], c)
		out = clone(c)
	})
	return out
}

// UpdateAction applies f to a stored action and reports whether it
// exists.
func (s *Server) UpdateAction(instanceID, requestID string, f func(*api.InstanceAction)) bool {
	found := false
	s.locked(func() {
		if a := s.findAction(instanceID, requestID); a != nil {
			f(a)
			a.ModifyIndex = s.bump()
			found = true
		}
	})
	return found
}

// FinishAction ends an action as the servers would, in one change: its
// open events finish (the last one with errText as an Error when
// errText is not empty, the others with Success), and the instance leaves
// the action's task; then f, if not nil, sets the instance's new state.
// It reports whether the action exists.
func (s *Server) FinishAction(instanceID, requestID, errText string, f func(*api.Instance)) bool {
	found := false
	s.locked(func() {
		a := s.findAction(instanceID, requestID)
		if a == nil {
			return
		}
		found = true
		now := time.Now().UnixNano()
		index := s.bump()
		for i, e := range a.Events {
			if e.Result != "" {
				continue
			}
			e.FinishTime, e.Result = now, api.EventSuccess
			if errText != "" && i == len(a.Events)-1 {
				e.Result, e.Details, a.Message = api.EventError, errText, api.EventError
			}
		}
		a.UpdatedAt, a.ModifyIndex = now, index
		if inst := s.instances[instanceID]; inst != nil {
			if inst.Task != nil && inst.Task.RequestID == requestID {
				inst.Task, inst.TaskState = nil, ""
			}
			if f != nil {
				f(inst)
			}
			inst.UpdatedAt, inst.ModifyIndex = now, index
		}
	})
	return found
}

// AddMigration stores a copy of m and returns another. A zero ID gets
// the fake's next index.
func (s *Server) AddMigration(m *api.Migration) *api.Migration {
	var out *api.Migration
	s.locked(func() {
		c := clone(m)
		c.CreateIndex, c.ModifyIndex = s.bump(), s.index
		if c.ID == 0 {
			c.ID = c.CreateIndex
		}
		s.migrations[c.ID] = c
		out = clone(c)
	})
	return out
}

// Migration returns a copy of the stored migration with the given ID, or
// nil.
func (s *Server) Migration(id uint64) *api.Migration {
	var out *api.Migration
	s.locked(func() { out = clone(s.migrations[id]) })
	return out
}

// UpdateHost applies f to the stored host with the given ID and reports
// whether it exists.
func (s *Server) UpdateHost(id string, f func(*api.Host)) bool {
	found := false
	s.locked(func() {
		if h := s.hosts[id]; h != nil {
			f(h)
			h.ModifyIndex = s.bump()
			found = true
		}
	})
	return found
}

// DeleteAllocation removes an allocation, as when its instance moved or
// was deleted, and reports whether it existed.
func (s *Server) DeleteAllocation(id string) bool {
	found := false
	s.locked(func() {
		if s.allocs[id] != nil {
			delete(s.allocs, id)
			s.bump()
			found = true
		}
	})
	return found
}
