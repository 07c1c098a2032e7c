package api_test

import (
	"testing"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/api/apitest"
)

func TestHostsListInfoEnableDisable(t *testing.T) {
	srv := apitest.NewServer(t)
	h := srv.AddHost(&api.Host{ID: "h1", Name: "cmp-1", Status: api.HostStatusUp, Enabled: true,
		Inventories: map[string]*api.Inventory{api.ResourceVCPU: {Total: 8, AllocationRatio: 4}},
		Usage:       map[string]int64{api.ResourceVCPU: 2}})
	srv.AddHost(&api.Host{ID: "h2", Name: "cmp-2", Status: api.HostStatusDown})
	c := srv.Client(t)

	hosts, qm, err := c.Hosts().List(nil)
	if err != nil || len(hosts) != 2 || hosts[0].ID != "h1" || qm.LastIndex == 0 {
		t.Fatalf("list: %+v %v", hosts, err)
	}
	got, _, err := c.Hosts().Info("cmp-1", nil)
	if err != nil || got.ID != h.ID {
		t.Fatalf("info by name: %+v %v", got, err)
	}
	if vc := got.Capacity[api.ResourceVCPU]; vc == nil || *vc != (api.HostCapacity{Total: 8, Used: 2, Capacity: 32}) {
		t.Errorf("capacity %+v", vc)
	}
	if _, _, err := c.Hosts().Info("nope", nil); !api.IsNotFound(err) {
		t.Errorf("missing host: %v", err)
	}

	if _, err := c.Hosts().Disable("h1", "maintenance"); err != nil {
		t.Fatal(err)
	}
	if r := srv.LastRequest(); r.Path != "/v1/hosts/h1/disable" || string(r.Body) != `{"Reason":"maintenance"}` {
		t.Errorf("disable request %s %s", r.Path, r.Body)
	}
	if h := srv.Host("h1"); h.Enabled || h.DisabledReason != "maintenance" {
		t.Errorf("after disable %+v", h)
	}
	if _, err := c.Hosts().Disable("h2", ""); err != nil || len(srv.LastRequest().Body) != 0 {
		t.Errorf("disable without reason: %v, body %q", err, srv.LastRequest().Body)
	}
	wm, err := c.Hosts().Enable("h1")
	if err != nil || wm.LastIndex == 0 || srv.LastRequest().Method != "POST" || len(srv.LastRequest().Body) != 0 {
		t.Fatalf("enable: %v %+v", err, srv.LastRequest())
	}
	if h := srv.Host("h1"); !h.Enabled || h.DisabledReason != "" {
		t.Errorf("after enable %+v", h)
	}
	if _, err := c.Hosts().Enable("nope"); !api.IsNotFound(err) {
		t.Errorf("enable missing host: %v", err)
	}
}

func TestAllocationsAndEvaluations(t *testing.T) {
	srv := apitest.NewServer(t)
	srv.AddAllocation(&api.Allocation{ID: "a1", HostID: "h1", InstanceID: "i1"})
	srv.AddAllocation(&api.Allocation{ID: "a2", HostID: "h2", InstanceID: "i2"})
	srv.AddEvaluation(&api.Evaluation{ID: "e1", Status: api.EvalStatusFailed, StatusDescription: "no valid host"})
	c := srv.Client(t)

	all, _, err := c.Allocations().List(nil)
	if err != nil || len(all) != 2 {
		t.Fatalf("allocations: %+v %v", all, err)
	}
	onH2, _, err := c.Allocations().ListByHost("h2", nil)
	if err != nil || len(onH2) != 1 || onH2[0].ID != "a2" || srv.LastRequest().RawQuery != "host=h2" {
		t.Fatalf("allocations on h2: %+v %v", onH2, err)
	}
	evals, _, err := c.Evaluations().List(nil)
	if err != nil || len(evals) != 1 || evals[0].StatusDescription != "no valid host" {
		t.Fatalf("evaluations: %+v %v", evals, err)
	}
	if _, _, err := c.Evaluations().Info("e9", nil); !api.IsNotFound(err) {
		t.Errorf("missing evaluation: %v", err)
	}
}
