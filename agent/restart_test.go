package agent

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestAgentRestartedMidSpawnNeitherLosesNorDuplicates runs a real server
// and a real hypervisor agent, stops the agent while the driver is still
// spawning, and starts a new agent on the same data dir and hypervisor:
// the instance ends ACTIVE, exactly once.
func TestAgentRestartedMidSpawnNeitherLosesNorDuplicates(t *testing.T) {
	t.Parallel()
	srv, err := server.NewServer(&server.Config{
		NodeName: "srv", NodeID: "00000000-0000-0000-0000-0000000000aa", DataDir: t.TempDir(),
		BindAddr: "127.0.0.1", BootstrapExpect: 1, GossipFast: true, Logger: hclog.NewNullLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Shutdown() })
	waitFor(t, "leader", func() error {
		if !srv.IsLeader() {
			return fmt.Errorf("not leader")
		}
		return nil
	})
	if err := srv.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}

	// One hypervisor, whose spawns take a while, outlives both agents.
	drv := fake.New(fake.Config{HostName: "hv1", SpawnLatency: 1500 * time.Millisecond})
	dataDir := t.TempDir()
	newClient := func() *client.Client {
		c, err := client.New(client.Config{DataDir: dataDir, NodeName: "hv1", Driver: drv, RPC: srv,
			Logger: hclog.NewNullLogger(), ReportInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = c.Start() }()
		return c
	}
	first := newClient()
	t.Cleanup(func() { _ = first.Shutdown() })

	waitFor(t, "host registered", func() error {
		var hosts structs.HostListResponse
		if err := srv.RPC("Host.List", &structs.HostListRequest{}, &hosts); err != nil || len(hosts.Hosts) != 1 {
			return fmt.Errorf("%d hosts %v", len(hosts.Hosts), err)
		}
		return nil
	})
	var created structs.InstanceCreateResponse
	if err := srv.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "vm", FlavorID: "m1.tiny", ImageID: "cirros"}, &created); err != nil {
		t.Fatal(err)
	}
	id := created.Instances[0].ID
	get := func() *structs.SingleInstanceResponse {
		var r structs.SingleInstanceResponse
		if err := srv.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &r); err != nil {
			t.Fatal(err)
		}
		return &r
	}
	waitFor(t, "spawning", func() error {
		if r := get(); r.Instance.TaskState != structs.TaskSpawning {
			return fmt.Errorf("task state %q", r.Instance.TaskState)
		}
		return nil
	})
	// Stop the agent mid-spawn.
	if err := first.Shutdown(); err != nil {
		t.Fatal(err)
	}

	second := newClient()
	t.Cleanup(func() { _ = second.Shutdown() })
	if second.HostID() != first.HostID() {
		t.Fatalf("host id changed across restart: %s → %s", first.HostID(), second.HostID())
	}
	// The node secret too: the servers refuse the host to any other.
	if second.NodeSecret() == "" || second.NodeSecret() != first.NodeSecret() {
		t.Fatal("node secret changed across restart")
	}
	waitFor(t, "ACTIVE after the restart", func() error {
		if r := get(); r.Instance.Status() != "ACTIVE" {
			return fmt.Errorf("status %s", r.Instance.Status())
		}
		return nil
	})
	ids, err := drv.ListInstances(context.Background())
	if err != nil || len(ids) != 1 || ids[0] != id {
		t.Fatalf("hypervisor has %v (%v); want exactly %s", ids, err, id)
	}
}
