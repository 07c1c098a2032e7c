package native

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestInstanceActionEveryOp(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(func(method string, args, reply any) error {
		req := args.(*structs.InstanceTaskRequest)
		out := reply.(*structs.InstanceTaskResponse)
		out.Index, out.RequestID = 21, "req-1"
		if req.Op == structs.OpResize {
			out.MigrationID = 21
		}
		out.Instance = &structs.Instance{ID: req.InstanceID, VMState: structs.VMStateActive, TaskState: structs.TaskPausing,
			Task: &structs.Task{Kind: structs.TaskKindPower, Step: structs.StepAgent, Op: req.Op, RequestID: "req-1"}}
		return nil
	})
	cases := []struct {
		body string
		want structs.InstanceTaskRequest
	}{
		{`{"Action":"pause"}`, structs.InstanceTaskRequest{Op: structs.OpPause}},
		{`{"action":"unpause"}`, structs.InstanceTaskRequest{Op: structs.OpUnpause}},
		{`{"Action":"suspend"}`, structs.InstanceTaskRequest{Op: structs.OpSuspend}},
		{`{"Action":"resume"}`, structs.InstanceTaskRequest{Op: structs.OpResume}},
		{`{"Action":"reboot_soft"}`, structs.InstanceTaskRequest{Op: structs.OpRebootSoft}},
		{`{"Action":"reboot_hard"}`, structs.InstanceTaskRequest{Op: structs.OpRebootHard}},
		{`{"Action":"lock"}`, structs.InstanceTaskRequest{Op: structs.OpLock}},
		{`{"Action":"lock","Reason":"audit"}`, structs.InstanceTaskRequest{Op: structs.OpLock, Reason: "audit"}},
		{`{"Action":"unlock"}`, structs.InstanceTaskRequest{Op: structs.OpUnlock}},
		{`{"Action":"rescue"}`, structs.InstanceTaskRequest{Op: structs.OpRescue}},
		{`{"Action":"rescue","Image":"rescue-img"}`, structs.InstanceTaskRequest{Op: structs.OpRescue, ImageID: "rescue-img"}},
		{`{"Action":"unrescue"}`, structs.InstanceTaskRequest{Op: structs.OpUnrescue}},
		{`{"Action":"rebuild"}`, structs.InstanceTaskRequest{Op: structs.OpRebuild}},
		{`{"Action":"rebuild","Image":"debian"}`, structs.InstanceTaskRequest{Op: structs.OpRebuild, ImageID: "debian"}},
		{`{"action":"resize","flavor":"m1.small"}`, structs.InstanceTaskRequest{Op: structs.OpResize, FlavorID: "m1.small"}},
		{`{"Action":"confirmResize"}`, structs.InstanceTaskRequest{Op: structs.OpConfirmResize}},
		{`{"Action":"revertResize"}`, structs.InstanceTaskRequest{Op: structs.OpRevertResize}},
		{`{"Action":"migrate"}`, structs.InstanceTaskRequest{Op: structs.OpMigrate}},
		{`{"Action":"migrate","Host":"cmp-2"}`, structs.InstanceTaskRequest{Op: structs.OpMigrate, TargetHost: "cmp-2"}},
		{`{"Action":"live-migration","Host":"cmp-2"}`, structs.InstanceTaskRequest{Op: structs.OpLiveMigrate, TargetHost: "cmp-2"}},
		{`{"Action":"evacuate"}`, structs.InstanceTaskRequest{Op: structs.OpEvacuate}},
		{`{"Action":"shelve"}`, structs.InstanceTaskRequest{Op: structs.OpShelve}},
		{`{"Action":"shelveOffload"}`, structs.InstanceTaskRequest{Op: structs.OpShelveOffload}},
		{`{"Action":"unshelve","Host":"cmp-3"}`, structs.InstanceTaskRequest{Op: structs.OpUnshelve, TargetHost: "cmp-3"}},
		{`{"Action":"restore"}`, structs.InstanceTaskRequest{Op: structs.OpRestore}},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		rec := serve(h, "POST", "/v1/instances/i1/actions", tc.body)
		want := tc.want
		want.InstanceID, want.Admin, want.AuthToken = "i1", true, "tok"
		want.IdempotencyKey = agentTaskKey(t, f)
		if c := f.last(t); rec.Code != 200 || c.method != "Instance.Task" || !reflect.DeepEqual(c.args, &want) {
			t.Errorf("%s: %d %s, called %s %+v", tc.body, rec.Code, rec.Body, c.method, c.args)
			continue
		}
		seen[want.Op] = true
		if rec.Header().Get("X-Stratus-Index") != "21" {
			t.Errorf("%s: index %q", tc.body, rec.Header().Get("X-Stratus-Index"))
		}
		got := decodeBody[struct {
			RequestID   string
			MigrationID uint64
			Instance    map[string]any
		}](t, rec)
		task, _ := got.Instance["Task"].(map[string]any)
		if got.RequestID != "req-1" || got.Instance["Status"] != "ACTIVE" || got.Instance["ID"] != "i1" || task["Op"] != want.Op {
			t.Errorf("%s: answer %s", tc.body, rec.Body)
		}
		if (want.Op == structs.OpResize) != (got.MigrationID == 21) {
			t.Errorf("%s: migration id %d", tc.body, got.MigrationID)
		}
	}
	// Every operation a user may ask for is reachable; the servers' own
	// (reclaim, autoConfirm, abortMigration, softDelete, forceDelete)
	// are not.
	for _, op := range []string{structs.OpStart, structs.OpStop, structs.OpRebootSoft, structs.OpRebootHard, structs.OpPause,
		structs.OpUnpause, structs.OpSuspend, structs.OpResume, structs.OpLock, structs.OpUnlock, structs.OpRescue,
		structs.OpUnrescue, structs.OpRebuild, structs.OpResize, structs.OpConfirmResize, structs.OpRevertResize,
		structs.OpMigrate, structs.OpLiveMigrate, structs.OpEvacuate, structs.OpShelve, structs.OpShelveOffload,
		structs.OpUnshelve, structs.OpRestore} {
		if _, ok := nativeOps[op]; !ok && op != structs.OpStart && op != structs.OpStop {
			t.Errorf("op %q has no action name", op)
		}
		if !seen[op] && op != structs.OpStart && op != structs.OpStop {
			t.Errorf("op %q not exercised", op)
		}
	}
	for _, op := range []string{structs.OpReclaim, structs.OpAutoConfirm, structs.OpAbortMigration, structs.OpSoftDelete, structs.OpForceDelete} {
		if _, ok := nativeOps[op]; ok {
			t.Errorf("the servers' own op %q is exposed", op)
		}
	}
}

