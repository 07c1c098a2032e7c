package api_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/api/apitest"
)

func TestPerformSendsOpAndOptions(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.AddFlavor(&api.Flavor{ID: "2", Name: "m1.small", VCPUs: 1, MemoryMB: 2048})
	srv.AddHost(&api.Host{ID: "h1", Name: "cmp-1"})
	srv.AddHost(&api.Host{ID: "h2", Name: "cmp-2"})
	inst := srv.AddInstance(&api.Instance{Name: "web", Status: "ACTIVE", VMState: "active", HostID: "h1", FlavorID: "1"})
	c := srv.Client(t)

	for _, tc := range []struct {
		op   string
		opts *api.ActionOptions
		body string
	}{
		{api.OpPause, nil, `{"Action":"pause"}`},
		{api.OpLock, &api.ActionOptions{Reason: "audit"}, `{"Action":"lock","Reason":"audit"}`},
		{api.OpRescue, &api.ActionOptions{Image: "rescue"}, `{"Action":"rescue","Image":"rescue"}`},
		{api.OpResize, &api.ActionOptions{Flavor: "m1.small"}, `{"Action":"resize","Flavor":"m1.small"}`},
		{api.OpLiveMigrate, &api.ActionOptions{Host: "cmp-2"}, `{"Action":"live-migration","Host":"cmp-2"}`},
		{api.ActionReboot, &api.ActionOptions{Hard: true}, `{"Action":"reboot","Hard":true}`},
		{api.OpConfirmResize, &api.ActionOptions{}, `{"Action":"confirmResize"}`},
	} {
		res, wm, err := c.Instances().Perform(inst.ID, tc.op, tc.opts)
		if err != nil || wm.LastIndex == 0 || res.RequestID == "" || res.Instance == nil || res.Instance.ID != inst.ID {
			t.Fatalf("%s: %+v %+v %v", tc.op, res, wm, err)
		}
		if r := srv.LastRequest(); r.Method != "POST" || r.Path != "/v1/instances/"+inst.ID+"/actions" || string(r.Body) != tc.body {
			t.Errorf("%s: sent %s %s %s", tc.op, r.Method, r.Path, r.Body)
		}
		a, _, err := c.Instances().ActionInfo(inst.ID, res.RequestID, nil)
		if err != nil || a.RequestID != res.RequestID || a.InstanceID != inst.ID {
			t.Errorf("%s: action %+v %v", tc.op, a, err)
		}
		switch tc.op {
		case api.OpLock:
			if !res.Instance.Locked || res.Instance.LockedReason != "audit" || res.Instance.Task.RequestID == res.RequestID || len(a.Events) != 0 {
				t.Errorf("lock: %+v, action %+v", res.Instance, a)
			}
		case api.OpLiveMigrate:
			m := srv.Migration(res.MigrationID)
			if res.MigrationID == 0 || m == nil || m.Type != api.MigrationTypeLive || m.DestHost != "cmp-2" || m.SourceHost != "cmp-1" {
				t.Errorf("live migration: %+v %+v", res, m)
			}
			fallthrough
		default:
			if res.Instance.Task == nil || res.Instance.Task.RequestID != res.RequestID || res.Instance.TaskState == "" ||
				len(a.Events) != 1 || !a.Running() || a.Failed() {
				t.Errorf("%s: instance %+v, action %+v", tc.op, res.Instance, a)
			}
		}
	}
	if got := srv.Instance(inst.ID); got.TaskState != "resize_confirming" || got.Task.Op != api.OpConfirmResize {
		t.Errorf("last task %q %+v", got.TaskState, got.Task)
	}

	for _, tc := range []struct {
		op   string
		opts *api.ActionOptions
	}{
		{"dance", nil}, {api.OpResize, nil}, {api.OpPause, &api.ActionOptions{Flavor: "1"}}, {api.OpStop, &api.ActionOptions{Hard: true}},
	} {
		if _, _, err := c.Instances().Perform(inst.ID, tc.op, tc.opts); !api.IsKind(err, api.KindInvalid) {
			t.Errorf("%s %+v: %v", tc.op, tc.opts, err)
		}
	}
	if _, _, err := c.Instances().Perform("nope", api.OpPause, nil); !api.IsNotFound(err) {
		t.Errorf("missing instance: %v", err)
	}
	srv.Fail("POST", "/v1/instances/"+inst.ID+"/actions", &api.Error{StatusCode: 409, Kind: api.KindConflict,
		Message: "Cannot 'pause' instance x while it is in vm_state paused"})
	if _, _, err := c.Instances().Perform(inst.ID, api.OpPause, nil); !api.IsKind(err, api.KindConflict) {
		t.Errorf("conflict: %v", err)
	}
}

