package nova

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// taskFake adds the lifecycle endpoints to fakeRPC: Instance.Task (each
// operation done at once, with the servers' rules: project isolation,
// admin-only moves, locks and vm_states), Instance.Actions,
// Migration.List, and Instance.Delete with the caller's identity. The
// servers' own behaviour is tested with a real server in
// actions_real_test.go.
type taskFake struct {
	*fakeRPC
	// actions are each instance's actions, oldest first.
	actions    map[string][]*structs.InstanceAction
	migrations []*structs.Migration
}

// newActionHarness is newHarness over a taskFake.
func newActionHarness(t *testing.T) (*harness, *taskFake) {
	t.Helper()
	f := &taskFake{fakeRPC: newFakeRPC(), actions: map[string][]*structs.InstanceAction{}}
	api := New(Config{RPC: f, Verifier: testTokens()})
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", api.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &harness{t: t, rpc: f.fakeRPC, srv: srv, api: api}, f
}

// fakeOps are the vm_states each operation starts from and the one it
// leaves ("" keeps the state).
var fakeOps = map[string]struct {
	from []string
	to   string
}{
	structs.OpStart:         {[]string{"stopped"}, "active"},
	structs.OpStop:          {[]string{"active", "error", "rescued"}, "stopped"},
	structs.OpRebootSoft:    {[]string{"active"}, "active"},
	structs.OpRebootHard:    {[]string{"active", "stopped", "paused", "suspended", "error"}, "active"},
	structs.OpPause:         {[]string{"active"}, "paused"},
	structs.OpUnpause:       {[]string{"paused"}, "active"},
	structs.OpSuspend:       {[]string{"active"}, "suspended"},
	structs.OpResume:        {[]string{"suspended"}, "active"},
	structs.OpRescue:        {[]string{"active", "stopped", "error"}, "rescued"},
	structs.OpUnrescue:      {[]string{"rescued"}, "active"},
	structs.OpRebuild:       {[]string{"active", "stopped", "error"}, ""},
	structs.OpResize:        {[]string{"active", "stopped"}, "resized"},
	structs.OpMigrate:       {[]string{"active", "stopped"}, "resized"},
	structs.OpConfirmResize: {[]string{"resized"}, "active"},
	structs.OpRevertResize:  {[]string{"resized"}, "active"},
	structs.OpLiveMigrate:   {[]string{"active", "paused"}, ""},
	structs.OpEvacuate:      {[]string{"active", "stopped", "error"}, ""},
	structs.OpShelve:        {[]string{"active", "stopped", "paused", "suspended"}, "shelved_offloaded"},
	structs.OpShelveOffload: {[]string{"shelved"}, "shelved_offloaded"},
	structs.OpUnshelve:      {[]string{"shelved", "shelved_offloaded"}, "active"},
	structs.OpRestore:       {[]string{"soft-delete"}, "active"},
	structs.OpLock:          {nil, ""},
	structs.OpUnlock:        {nil, ""},
}

// RPC implements RPC.
func (f *taskFake) RPC(method string, args, reply any) error {
	switch method {
	case "Instance.Task", "Instance.Actions", "Migration.List", "Instance.Delete":
	default:
		return f.fakeRPC.RPC(method, args, reply)
	}
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{method, args})
	if err := f.fail[method]; err != nil {
		f.mu.Unlock()
		return err
	}
	f.index++
	var err error
	switch method {
	case "Instance.Task":
		err = f.task(args.(*structs.InstanceTaskRequest), reply.(*structs.InstanceTaskResponse))
	case "Instance.Actions":
		req := args.(*structs.InstanceActionListRequest)
		out := reply.(*structs.InstanceActionListResponse)
		acts := f.actions[req.InstanceID]
		for i := len(acts) - 1; i >= 0; i-- {
			if req.RequestID == "" || acts[i].RequestID == req.RequestID {
				out.Actions = append(out.Actions, acts[i].Copy())
			}
		}
	case "Migration.List":
		req := args.(*structs.MigrationListRequest)
		out := reply.(*structs.MigrationListResponse)
		for _, m := range f.migrations {
			if req.InstanceID == "" || m.InstanceID == req.InstanceID {
				out.Migrations = append(out.Migrations, m.Copy())
			}
		}
	case "Instance.Delete":
		req := args.(*structs.InstanceDeleteRequest)
		for _, id := range req.InstanceIDs {
			inst := f.instances[id]
			switch {
			case inst == nil || (!req.Admin && req.ProjectID != "" && inst.ProjectID != req.ProjectID):
				err = structs.Errorf(structs.KindNotFound, "Instance %s could not be found.", id)
			case inst.Locked && !req.Admin:
				err = structs.Errorf(structs.KindConflict, "Instance %s is locked", id)
			}
		}
	}
	f.mu.Unlock()
	if err == nil && method == "Instance.Delete" {
		return f.fakeRPC.RPC(method, args, reply)
	}
	return err
}

// addAction records an action of inst as the servers would.
func (f *taskFake) addAction(inst *structs.Instance, requestID, action, userID, hostID string, at int64, errText string) *structs.InstanceAction {
	ev := &structs.InstanceActionEvent{Event: "compute_" + action, StartTime: at, FinishTime: at + int64(time.Second),
		Result: structs.EventSuccess, HostID: hostID}
	a := &structs.InstanceAction{RequestID: requestID, InstanceID: inst.ID, Action: action, ProjectID: inst.ProjectID,
		UserID: userID, StartTime: at, UpdatedAt: at + int64(time.Second), Events: []*structs.InstanceActionEvent{ev}}
	if errText != "" {
		ev.Result, ev.Details, a.Message = structs.EventError, errText, "Error"
	}
	f.actions[inst.ID] = append(f.actions[inst.ID], a)
	return a
}

