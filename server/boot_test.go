package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/structs"
)

// testHost is a host with vcpus VCPUs (no overcommit) and memMB memory.
func testHost(id string, vcpus, memMB int64) *structs.Host {
	return &structs.Host{ID: id, Name: "hv-" + id, AZ: "nova", Enabled: true, Arch: "x86_64", HypervisorType: "fake",
		Inventories: map[string]*structs.Inventory{
			structs.ResourceVCPU:     {Total: vcpus, MinUnit: 1, MaxUnit: vcpus, StepSize: 1, AllocationRatio: 1},
			structs.ResourceMemoryMB: {Total: memMB, MinUnit: 1, MaxUnit: memMB, StepSize: 1, AllocationRatio: 1},
			structs.ResourceDiskGB:   {Total: 1000, MinUnit: 1, MaxUnit: 1000, StepSize: 1, AllocationRatio: 1},
		}}
}

func registerHost(t testing.TB, s *Server, h *structs.Host) {
	t.Helper()
	if err := s.RPC("Host.Register", &structs.HostRegisterRequest{Host: h}, &structs.HostRegisterResponse{}); err != nil {
		t.Fatalf("register %s: %v", h.ID, err)
	}
}

func createInstances(t testing.TB, s *Server, name, flavor string, count int) *structs.InstanceCreateResponse {
	t.Helper()
	var resp structs.InstanceCreateResponse
	err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: name, FlavorID: flavor, ImageID: "cirros", Count: count}, &resp)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return &resp
}

// waitSettled waits until none of ids is still scheduling.
func waitSettled(t testing.TB, s *Server, ids []string) map[string]*structs.Instance {
	t.Helper()
	out := map[string]*structs.Instance{}
	waitFor(t, "instances to be placed or fail", 30*time.Second, func() error {
		for _, id := range ids {
			inst, err := s.fsm.State().InstanceByID(nil, id)
			if err != nil || inst == nil {
				return fmt.Errorf("instance %s: %v", id, err)
			}
			if inst.HostID == "" && inst.VMState == structs.VMStateBuilding {
				return fmt.Errorf("instance %s still scheduling", id)
			}
			out[id] = inst
		}
		return nil
	})
	return out
}

func seedFlavors(t testing.TB, s *Server) {
	t.Helper()
	if err := s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
}

func ids(resp *structs.InstanceCreateResponse) []string {
	var out []string
	for _, i := range resp.Instances {
		out = append(out, i.ID)
	}
	return out
}

