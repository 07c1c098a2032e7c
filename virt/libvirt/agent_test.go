package libvirt_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"
	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// statusWait bounds how long an instance may take to reach a status:
// TCG guests on two busy cores are slow.
const statusWait = 90 * time.Second

// cloud is one in-process server and hypervisor agents whose libvirt
// drivers share the machine's libvirtd, each in a namespace of its own.
type cloud struct {
	t   *testing.T
	srv *server.Server

	mu    sync.Mutex
	hosts map[string]*host
}

// host is one hypervisor agent: its env (namespace, pool) outlives the
// agent, as a real hypervisor outlives a restarted agent.
type host struct {
	name      string
	env       *env
	dataDir   string
	syncEvery time.Duration
	drv       *libvirt.Driver
	agent     *client.Client
	// export is the host's disk export (diskExport).
	export *exportState
	// storageGB, above 0, makes the host a storage host too.
	storageGB int64
	// images, when set, is the agent's image cache.
	images client.ImageFiles
	// nbdAddr is the storage host's NBD server, which it advertises.
	nbdAddr string
	// backend is what keeps the storage host's volumes (file when
	// empty); ceph, how the host attaches RBD volumes.
	backend string
	ceph    *client.CephAttach
	// nbdTLS is the agent's client certificate for NBD exports.
	nbdTLS *client.NBDClientTLS
}

// Flavors small enough for TCG on a test machine.
var (
	flavorTiny  = &structs.Flavor{ID: "t1", Name: "t.tiny", VCPUs: 1, MemoryMB: 64, RootGB: 1, RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{}}
	flavorSmall = &structs.Flavor{ID: "t2", Name: "t.small", VCPUs: 1, MemoryMB: 96, RootGB: 2, RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{}}
)

func newCloud(t *testing.T) *cloud { return newCloudWith(t, nil) }