func (f *taskFake) task(req *structs.InstanceTaskRequest, out *structs.InstanceTaskResponse) error {
	inst := f.instances[req.InstanceID]
	if inst == nil || (!req.Admin && req.ProjectID != "" && inst.ProjectID != req.ProjectID) {
		return structs.Errorf(structs.KindNotFound, "Instance %s could not be found.", req.InstanceID)
	}
	switch req.Op {
	case structs.OpMigrate, structs.OpLiveMigrate, structs.OpEvacuate:
		if !req.Admin {
			return structs.Errorf(structs.KindPermission, "Policy doesn't allow %s to be performed.", req.Op)
		}
	}
	if inst.Locked && !req.Admin {
		switch {
		case req.Op == structs.OpUnlock && inst.LockedBy == "admin":
			return structs.Errorf(structs.KindPermission, "Instance %s was locked by an administrator and can only be unlocked by one.", inst.ID)
		case req.Op != structs.OpLock && req.Op != structs.OpUnlock:
			return structs.Errorf(structs.KindConflict, "Instance %s is locked", inst.ID)
		}
	}
	op, ok := fakeOps[req.Op]
	if !ok {
		return structs.Errorf(structs.KindInvalid, "unknown instance operation %q", req.Op)
	}
	if op.from != nil {
		if inst.TaskState != "" {
			return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s while it is in task_state %s", req.Op, inst.ID, inst.TaskState)
		}
		if !containsString(op.from, inst.VMState) {
			return structs.Errorf(structs.KindConflict, "Cannot '%s' instance %s while it is in vm_state %s", req.Op, inst.ID, inst.VMState)
		}
	}
	var target *structs.Host
	if req.TargetHost != "" {
		for _, h := range f.hosts {
			if h.ID == req.TargetHost || h.Name == req.TargetHost {
				target = h
			}
		}
		if target == nil {
			return structs.Errorf(structs.KindInvalid, "Compute host %s could not be found.", req.TargetHost)
		}
	}
	c := inst.Copy()
	now := time.Now().UnixNano()
	switch req.Op {
	case structs.OpLock:
		c.Locked, c.LockedReason, c.LockedBy = true, req.Reason, "owner"
		if req.Admin && req.ProjectID != inst.ProjectID {
			c.LockedBy = "admin"
		}
	case structs.OpUnlock:
		c.Locked, c.LockedReason, c.LockedBy = false, "", ""
	case structs.OpRebuild:
		if req.ImageID != "" {
			c.ImageID = req.ImageID
		}
	case structs.OpResize, structs.OpMigrate, structs.OpLiveMigrate, structs.OpEvacuate:
		fl := inst.Flavor
		if req.Op == structs.OpResize {
			if fl = f.flavors[req.FlavorID]; fl == nil {
				return structs.Errorf(structs.KindInvalid, "Flavor %s could not be found.", req.FlavorID)
			}
			if fl.ID == inst.FlavorID {
				return structs.Errorf(structs.KindInvalid, "When resizing, instances must change flavor!")
			}
		}
		types := map[string]string{structs.OpResize: structs.MigrationTypeResize, structs.OpMigrate: structs.MigrationTypeMigration,
			structs.OpLiveMigrate: structs.MigrationTypeLive, structs.OpEvacuate: structs.MigrationTypeEvacuation}
		m := &structs.Migration{ID: f.index, UUID: uuid.NewString(), InstanceID: inst.ID, ProjectID: inst.ProjectID,
			UserID: inst.UserID, Type: types[req.Op], Status: structs.MigrationFinished, SourceHostID: inst.HostID,
			OldFlavorID: inst.FlavorID, NewFlavorID: fl.ID, CreatedAt: now, UpdatedAt: now}
		if h := f.hosts[inst.HostID]; h != nil {
			m.SourceHost = h.Name
		}
		if target != nil {
			m.DestHostID, m.DestHost = target.ID, target.Name
		}
		switch req.Op {
		case structs.OpLiveMigrate:
			m.Status, c.TaskState = structs.MigrationMigrating, structs.TaskMigrating
		case structs.OpEvacuate:
			m.Status = structs.MigrationDone
		default:
			c.Resize = &structs.PendingResize{Kind: req.Op, MigrationID: m.ID, SourceHostID: inst.HostID, OldFlavor: inst.Flavor}
			c.Flavor, c.FlavorID = fl, fl.ID
		}
		f.migrations = append(f.migrations, m)
		out.MigrationID = m.ID
	case structs.OpConfirmResize, structs.OpRevertResize:
		status := structs.MigrationConfirmed
		if inst.Resize == nil {
			return structs.Errorf(structs.KindConflict, "Instance %s has no resize to confirm", inst.ID)
		}
		if req.Op == structs.OpRevertResize {
			status = structs.MigrationReverted
			c.Flavor, c.FlavorID = inst.Resize.OldFlavor, inst.Resize.OldFlavor.ID
		}
		for _, m := range f.migrations {
			if m.ID == inst.Resize.MigrationID {
				m.Status, m.UpdatedAt = status, now
			}
		}
		c.Resize = nil
	}
	if op.to != "" {
		c.VMState = op.to
	}
	c.UpdatedAt, c.ModifyIndex = now, f.index
	f.instances[c.ID] = c
	requestID := req.RequestID
	if requestID == "" {
		requestID = "req-" + uuid.NewString()
	}
	action := req.Op
	if action == structs.OpRebootSoft || action == structs.OpRebootHard {
		action = "reboot"
	}
	f.addAction(c, requestID, action, req.UserID, c.HostID, now, "")
	out.RequestID, out.Instance, out.Index = requestID, c.Copy(), f.index
	return nil
}