func TestInstanceActionsListAndFinish(t *testing.T) {
	srv := apitest.NewServer(t)
	inst := srv.AddInstance(&api.Instance{Name: "web", Status: "ACTIVE"})
	c := srv.Client(t)
	if list, _, err := c.Instances().Actions(inst.ID, nil); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("no actions: %#v %v", list, err)
	}
	srv.AddAction(&api.InstanceAction{RequestID: "req-create", InstanceID: inst.ID, Action: "create",
		Events: []*api.InstanceActionEvent{{Event: "compute__do_build_and_run_instance", Result: api.EventSuccess}}})
	res, _, err := c.Instances().Perform(inst.ID, api.OpStop, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !srv.FinishAction(inst.ID, res.RequestID, "", func(i *api.Instance) { i.Status, i.VMState = "SHUTOFF", "stopped" }) {
		t.Fatal("no action to finish")
	}
	res2, _, _ := c.Instances().Perform(inst.ID, api.OpStart, nil)
	srv.FinishAction(inst.ID, res2.RequestID, "power on failed: disk gone", nil)

	list, qm, err := c.Instances().Actions(inst.ID, &api.QueryOptions{AllowStale: true})
	if err != nil || qm.LastIndex == 0 || srv.LastRequest().RawQuery != "stale" {
		t.Fatalf("list: %v %+v", err, qm)
	}
	var names []string
	for _, a := range list {
		names = append(names, a.Action)
	}
	if !reflect.DeepEqual(names, []string{"start", "stop", "create"}) {
		t.Errorf("newest first: %v", names)
	}
	if start := list[0]; !start.Failed() || start.Running() || start.Events[0].Details != "power on failed: disk gone" || start.Events[0].FinishTime == 0 {
		t.Errorf("failed start: %+v %+v", start, start.Events[0])
	}
	if stop := list[1]; stop.Failed() || stop.Running() || stop.Events[0].Result != api.EventSuccess {
		t.Errorf("stop: %+v", stop)
	}
	if got := srv.Instance(inst.ID); got.Task != nil || got.TaskState != "" || got.Status != "SHUTOFF" {
		t.Errorf("after the actions: %+v", got)
	}
	if _, _, err := c.Instances().ActionInfo(inst.ID, "req-nope", nil); !api.IsNotFound(err) {
		t.Errorf("missing action: %v", err)
	}
	// Actions outlive their instance.
	if _, err := c.Instances().Delete(inst.ID); err != nil {
		t.Fatal(err)
	}
	if list, _, err := c.Instances().Actions(inst.ID, nil); err != nil || len(list) != 3 {
		t.Errorf("after delete: %d %v", len(list), err)
	}
}

func TestForceDelete(t *testing.T) {
	srv := apitest.NewServer(t)
	inst := srv.AddInstance(&api.Instance{Name: "web"})
	c := srv.Client(t)
	if _, err := c.Instances().ForceDelete(inst.ID); err != nil {
		t.Fatal(err)
	}
	if r := srv.LastRequest(); r.Method != "DELETE" || r.Path != "/v1/instances/"+inst.ID || r.RawQuery != "force=true" {
		t.Errorf("sent %s %s?%s", r.Method, r.Path, r.RawQuery)
	}
}