func TestInstanceActionRefusesBadBodies(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(nil)
	for _, tc := range []struct{ body, want string }{
		{`{}`, "an Action is required (one of attach_volume, confirmResize, detach_volume, evacuate, live-migration, lock, migrate, pause, reboot, reboot_hard, reboot_soft, rebuild, rescue, resize, restore, resume, revertResize, shelve, shelveOffload, start, stop, suspend, unlock, unpause, unrescue, unshelve)"},
		{`{"Action":"dance"}`, `action "dance" is not one of attach_volume, confirmResize, detach_volume, evacuate,`},
		{`{"Action":"softDelete"}`, `action "softDelete" is not one of`},
		{`{"Action":"reclaim"}`, `action "reclaim" is not one of`},
		{`{"Action":"resize"}`, "the resize action needs a Flavor"},
		{`{"Action":"pause","Flavor":"1"}`, "Flavor does not apply to the pause action"},
		{`{"Action":"stop","Hard":true}`, "Hard does not apply to the stop action"},
		{`{"Action":"reboot_hard","Hard":true}`, "Hard does not apply to the reboot_hard action"},
		{`{"Action":"lock","Image":"x","Host":"h"}`, "Image does not apply to the lock action; Host does not apply to the lock action"},
		{`{"Action":"shelve","Reason":"why"}`, "Reason does not apply to the shelve action"},
		{`{"Action":"lock","Reason":"` + strings.Repeat("r", 256) + `"}`, "Reason is longer than 255 characters"},
		{`{"Action":"attach_volume"}`, "the attach_volume action needs a Volume"},
		{`{"Action":"detach_volume","Volume":"v1","Device":"/dev/sdb"}`, "Device does not apply to the detach_volume action"},
		{`{"Action":"stop","Volume":"v1"}`, "Volume does not apply to the stop action"},
		{`{"Action":"resize","Flavor":"1","Colour":"red"}`, "unknown field"},
		{`{"Action":"resize","Flavor":2}`, "not valid"},
		{`{"Action":"pause"} {}`, "after the JSON value"},
		{``, "request body is empty"},
	} {
		rec := serve(h, "POST", "/v1/instances/i1/actions", tc.body)
		e := decodeBody[ErrorBody](t, rec)
		if rec.Code != 400 || e.Kind != string(structs.KindInvalid) || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%.60s: %d %+v, want 400 %q", tc.body, rec.Code, e, tc.want)
		}
	}
	if f.count() != 0 {
		t.Errorf("bad bodies made %d RPCs", f.count())
	}
}

