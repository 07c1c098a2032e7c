package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/ironic/ironictest"
)

// TestIronicAgentOneHostPerNode runs one agent with the ironic driver in
// front of a fake Ironic of three nodes: it registers three hosts, each
// offering one CUSTOM_BAREMETAL_GOLD (one in maintenance, none); a
// bare-metal flavor lands on one node, which Ironic deploys; deleting the
// instance cleans the node back to available.
func TestIronicAgentOneHostPerNode(t *testing.T) {
	t.Parallel()
	srv := ironictest.New(t)
	var nodes []string
	for _, name := range []string{"bm-0", "bm-1", "bm-2"} {
		nodes = append(nodes, srv.AddAvailable(ironictest.NodeSpec{Name: name, ResourceClass: "baremetal-gold",
			CPUs: 16, MemoryMB: 65536, LocalGB: 500}))
	}
	srv.SetMaintenance(nodes[2], true, "disk replacement")
	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{Driver: "ironic", Ironic: &IronicConfig{Endpoint: srv.URL, PollInterval: "50ms"}}
	})

	hostsByName := func() (map[string]*hostJSON, error) {
		code, _, b := do(t, "GET", a.url("/v1/hosts"), nil)
		var hosts []*hostJSON
		if err := json.Unmarshal(b, &hosts); err != nil || code != 200 {
			return nil, fmt.Errorf("hosts: %d %s", code, b)
		}
		out := map[string]*hostJSON{}
		for _, h := range hosts {
			out[h.Name] = h
		}
		return out, nil
	}
	waitNode(t, "three node hosts up", func() error {
		hosts, err := hostsByName()
		if err != nil {
			return err
		}
		for _, name := range []string{"bm-0", "bm-1", "bm-2"} {
			if h := hosts[name]; h == nil || !h.Up() || h.Driver != "ironic" {
				return fmt.Errorf("host %s: %+v", name, h)
			}
		}
		return nil
	})
	hosts, _ := hostsByName()
	for name, want := range map[string]int64{"bm-0": 1, "bm-1": 1, "bm-2": 0} {
		h := hosts[name]
		if got := h.Inventories["CUSTOM_BAREMETAL_GOLD"]; got == nil || got.Total != want {
			t.Errorf("host %s CUSTOM_BAREMETAL_GOLD = %+v, want total %d", name, got, want)
		}
		if vcpu := h.Inventories[structs.ResourceVCPU]; vcpu != nil && vcpu.Total != 0 {
			t.Errorf("host %s offers %d VCPU, want none", name, vcpu.Total)
		}
	}

	code, _, b := do(t, "POST", a.url("/v1/flavors"), strings.NewReader(`{"ID":"bm-gold","Name":"baremetal.gold",
		"VCPUs":16,"MemoryMB":65536,"RootGB":500,"ExtraSpecs":{"resources:CUSTOM_BAREMETAL_GOLD":"1",
		"resources:VCPU":"0","resources:MEMORY_MB":"0","resources:DISK_GB":"0"}}`))
	if code != 200 {
		t.Fatalf("flavor create: %d %s", code, b)
	}
	code, _, b = do(t, "POST", a.url("/v1/instances"), strings.NewReader(`{"Name":"metal","Flavor":"bm-gold","Image":"cirros"}`))
	var created struct{ Instances []*structs.Instance }
	if err := json.Unmarshal(b, &created); err != nil || code != 200 || len(created.Instances) != 1 {
		t.Fatalf("create: %d %s", code, b)
	}
	id := created.Instances[0].ID
	var inst instanceJSON
	waitNode(t, "instance ACTIVE", func() error {
		code, _, b := do(t, "GET", a.url("/v1/instances/"+id), nil)
		inst = instanceJSON{}
		if err := json.Unmarshal(b, &inst); err != nil || code != 200 {
			return fmt.Errorf("%d %s", code, b)
		}
		if inst.Status != "ACTIVE" || !inst.Stable() {
			return fmt.Errorf("status %s task %q fault %+v", inst.Status, inst.TaskState, inst.Fault)
		}
		return nil
	})
	var node *ironictest.Node
	for _, n := range nodes[:2] {
		if nd := srv.Node(n); nd.InstanceUUID != nil && *nd.InstanceUUID == id {
			node = nd
		}
	}
	if node == nil || node.ProvisionState != ironictest.StateActive || node.PowerState != ironictest.PowerOn {
		t.Fatalf("no active node runs instance %s: %+v", id, node)
	}
	if h := hosts[node.Name]; h == nil || inst.HostID != h.ID {
		t.Errorf("instance on host %s, want the host of node %s", inst.HostID, node.Name)
	}

	if code, _, b := do(t, "DELETE", a.url("/v1/instances/"+id), nil); code != 200 && code != 204 {
		t.Fatalf("delete: %d %s", code, b)
	}
	waitNode(t, "node cleaned and available", func() error {
		n := srv.Node(node.UUID)
		if n.ProvisionState != ironictest.StateAvailable || n.InstanceUUID != nil {
			return fmt.Errorf("node %s instance %v", n.ProvisionState, n.InstanceUUID)
		}
		return nil
	})
}

