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

func TestInstanceCreateListInfo(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.AddFlavor(&api.Flavor{ID: "1", Name: "m1.tiny", VCPUs: 1, MemoryMB: 512})
	c := srv.Client(t)

	resp, wm, err := c.Instances().Create(&api.InstanceCreateRequest{Name: "web", Flavor: "m1.tiny", Image: "cirros"})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(srv.LastRequest().Body); got != `{"Name":"web","Flavor":"m1.tiny","Image":"cirros"}` {
		t.Errorf("create body %s", got)
	}
	if len(resp.Instances) != 1 || resp.EvalID == "" || wm.LastIndex == 0 {
		t.Fatalf("create: %+v %+v", resp, wm)
	}
	web := resp.Instances[0]
	if web.Name != "web" || web.Status != "BUILD" || web.FlavorID != "1" || web.Flavor.Name != "m1.tiny" {
		t.Errorf("instance %+v", web)
	}
	if ev, _, err := c.Evaluations().Info(resp.EvalID, nil); err != nil || !reflect.DeepEqual(ev.InstanceIDs, []string{web.ID}) {
		t.Errorf("evaluation %+v, %v", ev, err)
	}

	resp, _, err = c.Instances().Create(&api.InstanceCreateRequest{Name: "db", Flavor: "1", Image: "cirros", Count: 2,
		AZ: "az1", KeyName: "k", Metadata: map[string]string{"a": "b"}, ImageProperties: map[string]string{"architecture": "x86_64"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Instances) != 2 || resp.Instances[1].Name != "db-2" || resp.Instances[0].Metadata["a"] != "b" {
		t.Errorf("multi-create %+v", resp.Instances)
	}
	srv.UpdateInstance(resp.Instances[0].ID, func(i *api.Instance) { i.HostID = "h1" })

	all, qm, err := c.Instances().List(&api.QueryOptions{AllowStale: true})
	if err != nil || len(all) != 3 || qm.LastIndex == 0 || srv.LastRequest().RawQuery != "stale" {
		t.Fatalf("list: %d %+v %v %q", len(all), qm, err, srv.LastRequest().RawQuery)
	}
	onH1, _, err := c.Instances().ListByHost("h1", &api.QueryOptions{WaitIndex: 3})
	if err != nil || len(onH1) != 1 || onH1[0].Name != "db-1" {
		t.Fatalf("list on h1: %+v %v", onH1, err)
	}
	if q := srv.LastRequest().RawQuery; q != "host=h1&index=3" {
		t.Errorf("list by host query %q", q)
	}

	alloc := srv.AddAllocation(&api.Allocation{InstanceID: web.ID, HostID: "h1", DesiredState: api.AllocDesiredRunning})
	got, _, err := c.Instances().Info(web.ID, nil)
	if err != nil || got.Allocation == nil || got.Allocation.ID != alloc.ID {
		t.Fatalf("info: %+v %v", got, err)
	}
	if _, _, err := c.Instances().Info("nope", nil); !api.IsNotFound(err) {
		t.Errorf("missing instance: %v", err)
	}
	if _, _, err := c.Instances().Create(&api.InstanceCreateRequest{Name: "x", Flavor: "9", Image: "cirros"}); !api.IsKind(err, api.KindInvalid) {
		t.Errorf("unknown flavor: %v", err)
	}
}

func TestInstanceDeleteAndActions(t *testing.T) {
	srv := apitest.NewServer(t)
	inst := srv.AddInstance(&api.Instance{Name: "web", Status: "ACTIVE"})
	c := srv.Client(t)

	for _, tc := range []struct {
		action string
		hard   bool
		body   string
	}{
		{api.ActionStop, false, `{"Action":"stop"}`},
		{api.ActionStart, false, `{"Action":"start"}`},
		{api.ActionReboot, true, `{"Action":"reboot","Hard":true}`},
	} {
		wm, err := c.Instances().Action(inst.ID, tc.action, tc.hard)
		if err != nil || wm.LastIndex == 0 {
			t.Fatalf("%s: %v", tc.action, err)
		}
		if r := srv.LastRequest(); r.Method != "POST" || r.Path != "/v1/instances/"+inst.ID+"/actions" || string(r.Body) != tc.body {
			t.Errorf("%s: %s %s %s", tc.action, r.Method, r.Path, r.Body)
		}
	}
	if got := srv.Instance(inst.ID); got.TaskState != "rebooting_hard" {
		t.Errorf("task state %q", got.TaskState)
	}
	if _, err := c.Instances().Action(inst.ID, "dance", false); !api.IsKind(err, api.KindInvalid) {
		t.Errorf("bad action: %v", err)
	}
	if _, err := c.Instances().Delete(inst.ID); err != nil {
		t.Fatal(err)
	}
	if srv.Instance(inst.ID) != nil {
		t.Error("not deleted")
	}
	if _, err := c.Instances().Delete(inst.ID); !api.IsNotFound(err) {
		t.Errorf("second delete: %v", err)
	}
}

func TestInstanceBlockingInfo(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.BlockQueries(true)
	inst := srv.AddInstance(&api.Instance{Name: "web", Status: "BUILD"})
	c := srv.Client(t)
	_, qm, err := c.Instances().Info(inst.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *api.Instance)
	go func() {
		got, _, err := c.Instances().Info(inst.ID, &api.QueryOptions{WaitIndex: qm.LastIndex, WaitTime: 5 * time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- got
	}()
	select {
	case <-done:
		t.Fatal("blocking query returned before a change")
	case <-time.After(100 * time.Millisecond):
	}
	srv.UpdateInstance(inst.ID, func(i *api.Instance) { i.Status = "ACTIVE" })
	if got := <-done; got == nil || got.Status != "ACTIVE" {
		t.Errorf("after change: %+v", got)
	}
	start := time.Now()
	if _, _, err := c.Instances().Info(inst.ID, &api.QueryOptions{WaitIndex: 1 << 40, WaitTime: 50 * time.Millisecond}); err != nil || time.Since(start) < 50*time.Millisecond {
		t.Errorf("wait time not honoured: %v after %v", err, time.Since(start))
	}
}

// TestInstanceDecodesAgentJSON pins the wire names the agent writes.
func TestInstanceDecodesAgentJSON(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"ID":"i1","Name":"web","ProjectID":"p","UserID":"u","ReservationID":"r",
			"FlavorID":"1","Flavor":{"ID":"1","Name":"m1.tiny","VCPUs":1},"ImageID":"cirros",
			"ImageProperties":{"architecture":"x86_64"},"KeyName":"k","AZ":"nova","HostID":"h1",
			"VMState":"error","TaskState":"","PowerState":4,
			"Fault":{"Code":500,"Message":"No valid host","Details":"0/3 hosts","CreatedAt":5},
			"Attempts":[{"HostID":"h2","Error":"spawn failed"}],"Metadata":{"a":"b"},
			"CreatedAt":1,"UpdatedAt":2,"CreateIndex":3,"ModifyIndex":4,"Status":"ERROR",
			"Allocation":{"ID":"a1","InstanceID":"i1","HostID":"h1","EvalID":"e1","Resources":{"VCPU":1},
			"DesiredState":"running","PendingAction":"reboot_soft","ActionSeq":7,"ClientState":"failed",
			"ClientDescription":"boom","PowerState":4,"ActionDoneSeq":6,"CreateIndex":8,"ModifyIndex":9,"AllocModifyIndex":10}}`))
	}))
	defer ts.Close()
	c, _ := api.NewClient(&api.Config{Address: ts.URL})
	got, _, err := c.Instances().Info("i1", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := &api.Instance{ID: "i1", Name: "web", ProjectID: "p", UserID: "u", ReservationID: "r", FlavorID: "1",
		Flavor: &api.Flavor{ID: "1", Name: "m1.tiny", VCPUs: 1}, ImageID: "cirros",
		ImageProperties: map[string]string{"architecture": "x86_64"}, KeyName: "k", AZ: "nova", HostID: "h1",
		VMState: "error", PowerState: api.PowerShutdown,
		Fault:    &api.Fault{Code: 500, Message: "No valid host", Details: "0/3 hosts", CreatedAt: 5},
		Attempts: []*api.BuildAttempt{{HostID: "h2", Error: "spawn failed"}}, Metadata: map[string]string{"a": "b"},
		CreatedAt: 1, UpdatedAt: 2, CreateIndex: 3, ModifyIndex: 4, Status: "ERROR",
		Allocation: &api.Allocation{ID: "a1", InstanceID: "i1", HostID: "h1", EvalID: "e1", Resources: map[string]int64{"VCPU": 1},
			DesiredState: "running", PendingAction: "reboot_soft", ActionSeq: 7, ClientState: "failed",
			ClientDescription: "boom", PowerState: 4, ActionDoneSeq: 6, CreateIndex: 8, ModifyIndex: 9, AllocModifyIndex: 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v\nwant    %+v", got, want)
	}
}