func TestMigrationsList(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.AddMigration(&api.Migration{ID: 12, InstanceID: "i2", Type: api.MigrationTypeResize, Status: api.MigrationFinished})
	srv.AddMigration(&api.Migration{ID: 7, InstanceID: "i1", Type: api.MigrationTypeLive, Status: api.MigrationCompleted})
	c := srv.Client(t)
	all, qm, err := c.Migrations().List("", nil)
	if err != nil || len(all) != 2 || all[0].ID != 7 || all[1].ID != 12 || qm.LastIndex == 0 || srv.LastRequest().RawQuery != "" {
		t.Fatalf("all: %+v %v %q", all, err, srv.LastRequest().RawQuery)
	}
	if !all[0].Terminal() || all[1].Terminal() {
		t.Errorf("terminal: %v %v", all[0].Terminal(), all[1].Terminal())
	}
	one, _, err := c.Migrations().List("i2", &api.QueryOptions{WaitIndex: 1})
	if err != nil || len(one) != 1 || one[0].ID != 12 || srv.LastRequest().RawQuery != "instance=i2&index=1" {
		t.Errorf("of i2: %+v %v %q", one, err, srv.LastRequest().RawQuery)
	}
	none, _, err := c.Migrations().List("i9", nil)
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("of i9: %#v %v", none, err)
	}
}

func TestHostDrainAndCancel(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.AddHost(&api.Host{ID: "h1", Name: "cmp-1", Status: api.HostStatusUp, Enabled: true})
	srv.AddAllocation(&api.Allocation{ID: "a1", HostID: "h1", InstanceID: "i1"})
	srv.AddAllocation(&api.Allocation{ID: "a2", HostID: "h1", InstanceID: "i2"})
	srv.AddAllocation(&api.Allocation{ID: "a3", HostID: "h2", InstanceID: "i3"})
	c := srv.Client(t)

	wm, err := c.Hosts().Drain("cmp-1", "")
	if err != nil || wm.LastIndex == 0 {
		t.Fatal(err)
	}
	if r := srv.LastRequest(); r.Method != "POST" || r.Path != "/v1/hosts/cmp-1/drain" || len(r.Body) != 0 {
		t.Errorf("sent %s %s %q", r.Method, r.Path, r.Body)
	}
	h, _, err := c.Hosts().Info("h1", nil)
	if err != nil || !h.Draining() || h.Enabled || h.DisabledReason != "draining" || h.Allocations == nil || *h.Allocations != 2 {
		t.Fatalf("draining host %+v %v", h, err)
	}
	if list, _, _ := c.Hosts().List(nil); list[0].Allocations != nil || !list[0].Draining() {
		t.Errorf("listed host %+v", list[0])
	}
	srv.DeleteAllocation("a1")
	srv.DeleteAllocation("a2")
	srv.UpdateHost("h1", func(h *api.Host) { h.Drain.Complete, h.Drain.CompletedAt = true, time.Now().UnixNano() })
	if h, _, _ = c.Hosts().Info("h1", nil); h.Draining() || !h.Drain.Complete || *h.Allocations != 0 {
		t.Errorf("drained host %+v", h)
	}

	if _, err := c.Hosts().Drain("h1", "kernel upgrade"); err != nil || string(srv.LastRequest().Body) != `{"Reason":"kernel upgrade"}` {
		t.Errorf("drain with a reason: %v %s", err, srv.LastRequest().Body)
	}
	if _, err := c.Hosts().Enable("h1"); err != nil {
		t.Fatal(err)
	}
	if h, _, _ = c.Hosts().Info("h1", nil); h.Drain != nil || !h.Enabled {
		t.Errorf("enable did not cancel the drain: %+v", h)
	}
	if _, err := c.Hosts().Drain("nope", ""); !api.IsNotFound(err) {
		t.Errorf("missing host: %v", err)
	}
}

