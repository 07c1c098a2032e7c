package client

import (
	"context"
	"reflect"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

func TestRegisterInventories(t *testing.T) {
	h := newHarness(t, fake.Config{
		HostName: "hv-01", VCPUs: 16, MemoryMB: 65536, DiskGB: 1000,
		CustomResources: map[string]int64{"CUSTOM_FPGA": 2},
		Traits:          []string{"HW_CPU_X86_AVX2", "COMPUTE_NET_VIF_MODEL_VIRTIO", "HW_CPU_X86_AVX2"},
		Attributes:      map[string]string{"rack": "r1"},
	})
	c := h.start()
	got := h.srv.lastRegistered()
	if got == nil {
		t.Fatal("no registration")
	}
	if got.ID != c.HostID() || got.Name != "hv-01" || got.GossipMember != "node-1" || got.Region != "global" || got.AZ != "nova" {
		t.Fatalf("identity: %+v", got)
	}
	if got.Status != structs.HostStatusInit || !got.Enabled || got.Driver != "fake" ||
		got.HypervisorType != "fake" || got.HypervisorVersion != "1.0" || got.Arch != "x86_64" {
		t.Fatalf("host fields: %+v", got)
	}
	if got.Usage != nil || got.BuildFailures != 0 {
		t.Fatalf("agent must leave usage to the servers: %+v", got)
	}
	want := map[string]structs.Inventory{
		structs.ResourceVCPU:     {Total: 16, Reserved: 0, MinUnit: 1, MaxUnit: 16, StepSize: 1, AllocationRatio: 4.0},
		structs.ResourceMemoryMB: {Total: 65536, Reserved: 512, MinUnit: 1, MaxUnit: 65536, StepSize: 1, AllocationRatio: 1.0},
		structs.ResourceDiskGB:   {Total: 1000, Reserved: 0, MinUnit: 1, MaxUnit: 1000, StepSize: 1, AllocationRatio: 1.0},
		"CUSTOM_FPGA":            {Total: 2, Reserved: 0, MinUnit: 1, MaxUnit: 2, StepSize: 1, AllocationRatio: 1.0},
	}
	if len(got.Inventories) != len(want) {
		t.Fatalf("inventories: %v", got.Inventories)
	}
	for class, w := range want {
		if inv := got.Inventories[class]; inv == nil || *inv != w {
			t.Errorf("inventory %s = %+v, want %+v", class, inv, w)
		}
	}
	if !reflect.DeepEqual(got.Traits, []string{"COMPUTE_NET_VIF_MODEL_VIRTIO", "HW_CPU_X86_AVX2"}) {
		t.Errorf("traits %v", got.Traits)
	}
	wantCaps := []string{"console_output", "crash_dump", "live_migrate", "migrate", "pause", "rescue", "resize", "set_password", "snapshot", "suspend"}
	if !reflect.DeepEqual(got.Capabilities, wantCaps) {
		t.Errorf("capabilities %v, want %v", got.Capabilities, wantCaps)
	}
	wantAttrs := map[string]string{"rack": "r1", "arch": "x86_64", "hypervisor_type": "fake", "cpu_model": "fake-cpu"}
	if !reflect.DeepEqual(got.Attributes, wantAttrs) {
		t.Errorf("attributes %v", got.Attributes)
	}

	// The host id survives a restart.
	id := c.HostID()
	shutdown(t, c)
	if c2 := h.newClient(); c2.HostID() != id {
		t.Fatalf("host id changed across restart: %s → %s", id, c2.HostID())
	}
}

func TestBuildHostReservations(t *testing.T) {
	cfg, err := Config{DataDir: "x", Driver: fake.New(fake.Config{}), RPC: newFakeServer(t), NodeName: "n1"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	// Reserved memory is capped at half the host's memory.
	h := buildHost(&cfg, "id", "fake", nil, &virt.HostInfo{VCPUs: 2, MemoryMB: 600, DiskGB: 10})
	if inv := h.Inventories[structs.ResourceMemoryMB]; inv.Reserved != 300 {
		t.Fatalf("reserved memory %d, want 300", inv.Reserved)
	}
	// The name falls back to the node name.
	if h.Name != "n1" {
		t.Fatalf("name %q", h.Name)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}

	cfg, _ = Config{DataDir: "x", Driver: fake.New(fake.Config{}), RPC: newFakeServer(t), HostName: "explicit",
		CPUAllocationRatio: 16, RAMAllocationRatio: 1.5, DiskAllocationRatio: 2, ReservedMemoryMB: -1,
		ReservedVCPUs: 2, ReservedDiskGB: 50}.withDefaults()
	h = buildHost(&cfg, "id", "fake", nil, &virt.HostInfo{Hostname: "driver-name", VCPUs: 8, MemoryMB: 4096, DiskGB: 40})
	if h.Name != "explicit" {
		t.Fatalf("name %q", h.Name)
	}
	inv := h.Inventories
	if inv["VCPU"].Reserved != 2 || inv["VCPU"].AllocationRatio != 16 || inv["MEMORY_MB"].Reserved != 0 ||
		inv["MEMORY_MB"].AllocationRatio != 1.5 || inv["DISK_GB"].Reserved != 40 || inv["DISK_GB"].AllocationRatio != 2 {
		t.Fatalf("inventories %+v %+v %+v", *inv["VCPU"], *inv["MEMORY_MB"], *inv["DISK_GB"])
	}

	cfg.TunnelIP = "192.0.2.5"
	if h = buildHost(&cfg, "id", "fake", nil, &virt.HostInfo{VCPUs: 1, MemoryMB: 512}); h.TunnelIP != "192.0.2.5" {
		t.Fatalf("tunnel endpoint %q", h.TunnelIP)
	}
	cfg.TunnelIP = "0.0.0.0"
	if _, err := cfg.withDefaults(); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("unspecified tunnel endpoint: %v", err)
	}

	if _, err := New(Config{}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("New with an empty config: %v", err)
	}
}

func TestHeartbeatAndReregister(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.srv.ttl = 100 * time.Millisecond
	h.start()
	waitFor(t, "heartbeats", func() bool { _, hb, _ := h.srv.counts(); return hb >= 3 })
	// Fingerprints ran meanwhile, but nothing changed: no new registration.
	if reg, _, _ := h.srv.counts(); reg != 1 {
		t.Fatalf("%d registrations, want 1", reg)
	}
	// Failed heartbeats are retried.
	h.srv.failNext("Host.Heartbeat", 2)
	_, before, _ := h.srv.counts()
	waitFor(t, "heartbeats after failures", func() bool { _, hb, _ := h.srv.counts(); return hb >= before+2 })
	// The servers forgot the host: the next heartbeat registers again.
	h.srv.forgetHosts()
	waitFor(t, "re-registration", func() bool { reg, _, _ := h.srv.counts(); return reg >= 2 })
}

// hostInfoDriver lets a test change the fingerprint under a fake driver.
type hostInfoDriver struct {
	*fake.Driver
	mu    sync.Mutex
	vcpus int64
}

func (d *hostInfoDriver) HostInfo(ctx context.Context) (*virt.HostInfo, error) {
	info, err := d.Driver.HostInfo(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.vcpus > 0 {
		info.VCPUs = d.vcpus
	}
	return info, nil
}

func TestFingerprintChangeReregisters(t *testing.T) {
	h := newHarness(t, fake.Config{VCPUs: 8})
	d := &hostInfoDriver{Driver: h.fake}
	h.driver = d
	h.start()
	if got := h.srv.lastRegistered().Inventories["VCPU"].Total; got != 8 {
		t.Fatalf("vcpus %d", got)
	}
	d.mu.Lock()
	d.vcpus = 12
	d.mu.Unlock()
	waitFor(t, "re-registration with 12 vcpus", func() bool {
		return h.srv.lastRegistered().Inventories["VCPU"].Total == 12
	})
	reg, _, _ := h.srv.counts()
	if reg != 2 {
		t.Fatalf("%d registrations, want 2", reg)
	}
}

func TestRegisterRetriesAndShutdownDuringStart(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.srv.failNext("Host.Register", 3)
	c := h.start() // retries until it works
	if reg, _, _ := h.srv.counts(); reg != 1 {
		t.Fatalf("%d registrations", reg)
	}
	shutdown(t, c)

	// Start never succeeds: Shutdown makes it return.
	h.srv.failNext("Host.Register", 1<<30)
	c = h.newClient()
	errc := make(chan error, 1)
	go func() { errc <- c.Start() }()
	time.AfterFunc(50*time.Millisecond, func() { _ = c.Shutdown() })
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("Start succeeded without registering")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Start did not return after Shutdown")
	}
}

func TestShutdownPromptAndIdempotent(t *testing.T) {
	baseline := runtime.NumGoroutine()
	h := newHarness(t, fake.Config{PowerLatency: time.Hour})
	c := h.start()
	a := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	// A runner is stuck in a slow driver call and the watcher is parked
	// in a 5-minute blocking query.
	h.srv.setDesired(a.ID, structs.AllocDesiredStopped)
	waitFor(t, "the power-off to start", func() bool { return h.fake.Calls("PowerOff") == 1 })
	waitFor(t, "the watcher to block", func() bool { return h.srv.blockedQueries() > 0 })
	shutdown(t, c)
	// Every goroutine is gone once the in-flight query returns.
	h.srv.close()
	waitFor(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= baseline })
	if ids := instances(t, h.fake); len(ids) != 1 {
		t.Fatalf("Shutdown must leave instances running: %v", ids)
	}
	if err := c.Shutdown(); err != nil {
		t.Fatalf("second Shutdown: %v", err)
	}
	if err := c.Start(); err == nil {
		t.Fatal("Start after Shutdown succeeded")
	}
}