// newCloudWith is newCloud with the server's config edited by tweak.
func newCloudWith(t *testing.T, tweak func(*server.Config)) *cloud {
	t.Helper()
	needLibvirtd(t)
	cfg := &server.Config{
		NodeName: "s1", NodeID: uuid.NewString(), DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		BootstrapExpect: 1, GossipFast: true, HeartbeatTTL: 15 * time.Second, Logger: testLogger(t, "server"),
	}
	if tweak != nil {
		tweak(cfg)
	}
	s, err := server.NewServer(cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { _ = s.Shutdown() })
	c := &cloud{t: t, srv: s, hosts: map[string]*host{}}
	c.waitFor("a leader", 30*time.Second, func() error {
		if !s.IsLeader() {
			return errors.New("no leader")
		}
		return nil
	})
	if err := c.rpc("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{flavorTiny, flavorSmall}},
		&structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// rpc calls the server, retrying while it has no leader.
func (c *cloud) rpc(method string, args, reply any) error {
	var err error
	for range 100 {
		err = c.srv.RPC(method, args, reply)
		if k := structs.KindOf(err); err == nil || (k != structs.KindNoLeader && k != structs.KindUnavailable) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

func (c *cloud) waitFor(what string, wait time.Duration, cond func() error) {
	c.t.Helper()
	waitUntil(c.t, wait, what, cond)
}

// addHost starts a hypervisor agent with the libvirt driver; syncEvery
// is its power-sync interval.
func (c *cloud) addHost(name string, syncEvery time.Duration) *host {
	c.t.Helper()
	h := &host{name: name, env: newEnv(c.t, func(cfg *libvirt.Config) { cfg.HostName = name }),
		dataDir: c.t.TempDir(), syncEvery: syncEvery}
	h.drv = h.env.drv
	c.mu.Lock()
	c.hosts[name] = h
	c.mu.Unlock()
	c.startAgent(h)
	return h
}

// startAgent starts the host's agent on its current driver and waits
// until the host is up.
func (c *cloud) startAgent(h *host) {
	c.t.Helper()
	a, err := client.New(client.Config{
		DataDir: h.dataDir, NodeName: h.name, HostName: h.name, Driver: h.drv, RPC: c.srv,
		Logger: testLogger(c.t, "agent-"+h.name), ReportInterval: 20 * time.Millisecond, PowerSyncInterval: h.syncEvery,
		DiskExportURL: c.diskExport(h), StorageCapacityGB: h.storageGB, ImageFiles: h.images,
		StorageNBDAddress: h.nbdAddr, StorageBackend: h.backend, Ceph: h.ceph, NBDClientTLS: h.nbdTLS,
	})
	if err != nil {
		c.t.Fatal(err)
	}
	c.mu.Lock()
	h.agent = a
	c.mu.Unlock()
	go func() { _ = a.Start() }()
	c.t.Cleanup(func() { _ = a.Shutdown() })
	c.waitFor("host "+h.name+" up", 60*time.Second, func() error {
		hst := c.host(h.name)
		if hst == nil || !hst.Up() {
			return fmt.Errorf("host %s: %+v", h.name, hst)
		}
		return nil
	})
}

// restartAgent stops the host's agent and driver and starts new ones,
// as after a restart of the agent's process.
func (c *cloud) restartAgent(h *host) {
	c.t.Helper()
	if h.export != nil {
		h.export.gen.Add(1)
	}
	if err := h.agent.Shutdown(); err != nil {
		c.t.Fatal(err)
	}
	if err := h.drv.Close(); err != nil {
		c.t.Fatal(err)
	}
	h.drv = h.env.open()
	c.startAgent(h)
}

func (c *cloud) host(name string) *structs.Host {
	var out structs.HostListResponse
	if err := c.rpc("Host.List", &structs.HostListRequest{}, &out); err != nil {
		return nil
	}
	for _, h := range out.Hosts {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// hostOf returns the agent an instance is placed on.
func (c *cloud) hostOf(inst *structs.Instance) *host {
	c.t.Helper()
	var out structs.HostListResponse
	if err := c.rpc("Host.List", &structs.HostListRequest{}, &out); err != nil {
		c.t.Fatal(err)
	}
	for _, h := range out.Hosts {
		if h.ID == inst.HostID {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.hosts[h.Name]
		}
	}
	c.t.Fatalf("instance %s is on no known host (%q)", inst.ID, inst.HostID)
	return nil
}

// boot creates an instance and waits until it is ACTIVE.
func (c *cloud) boot(name string) *structs.Instance {
	c.t.Helper()
	var out structs.InstanceCreateResponse
	if err := c.rpc("Instance.Create", &structs.InstanceCreateRequest{Name: name, FlavorID: flavorTiny.ID, ImageID: "none",
		ProjectID: "p1", UserID: "u1", RequestID: "req-" + name}, &out); err != nil {
		c.t.Fatalf("create %s: %v", name, err)
	}
	return c.waitStatus(out.Instances[0].ID, "ACTIVE")
}

func (c *cloud) get(id string) *structs.Instance {
	c.t.Helper()
	var r structs.SingleInstanceResponse
	err := c.rpc("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &r)
	if structs.KindOf(err) == structs.KindNotFound {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return r.Instance
}

// waitStatus waits until the instance shows status with no task.
func (c *cloud) waitStatus(id, status string) *structs.Instance {
	c.t.Helper()
	var inst *structs.Instance
	c.waitFor(id+" "+status, statusWait, func() error {
		inst = c.get(id)
		switch {
		case inst == nil:
			return errors.New("instance gone")
		case inst.Status() == "ERROR" && status != "ERROR":
			return fmt.Errorf("instance in ERROR: %+v", inst.Fault)
		case inst.Status() != status || inst.TaskState != "" || inst.Task != nil:
			return fmt.Errorf("status %s task %q", inst.Status(), inst.TaskState)
		}
		return nil
	})
	return inst
}

// task starts an operation as an admin of the instance's project.
func (c *cloud) task(id, op string, tweak ...func(*structs.InstanceTaskRequest)) {
	c.t.Helper()
	args := &structs.InstanceTaskRequest{InstanceID: id, Op: op, ProjectID: "p1", UserID: "u1", Admin: true}
	for _, f := range tweak {
		f(args)
	}
	if err := c.rpc("Instance.Task", args, &structs.InstanceTaskResponse{}); err != nil {
		c.t.Fatalf("%s %s: %v", op, id, err)
	}
}

// expectDomain checks the state of an instance's domain on a host.
func expectDomain(t *testing.T, h *host, id string, want golibvirt.DomainState) {
	t.Helper()
	name := h.drv.DomainName(id)
	waitUntil(t, 10*time.Second, name+" state", func() error {
		if got := domainState(t, h.env.raw, name); got != want {
			return fmt.Errorf("domain %s is in state %d, want %d", name, got, want)
		}
		return nil
	})
}

// domainID is the id libvirt gives a running domain's QEMU process.
func domainID(t *testing.T, lv *golibvirt.Libvirt, name string) int32 {
	t.Helper()
	dom, err := lv.DomainLookupByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return dom.ID
}

// TestAgentLifecycle drives one instance through the servers and real
// agents on libvirt: boot, soft and hard reboot, stop, start, pause,
// unpause, suspend, resume, resize (to the other host) with confirm, and
// delete — checking the Nova status and the domain's real state at each
// step.
func TestAgentLifecycle(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	hv1, hv2 := c.addHost("hv1", 10*time.Second), c.addHost("hv2", 10*time.Second)
	start := time.Now()
	inst := c.boot("vm")
	t.Logf("boot to ACTIVE through the agent: %v", time.Since(start))
	id := inst.ID
	src := c.hostOf(inst)
	dst := hv2
	if src == hv2 {
		dst = hv1
	}
	name := src.drv.DomainName(id)
	expectDomain(t, src, id, golibvirt.DomainRunning)
	if got := len(domainNames(t, src.env.raw, src.env.ns)); got != 1 {
		t.Fatalf("%d domains on the source", got)
	}

	// Soft reboot of a guest without an OS is a reset: the same QEMU
	// process, and the firmware boots a second time.
	qemu := domainID(t, src.env.raw, name)
	bootsLogged := func(want int) func() error {
		return func() error {
			out, err := src.drv.ConsoleOutput(t.Context(), id, 0)
			if n := strings.Count(out, "SeaBIOS (version"); err != nil || n < want {
				return fmt.Errorf("%d boots logged, %v", n, err)
			}
			return nil
		}
	}
	waitUntil(t, 30*time.Second, "the first boot on the console", bootsLogged(1))
	c.task(id, structs.OpRebootSoft)
	c.waitStatus(id, "ACTIVE")
	expectDomain(t, src, id, golibvirt.DomainRunning)
	waitUntil(t, 30*time.Second, "a second boot on the console", bootsLogged(2))
	if got := domainID(t, src.env.raw, name); got != qemu {
		t.Errorf("soft reboot restarted QEMU (domain id %d → %d)", qemu, got)
	}
	// Hard reboot: a new QEMU process.
	c.task(id, structs.OpRebootHard)
	c.waitStatus(id, "ACTIVE")
	expectDomain(t, src, id, golibvirt.DomainRunning)
	if got := domainID(t, src.env.raw, name); got == qemu {
		t.Errorf("hard reboot kept QEMU process %d", got)
	}

	steps := []struct {
		op     string
		status string
		domain golibvirt.DomainState
	}{
		{structs.OpStop, "SHUTOFF", golibvirt.DomainShutoff},
		{structs.OpStart, "ACTIVE", golibvirt.DomainRunning},
		{structs.OpPause, "PAUSED", golibvirt.DomainPaused},
		{structs.OpUnpause, "ACTIVE", golibvirt.DomainRunning},
		{structs.OpSuspend, "SUSPENDED", golibvirt.DomainShutoff},
		{structs.OpResume, "ACTIVE", golibvirt.DomainRunning},
	}
	for _, st := range steps {
		begin := time.Now()
		c.task(id, st.op)
		got := c.waitStatus(id, st.status)
		expectDomain(t, src, id, st.domain)
		t.Logf("%s → %s in %v", st.op, st.status, time.Since(begin))
		if got.Fault != nil {
			t.Fatalf("%s left a fault: %+v", st.op, got.Fault)
		}
		if st.op == structs.OpSuspend {
			dom, _ := src.env.raw.DomainLookupByName(name)
			if saved, err := src.env.raw.DomainHasManagedSaveImage(dom, 0); err != nil || saved != 1 {
				t.Errorf("suspended without a managed save image: %d, %v", saved, err)
			}
		}
	}

	// Resize goes to the other host with the new flavor; confirming it
	// removes the source's domain.
	c.task(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = flavorSmall.ID })
	inst = c.waitStatus(id, "VERIFY_RESIZE")
	if c.hostOf(inst) != dst || inst.Flavor.Name != flavorSmall.Name {
		t.Fatalf("resized to %s with %s", c.hostOf(inst).name, inst.Flavor.Name)
	}
	expectDomain(t, dst, id, golibvirt.DomainRunning)
	expectDomain(t, src, id, golibvirt.DomainShutoff)
	if x := domainXML(t, dst.env.raw, dst.drv.DomainName(id), 0); x.Memory.Value != 96*1024 {
		t.Errorf("resized domain has %d KiB", x.Memory.Value)
	}
	c.task(id, structs.OpConfirmResize)
	c.waitStatus(id, "ACTIVE")
	waitUntil(t, 30*time.Second, "the source domain removed", func() error {
		if got := domainNames(t, src.env.raw, src.env.ns); len(got) != 0 {
			return fmt.Errorf("source still has %v", got)
		}
		return nil
	})

	// Delete: the domain and its volumes go.
	if err := c.rpc("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{id}, ProjectID: "p1", UserID: "u1", Admin: true},
		&structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(id+" deleted", statusWait, func() error {
		if i := c.get(id); i != nil {
			return fmt.Errorf("still %s/%s", i.Status(), i.TaskState)
		}
		return nil
	})
	waitUntil(t, 30*time.Second, "every domain and volume removed", func() error {
		for _, h := range []*host{hv1, hv2} {
			if got := domainNames(t, h.env.raw, h.env.ns); len(got) != 0 {
				return fmt.Errorf("%s still has domains %v", h.name, got)
			}
			for _, v := range volumeNames(t, h.env.raw, h.drv.PoolName()) {
				if !strings.HasPrefix(v, "base-") {
					return fmt.Errorf("%s still has volume %s", h.name, v)
				}
			}
		}
		return nil
	})
}

// TestAgentSeesGuestShutdownAtOnce: with the power sync an hour away, a
// domain destroyed behind the agent's back (a guest shutting down) shows
// SHUTOFF within seconds, through libvirt's lifecycle events.
func TestAgentSeesGuestShutdownAtOnce(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	h := c.addHost("hv1", time.Hour)
	id := c.boot("vm").ID
	dom, err := h.env.raw.DomainLookupByName(h.drv.DomainName(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.env.raw.DomainDestroy(dom); err != nil {
		t.Fatal(err)
	}
	destroyed := time.Now()
	waitUntil(t, 5*time.Second, "SHUTOFF", func() error {
		if inst := c.get(id); inst.Status() != "SHUTOFF" {
			return fmt.Errorf("status %s", inst.Status())
		}
		return nil
	})
	t.Logf("SHUTOFF %v after the domain was destroyed", time.Since(destroyed))
	// The user starts it again.
	c.task(id, structs.OpStart)
	c.waitStatus(id, "ACTIVE")
	expectDomain(t, h, id, golibvirt.DomainRunning)
}

// TestAgentRestartReattaches: a restarted agent (new driver, same data
// dir) finds its running domain, never defines or boots a second copy,
// and manages it as before.
func TestAgentRestartReattaches(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	h := c.addHost("hv1", time.Second)
	id := c.boot("vm").ID
	name := h.drv.DomainName(id)
	qemu := domainID(t, h.env.raw, name)

	c.restartAgent(h)
	time.Sleep(3 * time.Second) // a few power syncs of the new agent
	c.waitStatus(id, "ACTIVE")
	if got := domainNames(t, h.env.raw, h.env.ns); len(got) != 1 || got[0] != name {
		t.Fatalf("domains after the restart: %v, want only %s", got, name)
	}
	if got := domainID(t, h.env.raw, name); got != qemu {
		t.Fatalf("the guest was restarted: domain id %d → %d", qemu, got)
	}
	// A spawn of the existing instance (what a lost local state would
	// cause) returns it and creates nothing.
	info, err := h.drv.Spawn(ctx(t), tinySpec(id))
	if err != nil || info.ID != id {
		t.Fatalf("Spawn of the existing instance = %+v, %v", info, err)
	}
	if got := domainNames(t, h.env.raw, h.env.ns); len(got) != 1 {
		t.Fatalf("domains after a second Spawn: %v", got)
	}
	c.task(id, structs.OpStop)
	c.waitStatus(id, "SHUTOFF")
	expectDomain(t, h, id, golibvirt.DomainShutoff)
}