func TestInstanceActionsAndMigrationsRoutes(t *testing.T) {
	t.Parallel()
	action := &structs.InstanceAction{RequestID: "req-2", InstanceID: "i1", Action: "pause", StartTime: 5,
		Events: []*structs.InstanceActionEvent{{Event: "compute_pause_instance", StartTime: 5, FinishTime: 6, Result: structs.EventSuccess, HostID: "h1"}}}
	var empty bool
	h, f := bootRoutes(func(method string, args, reply any) error {
		switch out := reply.(type) {
		case *structs.InstanceActionListResponse:
			out.Index, out.KnownLeader = 33, true
			if empty {
				return nil
			}
			req := args.(*structs.InstanceActionListRequest)
			if req.RequestID == "" {
				out.Actions = []*structs.InstanceAction{action, {RequestID: "req-1", InstanceID: "i1", Action: "create"}}
			} else if req.RequestID == "req-2" {
				out.Actions = []*structs.InstanceAction{action}
			}
		case *structs.MigrationListResponse:
			out.Index = 34
			if !empty {
				out.Migrations = []*structs.Migration{{ID: 30, InstanceID: "i1", Type: structs.MigrationTypeLive, Status: structs.MigrationCompleted}}
			}
		}
		return nil
	})

	rec := serve(h, "GET", "/v1/instances/i1/actions?index=3&wait=1s", "")
	want := &structs.InstanceActionListRequest{InstanceID: "i1", QueryOptions: structs.QueryOptions{MinQueryIndex: 3, MaxQueryTime: 1e9, AuthToken: "tok"}}
	if c := f.last(t); rec.Code != 200 || c.method != "Instance.Actions" || !reflect.DeepEqual(c.args, want) {
		t.Errorf("list: %d, called %s %+v", rec.Code, c.method, c.args)
	}
	if rec.Header().Get("X-Stratus-Index") != "33" || rec.Header().Get("X-Stratus-KnownLeader") != "true" {
		t.Errorf("list headers %v", rec.Header())
	}
	list := decodeBody[[]*structs.InstanceAction](t, rec)
	if len(list) != 2 || list[0].RequestID != "req-2" || list[0].Events[0].Result != "Success" || list[1].Action != "create" {
		t.Errorf("list %s", rec.Body)
	}

	rec = serve(h, "GET", "/v1/instances/i1/actions/req-2?stale", "")
	want = &structs.InstanceActionListRequest{InstanceID: "i1", RequestID: "req-2", QueryOptions: structs.QueryOptions{AllowStale: true, AuthToken: "tok"}}
	if c := f.last(t); rec.Code != 200 || !reflect.DeepEqual(c.args, want) {
		t.Errorf("get: %d, called %+v", rec.Code, c.args)
	}
	if got := decodeBody[structs.InstanceAction](t, rec); got.RequestID != "req-2" || len(got.Events) != 1 || got.Events[0].HostID != "h1" {
		t.Errorf("get %s", rec.Body)
	}
	rec = serve(h, "GET", "/v1/instances/i1/actions/req-9", "")
	if e := decodeBody[ErrorBody](t, rec); rec.Code != 404 || e.Error != `action "req-9" of instance "i1" not found` {
		t.Errorf("missing action: %d %+v", rec.Code, e)
	}

	rec = serve(h, "GET", "/v1/migrations?instance=i1", "")
	if c := f.last(t); rec.Code != 200 || c.method != "Migration.List" ||
		!reflect.DeepEqual(c.args, &structs.MigrationListRequest{InstanceID: "i1", QueryOptions: structs.QueryOptions{AuthToken: "tok"}}) {
		t.Errorf("migrations: %d, called %s %+v", rec.Code, c.method, c.args)
	}
	if got := decodeBody[[]structs.Migration](t, rec); len(got) != 1 || got[0].ID != 30 || got[0].Status != "completed" {
		t.Errorf("migrations %s", rec.Body)
	}
	if rec := serve(h, "GET", "/v1/migrations", ""); f.last(t).args.(*structs.MigrationListRequest).InstanceID != "" || rec.Code != 200 {
		t.Errorf("all migrations: %d", rec.Code)
	}

	// Empty lists are arrays; an unknown instance's actions are an empty
	// list (actions outlive their instances).
	empty = true
	for _, path := range []string{"/v1/instances/gone/actions", "/v1/migrations", "/v1/migrations?instance=gone"} {
		if rec := serve(h, "GET", path, ""); rec.Code != 200 || strings.TrimSpace(rec.Body.String()) != "[]" {
			t.Errorf("%s: %d %q", path, rec.Code, rec.Body)
		}
	}
	for _, path := range []string{"/v1/instances/i1/actions?index=x", "/v1/migrations?wait=forever"} {
		if rec := serve(h, "GET", path, ""); rec.Code != 400 {
			t.Errorf("%s: %d", path, rec.Code)
		}
	}
}