// TestLifecycleDecodesAgentJSON pins the wire names the agent writes for
// tasks, actions, migrations and drains.
func TestLifecycleDecodesAgentJSON(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/instances/i1/actions":
			_, _ = w.Write([]byte(`{"RequestID":"req-1","MigrationID":40,"Instance":{"ID":"i1","Status":"RESIZE",
				"VMState":"active","TaskState":"resize_prep","Locked":true,"LockedBy":"admin","LockedReason":"audit",
				"Task":{"Kind":"resize","Step":"schedule","Op":"resize","RequestID":"req-1","MigrationID":40,"EvalID":"e1",
				"SourceHostID":"h1","SourceAllocID":"a1","DestHostID":"","DestAllocID":"","TargetHostID":"",
				"NewFlavor":{"ID":"2","Name":"m1.small"},"PowerOn":true,"PrevVMState":"active","StartedAt":5},
				"Resize":null,"ShelvedAt":0,"DeletedAt":0}}`))
		case "/v1/instances/i1/actions/req-1":
			_, _ = w.Write([]byte(`{"RequestID":"req-1","InstanceID":"i1","Action":"resize","ProjectID":"p","UserID":"u",
				"StartTime":5,"UpdatedAt":6,"Message":"Error","Events":[{"Event":"conductor_migrate_server","StartTime":5,
				"FinishTime":6,"Result":"Error","Details":"No valid host","HostID":""}],"CreateIndex":40,"ModifyIndex":41}`))
		case "/v1/migrations":
			_, _ = w.Write([]byte(`[{"ID":40,"UUID":"u1","InstanceID":"i1","ProjectID":"p","UserID":"u","Type":"resize",
				"Status":"error","SourceHostID":"h1","SourceHost":"cmp-1","DestHostID":"","DestHost":"","OldFlavorID":"1",
				"NewFlavorID":"2","CreatedAt":5,"UpdatedAt":6,"CreateIndex":40,"ModifyIndex":41}]`))
		case "/v1/hosts/h1":
			_, _ = w.Write([]byte(`{"ID":"h1","Name":"cmp-1","Drain":{"StartedAt":5,"Complete":true,"CompletedAt":9},"Allocations":0}`))
		}
	}))
	defer ts.Close()
	c, _ := api.NewClient(&api.Config{Address: ts.URL})

	res, _, err := c.Instances().Perform("i1", api.OpResize, &api.ActionOptions{Flavor: "2"})
	if err != nil {
		t.Fatal(err)
	}
	wantTask := &api.Task{Kind: "resize", Step: "schedule", Op: "resize", RequestID: "req-1", MigrationID: 40, EvalID: "e1",
		SourceHostID: "h1", SourceAllocID: "a1", NewFlavor: &api.Flavor{ID: "2", Name: "m1.small"}, PowerOn: true,
		PrevVMState: "active", StartedAt: 5}
	if res.RequestID != "req-1" || res.MigrationID != 40 || !reflect.DeepEqual(res.Instance.Task, wantTask) ||
		!res.Instance.Locked || res.Instance.LockedBy != "admin" || res.Instance.LockedReason != "audit" || res.Instance.Status != "RESIZE" {
		t.Errorf("perform: %+v\ninstance %+v\ntask %+v", res, res.Instance, res.Instance.Task)
	}

	a, _, err := c.Instances().ActionInfo("i1", "req-1", nil)
	wantAction := &api.InstanceAction{RequestID: "req-1", InstanceID: "i1", Action: "resize", ProjectID: "p", UserID: "u",
		StartTime: 5, UpdatedAt: 6, Message: "Error", Events: []*api.InstanceActionEvent{{Event: "conductor_migrate_server",
			StartTime: 5, FinishTime: 6, Result: "Error", Details: "No valid host"}}, CreateIndex: 40, ModifyIndex: 41}
	if err != nil || !reflect.DeepEqual(a, wantAction) || !a.Failed() {
		t.Errorf("action %+v %v", a, err)
	}

	ms, _, err := c.Migrations().List("", nil)
	wantMig := []*api.Migration{{ID: 40, UUID: "u1", InstanceID: "i1", ProjectID: "p", UserID: "u", Type: "resize", Status: "error",
		SourceHostID: "h1", SourceHost: "cmp-1", OldFlavorID: "1", NewFlavorID: "2", CreatedAt: 5, UpdatedAt: 6, CreateIndex: 40, ModifyIndex: 41}}
	if err != nil || !reflect.DeepEqual(ms, wantMig) {
		t.Errorf("migrations %+v %v", ms, err)
	}

	h, _, err := c.Hosts().Info("h1", nil)
	if err != nil || h.Drain == nil || *h.Drain != (api.DrainState{StartedAt: 5, Complete: true, CompletedAt: 9}) || h.Allocations == nil || *h.Allocations != 0 {
		t.Errorf("host %+v %v", h, err)
	}
}