func TestBootPathPlacesReportsAndDeletes(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	registerHost(t, s, testHost("h1", 8, 16384))
	registerHost(t, s, testHost("h2", 8, 16384))

	resp := createInstances(t, s, "web", "m1.small", 2)
	insts := waitSettled(t, s, ids(resp))
	hosts := map[string]bool{}
	for _, inst := range insts {
		if inst.HostID == "" {
			t.Fatalf("not placed: %+v", inst)
		}
		hosts[inst.HostID] = true
	}
	// RAMWeigher spreads by default.
	if len(hosts) != 2 {
		t.Fatalf("two instances landed on %d host(s)", len(hosts))
	}
	if ev, _ := s.fsm.State().EvalByID(nil, resp.EvalID); ev.Status != structs.EvalStatusComplete {
		t.Fatalf("eval %+v", ev)
	}

	// The agent's reports drive the instance to ACTIVE.
	inst := insts[resp.Instances[0].ID]
	var allocs structs.AllocIndexResponse
	if err := s.RPC("Alloc.GetHostAllocs", &structs.AllocHostRequest{HostID: inst.HostID}, &allocs); err != nil || len(allocs.Allocs) != 1 {
		t.Fatalf("host allocs %v %v", allocs.Allocs, err)
	}
	var allocID string
	for id := range allocs.Allocs {
		allocID = id
	}
	report := func(state string, power int) {
		t.Helper()
		err := s.RPC("Alloc.UpdateFromClient", &structs.AllocUpdateRequest{HostID: inst.HostID,
			Updates: []*structs.AllocClientUpdate{{AllocID: allocID, ClientState: state, PowerState: power}}}, &structs.GenericResponse{})
		if err != nil {
			t.Fatal(err)
		}
	}
	report(structs.AllocClientSpawning, 0)
	report(structs.AllocClientRunning, structs.PowerRunning)
	var got structs.SingleInstanceResponse
	if err := s.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: inst.ID}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Instance.Status() != "ACTIVE" || got.Allocation == nil || got.Allocation.ClientState != structs.AllocClientRunning {
		t.Fatalf("instance %s alloc %+v", got.Instance.Status(), got.Allocation)
	}

	// Actions are checked against Nova's state rules.
	err := s.RPC("Instance.Action", &structs.InstanceActionRequest{InstanceID: inst.ID, Action: "start"}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("start of an active instance: %v", err)
	}
	if err := s.RPC("Instance.Action", &structs.InstanceActionRequest{InstanceID: inst.ID, Action: "stop"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}

	// Delete: deleting until the agent confirms, then gone and usage freed.
	if err := s.RPC("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{inst.ID}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	report(structs.AllocClientDeleted, 0)
	if i, _ := s.fsm.State().InstanceByID(nil, inst.ID); i != nil {
		t.Fatal("instance not deleted")
	}
	if h, _ := s.fsm.State().HostByID(nil, inst.HostID); len(h.Usage) != 0 {
		t.Fatalf("usage after delete %v", h.Usage)
	}
	// The other instance was never reported on: delete purges at once
	// only when its host is down; here it waits for its agent.
	other := resp.Instances[1].ID
	if err := s.RPC("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{other}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if i, _ := s.fsm.State().InstanceByID(nil, other); i == nil || i.TaskState != structs.TaskDeleting {
		t.Fatalf("other instance %+v", i)
	}
}

func TestNoValidHostExplainsItself(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	registerHost(t, s, testHost("small1", 1, 1024))
	registerHost(t, s, testHost("small2", 1, 1024))
	big := testHost("other-az", 64, 65536)
	big.AZ = "az2"
	registerHost(t, s, big)
	var resp structs.InstanceCreateResponse
	if err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "big", FlavorID: "m1.xlarge", ImageID: "img", AZ: "nova"}, &resp); err != nil {
		t.Fatal(err)
	}
	inst := waitSettled(t, s, ids(&resp))[resp.Instances[0].ID]
	if inst.Status() != "ERROR" || inst.Fault == nil {
		t.Fatalf("instance %+v", inst)
	}
	want := "No valid host was found. 0/3 hosts: 2 insufficient VCPU, 1 not in zone nova"
	if inst.Fault.Message != want {
		t.Fatalf("fault %q, want %q", inst.Fault.Message, want)
	}
	// Bad requests never reach Raft.
	for _, bad := range []structs.InstanceCreateRequest{
		{Name: "", FlavorID: "1", ImageID: "i"},
		{Name: "x", FlavorID: "nope", ImageID: "i"},
		{Name: "x", FlavorID: "1", ImageID: ""},
		{Name: "x", FlavorID: "1", ImageID: "i", Count: 5000},
		{Name: "x", FlavorID: "1", ImageID: "i", AZ: "atlantis"},
	} {
		if err := s.RPC("Instance.Create", &bad, &structs.InstanceCreateResponse{}); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// TestConcurrentWorkersNeverOvercommit races many workers and requests
// for a few small hosts: every instance is placed or fails with
// NoValidHost, and no host holds more than it has.
func TestConcurrentWorkersNeverOvercommit(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = 8 })
	waitForLeader(t, s)
	seedFlavors(t, s)
	for i := 0; i < 3; i++ {
		registerHost(t, s, testHost(fmt.Sprintf("h%d", i), 4, 65536))
	}
	var mu sync.Mutex
	var all []string
	var wg sync.WaitGroup
	for i := 0; i < 30; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			resp := createInstances(t, s, fmt.Sprintf("r%d", i), "m1.tiny", 1+i%2)
			mu.Lock()
			all = append(all, ids(resp)...)
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	insts := waitSettled(t, s, all)
	placed, failed := 0, 0
	for _, inst := range insts {
		switch {
		case inst.HostID != "":
			placed++
		case inst.Status() == "ERROR" && strings.Contains(inst.Fault.Message, "insufficient VCPU"):
			failed++
		default:
			t.Fatalf("instance neither placed nor NoValidHost: %+v", inst)
		}
	}
	if placed != 12 || failed != len(all)-12 {
		t.Fatalf("placed %d, failed %d of %d; want exactly 12 placed", placed, failed, len(all))
	}
	hosts, _ := s.fsm.State().Hosts(nil)
	for _, h := range hosts {
		if h.Usage[structs.ResourceVCPU] > 4 {
			t.Fatalf("host %s overcommitted: %v", h.ID, h.Usage)
		}
	}
}