func TestLifecycleRoutesMethods(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(nil)
	for _, tc := range []struct {
		method, path string
		allow        string
	}{
		{"DELETE", "/v1/instances/i1/actions", "GET, POST"},
		{"POST", "/v1/instances/i1/actions/req-1", "GET"},
		{"DELETE", "/v1/instances/i1/actions/req-1", "GET"},
		{"POST", "/v1/migrations", "GET"},
		{"GET", "/v1/hosts/h1/drain", "POST"},
		{"DELETE", "/v1/hosts/h1/drain", "POST"},
	} {
		rec := serve(h, tc.method, tc.path, "")
		if rec.Code != 405 || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d allow %q, want 405 %q", tc.method, tc.path, rec.Code, rec.Header().Get("Allow"), tc.allow)
		}
	}
	if rec := serve(h, "GET", "/v1/instances/i1/actions/req-1/events", ""); rec.Code != 404 {
		t.Errorf("deeper path: %d", rec.Code)
	}
	if f.count() != 0 {
		t.Errorf("unmatched requests made %d RPCs", f.count())
	}
}

func TestHostDrainRoute(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(func(method string, args, reply any) error {
		reply.(*structs.GenericResponse).Index = 50
		return nil
	})
	for _, tc := range []struct {
		body string
		want structs.HostUpdateEnabledRequest
	}{
		{``, structs.HostUpdateEnabledRequest{HostID: "cmp-1", Drain: true}},
		{`{"Reason":"kernel upgrade"}`, structs.HostUpdateEnabledRequest{HostID: "cmp-1", Reason: "kernel upgrade", Drain: true}},
	} {
		rec := serve(h, "POST", "/v1/hosts/cmp-1/drain", tc.body)
		want := tc.want
		want.AuthToken = "tok"
		if c := f.last(t); rec.Code != 200 || c.method != "Host.UpdateEnabled" || !reflect.DeepEqual(c.args, &want) {
			t.Errorf("%q: %d %s, called %s %+v", tc.body, rec.Code, rec.Body, c.method, c.args)
		}
		if rec.Header().Get("X-Stratus-Index") != "50" || rec.Body.Len() != 0 {
			t.Errorf("%q: index %q body %q", tc.body, rec.Header().Get("X-Stratus-Index"), rec.Body)
		}
	}
	before := f.count()
	for _, body := range []string{`{"Reason":1}`, `{"Drain":false}`, `{"Reason":"a"} x`} {
		if rec := serve(h, "POST", "/v1/hosts/cmp-1/drain", body); rec.Code != 400 {
			t.Errorf("%s: %d", body, rec.Code)
		}
	}
	if n := f.count() - before; n != 0 {
		t.Errorf("bad bodies made %d RPCs", n)
	}
}

