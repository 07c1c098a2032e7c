package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"

	"github.com/stratus-cloud/stratus/structs"
)

// TestVMwareAgentClusterAsOneHost runs a dev agent with the vmware driver
// in front of vcsim (govmomi's vCenter simulator, in process): the
// cluster registers as one host, an instance of the dev image (qcow2,
// converted and uploaded to the datastore) goes ACTIVE, stops and starts,
// and its VM is gone after delete.
func TestVMwareAgentClusterAsOneHost(t *testing.T) {
	t.Parallel()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatalf("vcsim: %v", err)
	}
	vc := model.Service.NewServer()
	t.Cleanup(func() {
		vc.Close()
		model.Remove()
	})
	pass, _ := vc.URL.User.Password()
	sdk := *vc.URL
	sdk.User = nil
	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{Driver: "vmware", VMware: &VMwareConfig{URL: sdk.String(),
			Username: vc.URL.User.Username(), Password: pass, Insecure: true, Cluster: "DC0_C0"}}
	})
	var host *hostJSON
	waitNode(t, "the cluster's host up", func() error {
		code, _, b := do(t, "GET", a.url("/v1/hosts"), nil)
		var hosts []*hostJSON
		if err := json.Unmarshal(b, &hosts); err != nil || code != 200 || len(hosts) != 1 || !hosts[0].Up() {
			return fmt.Errorf("hosts: %d %s", code, b)
		}
		host = hosts[0]
		return nil
	})
	if host.Attributes["vmware_cluster"] != "DC0_C0" || host.Driver != "vmware" || host.Inventories[structs.ResourceVCPU].Total <= 0 {
		t.Errorf("host %s driver %s attributes %v, want the cluster", host.Name, host.Driver, host.Attributes)
	}

	code, _, b := do(t, "POST", a.url("/v1/instances"), strings.NewReader(`{"Name":"vm","Flavor":"m1.tiny","Image":"cirros"}`))
	var created struct{ Instances []*structs.Instance }
	if err := json.Unmarshal(b, &created); err != nil || code != 200 || len(created.Instances) != 1 {
		t.Fatalf("create: %d %s", code, b)
	}
	id := created.Instances[0].ID
	status := func(want string) func() error {
		return func() error {
			code, _, b := do(t, "GET", a.url("/v1/instances/"+id), nil)
			var inst instanceJSON
			if err := json.Unmarshal(b, &inst); err != nil || code != 200 {
				return fmt.Errorf("%d %s", code, b)
			}
			if inst.Status != want || !inst.Stable() {
				return fmt.Errorf("status %s task %q fault %+v", inst.Status, inst.TaskState, inst.Fault)
			}
			return nil
		}
	}
	waitNode(t, "ACTIVE", status("ACTIVE"))
	for _, step := range []struct{ action, status string }{{"stop", "SHUTOFF"}, {"start", "ACTIVE"}} {
		if code, _, b := do(t, "POST", a.url("/v1/instances/"+id+"/actions"), strings.NewReader(`{"Action":"`+step.action+`"}`)); code != 200 {
			t.Fatalf("%s: %d %s", step.action, code, b)
		}
		waitNode(t, step.status, status(step.status))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := govmomi.NewClient(ctx, vc.URL, true)
	if err != nil {
		t.Fatalf("vcsim client: %v", err)
	}
	dc, err := find.NewFinder(cl.Client, true).DefaultDatacenter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vmExists := func() bool {
		yes := true
		ref, err := object.NewSearchIndex(cl.Client).FindByUuid(ctx, dc, id, true, &yes)
		if err != nil {
			t.Fatalf("FindByUuid: %v", err)
		}
		return ref != nil
	}
	if !vmExists() {
		t.Fatalf("vcsim has no VM with instanceUuid %s", id)
	}
	if code, _, b := do(t, "DELETE", a.url("/v1/instances/"+id), nil); code != 200 && code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	waitNode(t, "VM destroyed", func() error {
		if vmExists() {
			return fmt.Errorf("VM of %s still exists", id)
		}
		return nil
	})
}