func TestEvalSurvivesLeaderChange(t *testing.T) {
	t.Parallel()
	// No workers anywhere: the evaluation waits in the broker.
	servers := testCluster(t, 3, func(c *Config) { c.NumSchedulers = -1 })
	leader := waitForLeader(t, servers...)
	seedFlavors(t, leader)
	registerHost(t, leader, testHost("h1", 8, 16384))
	resp := createInstances(t, leader, "survivor", "m1.tiny", 1)
	if ready, _ := leader.evalBroker.Stats(); ready != 1 {
		t.Fatalf("broker has %d ready evals", ready)
	}
	_ = leader.Shutdown()
	var rest []*Server
	for _, s := range servers {
		if s != leader {
			rest = append(rest, s)
		}
	}
	newLeader := waitForLeader(t, rest...)
	waitFor(t, "the new leader to restore the eval", 10*time.Second, func() error {
		if ready, _ := newLeader.evalBroker.Stats(); ready != 1 {
			return fmt.Errorf("%d ready", ready)
		}
		return nil
	})
	// Workers on a follower dequeue from the leader over RPC.
	for _, s := range rest {
		if s != newLeader {
			s.startWorkers(1)
		}
	}
	heartbeatAll(t, newLeader, "h1")
	inst := waitSettled(t, newLeader, ids(resp))[resp.Instances[0].ID]
	if inst.HostID != "h1" {
		t.Fatalf("instance after failover %+v", inst)
	}
}

func heartbeatAll(t testing.TB, s *Server, hostIDs ...string) {
	t.Helper()
	if err := s.RPC("Host.Heartbeat", &structs.HostHeartbeatRequest{HostIDs: hostIDs}, &structs.HostRegisterResponse{}); err != nil {
		t.Fatal(err)
	}
}

func TestHostDownWhenHeartbeatsStop(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.HeartbeatTTL = time.Second })
	waitForLeader(t, s)
	registerHost(t, s, testHost("ttl-host", 4, 4096))
	registerHost(t, s, testHost("alive-host", 4, 4096))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
				_ = s.RPC("Host.Heartbeat", &structs.HostHeartbeatRequest{HostIDs: []string{"alive-host"}}, &structs.HostRegisterResponse{})
			}
		}
	}()
	waitFor(t, "the silent host to go down by TTL", 10*time.Second, func() error {
		if h, _ := s.fsm.State().HostByID(nil, "ttl-host"); h.Status != structs.HostStatusDown {
			return fmt.Errorf("ttl-host is %s", h.Status)
		}
		return nil
	})
	if h, _ := s.fsm.State().HostByID(nil, "alive-host"); h.Status != structs.HostStatusUp {
		t.Fatal("a heartbeating host went down")
	}
	// A heartbeat brings a down host back up.
	heartbeatAll(t, s, "ttl-host")
	if h, _ := s.fsm.State().HostByID(nil, "ttl-host"); h.Status != structs.HostStatusUp {
		t.Fatalf("ttl-host after heartbeat: %s", h.Status)
	}
}

func TestHostDownWhenGossipMemberDies(t *testing.T) {
	t.Parallel()
	// A TTL far longer than the test: only gossip can mark it down.
	s := testServer(t, func(c *Config) { c.HeartbeatTTL = time.Hour })
	waitForLeader(t, s)
	agentPool, err := gossip.New(gossip.Config{NodeName: "agent-1", BindAddr: "127.0.0.1", Fast: true,
		Logger: hclog.NewNullLogger(), Meta: gossip.Meta{ID: "agent-1-id", Role: gossip.RoleClient, Region: "global"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = agentPool.Shutdown() })
	if _, err := agentPool.Join([]string{s.Gossip().Addr()}); err != nil {
		t.Fatal(err)
	}
	gh := testHost("gossip-host", 4, 4096)
	gh.GossipMember = "agent-1"
	registerHost(t, s, gh)
	_ = agentPool.Shutdown()
	waitFor(t, "gossip to mark the host down", 15*time.Second, func() error {
		if h, _ := s.fsm.State().HostByID(nil, "gossip-host"); h.Status != structs.HostStatusDown {
			return fmt.Errorf("gossip-host is %s", h.Status)
		}
		return nil
	})
	// The agent returns: its heartbeat marks the host up again.
	heartbeatAll(t, s, "gossip-host")
	if h, _ := s.fsm.State().HostByID(nil, "gossip-host"); h.Status != structs.HostStatusUp {
		t.Fatalf("gossip-host after heartbeat: %s", h.Status)
	}
}