// waitNode polls cond for up to 90s: deploys walk several states.
func waitNode(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestIronicAgentDeployFailure: a node whose deploy fails leaves the
// instance in ERROR with the node's last_error in its fault, and the
// node torn down to available again.
func TestIronicAgentDeployFailure(t *testing.T) {
	t.Parallel()
	srv := ironictest.New(t)
	node := srv.AddAvailable(ironictest.NodeSpec{Name: "bm-f", ResourceClass: "baremetal-iron", CPUs: 8, MemoryMB: 16384, LocalGB: 100})
	srv.FailNextDeploy(node, "Timeout reached while waiting for callback for node")
	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{Driver: "ironic", Ironic: &IronicConfig{Endpoint: srv.URL, PollInterval: "50ms"}}
	})
	code, _, b := do(t, "POST", a.url("/v1/flavors"), strings.NewReader(`{"ID":"bm-iron","Name":"baremetal.iron",
		"VCPUs":8,"MemoryMB":16384,"RootGB":100,"ExtraSpecs":{"resources:CUSTOM_BAREMETAL_IRON":"1",
		"resources:VCPU":"0","resources:MEMORY_MB":"0","resources:DISK_GB":"0"}}`))
	if code != 200 {
		t.Fatalf("flavor create: %d %s", code, b)
	}
	waitNode(t, "the node's host up", func() error {
		code, _, b := do(t, "GET", a.url("/v1/hosts"), nil)
		var hosts []*hostJSON
		if err := json.Unmarshal(b, &hosts); err != nil || code != 200 || len(hosts) != 1 || !hosts[0].Up() {
			return fmt.Errorf("hosts: %d %s", code, b)
		}
		return nil
	})
	code, _, b = do(t, "POST", a.url("/v1/instances"), strings.NewReader(`{"Name":"doomed","Flavor":"bm-iron","Image":"cirros"}`))
	var created struct{ Instances []*structs.Instance }
	if err := json.Unmarshal(b, &created); err != nil || code != 200 || len(created.Instances) != 1 {
		t.Fatalf("create: %d %s", code, b)
	}
	id := created.Instances[0].ID
	var inst instanceJSON
	waitNode(t, "instance ERROR", func() error {
		code, _, b := do(t, "GET", a.url("/v1/instances/"+id), nil)
		inst = instanceJSON{}
		if err := json.Unmarshal(b, &inst); err != nil || code != 200 {
			return fmt.Errorf("%d %s", code, b)
		}
		if inst.Status != "ERROR" || inst.Fault == nil {
			return fmt.Errorf("status %s fault %+v", inst.Status, inst.Fault)
		}
		return nil
	})
	// The build attempt on the node's host says why, in Ironic's words
	// (the fault itself is the scheduler's: no other node was left).
	var why []string
	for _, at := range inst.Attempts {
		why = append(why, at.Error)
	}
	if !strings.Contains(strings.Join(why, "\n"), "Timeout reached while waiting for callback") {
		t.Errorf("build attempts say %q (fault %+v), want the node's last_error", why, inst.Fault)
	}
	waitNode(t, "node available again", func() error {
		if n := srv.Node(node); n.ProvisionState != ironictest.StateAvailable || n.InstanceUUID != nil {
			return fmt.Errorf("node %s instance %v", n.ProvisionState, n.InstanceUUID)
		}
		return nil
	})
}