func TestStartFailsOnInvalidHost(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.tweak = func(c *Config) { c.NodeName = ""; c.HostName = "" }
	h.driver = noNameDriver{h.fake}
	c := h.newClient()
	if err := c.Start(); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("Start with a nameless host: %v", err)
	}
}

// noNameDriver fingerprints a host without a name.
type noNameDriver struct{ *fake.Driver }

func (d noNameDriver) HostInfo(ctx context.Context) (*virt.HostInfo, error) {
	info, err := d.Driver.HostInfo(ctx)
	if info != nil {
		info.Hostname = ""
	}
	return info, err
}

// TestTunnelIPLostUnderOldLeaderComesBack: a leader of an older release
// stores the host without its tunnel endpoint; the client notices at a
// fingerprint tick and registers again, and once a current leader
// leads, the record keeps it (without an agent restart, and without
// registering again after that).
func TestTunnelIPLostUnderOldLeaderComesBack(t *testing.T) {
	h := newHarness(t, fake.Config{})
	h.tweak = func(cfg *Config) { cfg.TunnelIP = "192.0.2.7" }
	h.srv.mu.Lock()
	h.srv.oldLeader = true
	h.srv.mu.Unlock()
	c := h.start()
	waitFor(t, "registering again while the record lacks the endpoint", func() bool {
		reg, _, _ := h.srv.counts()
		return reg >= 2
	})
	h.srv.mu.Lock()
	h.srv.oldLeader = false
	h.srv.mu.Unlock()
	stored := func() string {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		return h.srv.stored[c.HostID()].TunnelIP
	}
	waitFor(t, "the record to carry the tunnel endpoint", func() bool { return stored() == "192.0.2.7" })
	reg, _, _ := h.srv.counts()
	gets := func() int {
		h.srv.mu.Lock()
		defer h.srv.mu.Unlock()
		return h.srv.gets
	}
	// Three more checks of the record pass without another
	// registration once it is right.
	n := gets()
	waitFor(t, "three more checks of the record", func() bool { return gets() >= n+3 })
	if again, _, _ := h.srv.counts(); again != reg {
		t.Fatalf("%d registrations after the record was right, want %d", again, reg)
	}
}