func TestHostJSONCarriesDrainAndAllocations(t *testing.T) {
	t.Parallel()
	host := &structs.Host{ID: "h1", Name: "cmp-1", Status: structs.HostStatusUp, DisabledReason: "draining",
		Drain: &structs.DrainState{StartedAt: 100}}
	h, f := bootRoutes(func(method string, args, reply any) error {
		switch out := reply.(type) {
		case *structs.SingleHostResponse:
			out.Host, out.Index = host, 77
		case *structs.HostListResponse:
			out.Hosts = []*structs.Host{host}
		case *structs.AllocListResponse:
			if args.(*structs.AllocListRequest).HostID != "h1" {
				return fmt.Errorf("allocations of %q", args.(*structs.AllocListRequest).HostID)
			}
			out.Allocs, out.Index = []*structs.Allocation{{ID: "a1"}, {ID: "a2"}}, 99
		}
		return nil
	})
	rec := serve(h, "GET", "/v1/hosts/cmp-1?stale", "")
	var got map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	drain, _ := got["Drain"].(map[string]any)
	if got["Allocations"] != 2.0 || drain["StartedAt"] != 100.0 || drain["Complete"] != false {
		t.Errorf("host %s", rec.Body)
	}
	if c := f.last(t); c.method != "Alloc.List" || !reflect.DeepEqual(c.args,
		&structs.AllocListRequest{HostID: "h1", QueryOptions: structs.QueryOptions{AllowStale: true, AuthToken: "tok"}}) {
		t.Errorf("allocation count read %s %+v", c.method, c.args)
	}
	if rec.Header().Get("X-Stratus-Index") != "77" {
		t.Errorf("index %q is not the host's", rec.Header().Get("X-Stratus-Index"))
	}

	rec = serve(h, "GET", "/v1/hosts", "")
	var list []map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || len(list) != 1 {
		t.Fatalf("%s", rec.Body)
	}
	if _, ok := list[0]["Allocations"]; ok || list[0]["Drain"] == nil {
		t.Errorf("host list entry %v", list[0])
	}

	host.Drain = nil
	if rec := serve(h, "GET", "/v1/hosts/h1", ""); !strings.Contains(rec.Body.String(), `"Drain": null`) {
		t.Errorf("no drain: %s", rec.Body)
	}
}

func TestInstanceDeleteForce(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(nil)
	for path, force := range map[string]bool{
		"/v1/instances/i1": false, "/v1/instances/i1?force": true, "/v1/instances/i1?force=true": true, "/v1/instances/i1?force=false": false,
	} {
		rec := serve(h, "DELETE", path, "")
		want := &structs.InstanceDeleteRequest{InstanceIDs: []string{"i1"}, Force: force, WriteRequest: structs.WriteRequest{AuthToken: "tok"}}
		if c := f.last(t); rec.Code != 200 || !reflect.DeepEqual(c.args, want) {
			t.Errorf("%s: %d, called %+v", path, rec.Code, c.args)
		}
	}
	before := f.count()
	if rec := serve(h, "DELETE", "/v1/instances/i1?force=yes", ""); rec.Code != 400 || f.count() != before {
		t.Errorf("force=yes: %d %s", rec.Code, rec.Body)
	}
}

func TestLifecycleRoutesMapRPCErrors(t *testing.T) {
	t.Parallel()
	var rpcErr error
	h, _ := bootRoutes(func(string, any, any) error { return rpcErr })
	routes := [][3]string{
		{"POST", "/v1/instances/x/actions", `{"Action":"pause"}`}, {"GET", "/v1/instances/x/actions", ""},
		{"GET", "/v1/instances/x/actions/req-1", ""}, {"GET", "/v1/migrations", ""}, {"POST", "/v1/hosts/h9/drain", ""},
	}
	for _, tc := range []struct {
		err        error
		code       int
		kind, text string
	}{
		{structs.Errorf(structs.KindConflict, "Cannot 'pause' instance x while it is in vm_state stopped"), 409, "conflict",
			"Cannot 'pause' instance x while it is in vm_state stopped"},
		{structs.Errorf(structs.KindNotFound, "Instance x could not be found."), 404, "not found", "Instance x could not be found."},
		{structs.ErrNoLeader, 503, "no leader", "no cluster leader"},
	} {
		rpcErr = tc.err
		for _, rt := range routes {
			rec := serve(h, rt[0], rt[1], rt[2])
			e := decodeBody[ErrorBody](t, rec)
			if rec.Code != tc.code || e.Kind != tc.kind || e.Error != tc.text {
				t.Errorf("%v on %s %s: %d %+v", tc.err, rt[0], rt[1], rec.Code, e)
			}
		}
	}
}
