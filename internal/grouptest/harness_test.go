package grouptest

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/diskxfer/diskxfertest"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/spec"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// The harness follows internal/lifecycletest's: servers and hypervisor
// agents in one process, agents talking to whichever server is alive.

var seq atomic.Int64

// latency is how long each fake hypervisor operation takes: long enough
// for transient states to be seen, short enough for CI.
const latency = 150 * time.Millisecond

type cloud struct {
	t       *testing.T
	servers []*server.Server
	mu      sync.Mutex
	hvs     map[string]*hypervisor
}

type hypervisor struct {
	name    string
	drv     *fake.Driver
	dataDir string
	agent   *client.Client
}

func logger(name string) hclog.Logger {
	level := hclog.Warn
	if os.Getenv("STRATUS_TEST_LOG") != "" {
		level = hclog.Debug
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level})
}

// newCloud starts servers (three unless told) and hosts.
func newCloud(t *testing.T, servers int, hosts ...string) *cloud {
	t.Helper()
	c := &cloud{t: t, hvs: map[string]*hypervisor{}}
	var join []string
	for i := 0; i < servers; i++ {
		n := seq.Add(1)
		cfg := &server.Config{
			NodeName: fmt.Sprintf("g%d", n), NodeID: fmt.Sprintf("00000000-0000-0000-0001-%012d", n),
			DataDir: t.TempDir(), BindAddr: "127.0.0.1", BootstrapExpect: servers, GossipFast: true,
			Join: join, HeartbeatTTL: 2 * time.Second, Logger: logger(fmt.Sprintf("g%d", n)),
		}
		s, err := server.NewServer(cfg)
		if err != nil {
			t.Fatalf("start server: %v", err)
		}
		t.Cleanup(func() { _ = s.Shutdown() })
		if join == nil {
			join = []string{s.Gossip().Addr()}
		}
		c.servers = append(c.servers, s)
	}
	c.waitFor("a leader", func() error {
		for _, s := range c.servers {
			if s.IsLeader() {
				return nil
			}
		}
		return fmt.Errorf("no leader")
	})
	if err := c.rpc("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		c.addHost(h)
	}
	return c
}

// follower is a server that does not lead (requests are forwarded).
func (c *cloud) follower() *server.Server {
	for _, s := range c.servers {
		if !s.IsLeader() {
			return s
		}
	}
	return c.servers[0]
}

// rpc calls the servers, retrying while a leader is elected.
func (c *cloud) rpc(method string, args, reply any) error {
	var err error
	for i := 0; i < 100; i++ {
		err = c.follower().RPC(method, args, reply)
		if err == nil || (structs.KindOf(err) != structs.KindNoLeader && structs.KindOf(err) != structs.KindUnavailable) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

func (c *cloud) must(method string, args, reply any) {
	c.t.Helper()
	if err := c.rpc(method, args, reply); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *cloud) waitFor(what string, cond func() error) {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (c *cloud) addHost(name string) *hypervisor {
	c.t.Helper()
	drv := fake.New(fake.Config{HostName: name, SpawnLatency: latency, DestroyLatency: latency / 2, PowerLatency: latency})
	hv := &hypervisor{name: name, drv: drv, dataDir: c.t.TempDir()}
	c.mu.Lock()
	c.hvs[name] = hv
	c.mu.Unlock()
	export := diskxfertest.Serve(c.t)
	a, err := client.New(client.Config{DataDir: hv.dataDir, NodeName: name, Driver: drv, RPC: rpcVia{c},
		Logger: logger("agent-" + name), ReportInterval: 20 * time.Millisecond, PowerSyncInterval: 500 * time.Millisecond,
		DiskExportURL: export.URL})
	if err != nil {
		c.t.Fatal(err)
	}
	export.Set(a)
	hv.agent = a
	go func() { _ = a.Start() }()
	c.t.Cleanup(func() { _ = a.Shutdown() })
	c.waitFor("host "+name+" up", func() error {
		if h := c.host(name); h == nil || !h.Up() {
			return fmt.Errorf("host %s: %+v", name, h)
		}
		return nil
	})
	return hv
}

// killHost stops a host's agent: the servers see the host go down once
// its heartbeat lapses.
func (c *cloud) killHost(name string) {
	c.t.Helper()
	c.mu.Lock()
	hv := c.hvs[name]
	c.mu.Unlock()
	if err := hv.agent.Shutdown(); err != nil {
		c.t.Fatalf("stop agent %s: %v", name, err)
	}
}

type rpcVia struct{ c *cloud }

func (r rpcVia) RPC(method string, args, reply any) error { return r.c.rpc(method, args, reply) }

func (c *cloud) hosts() []*structs.Host {
	var out structs.HostListResponse
	if err := c.rpc("Host.List", &structs.HostListRequest{}, &out); err != nil {
		return nil
	}
	return out.Hosts
}

func (c *cloud) host(name string) *structs.Host {
	for _, h := range c.hosts() {
		if h.Name == name {
			return h
		}
	}
	return nil
}

func (c *cloud) hostNames() map[string]string {
	names := map[string]string{}
	for _, h := range c.hosts() {
		names[h.ID] = h.Name
	}
	return names
}

// parse parses an HCL spec.
func (c *cloud) parse(src string, vars ...string) *structs.InstanceGroupSpec {
	c.t.Helper()
	s, err := spec.Parse("test.hcl", []byte(src), &spec.Options{Vars: vars})
	if err != nil {
		c.t.Fatalf("parse: %v", err)
	}
	return s
}

// register runs a spec and returns the version stored.
func (c *cloud) register(s *structs.InstanceGroupSpec) *structs.InstanceGroupRegisterResponse {
	c.t.Helper()
	var out structs.InstanceGroupRegisterResponse
	c.must("InstanceGroup.Register", &structs.InstanceGroupRegisterRequest{Spec: s}, &out)
	return &out
}

// group reads a group (nil when gone).
func (c *cloud) group(name string) *structs.InstanceGroupResponse {
	c.t.Helper()
	var out structs.InstanceGroupResponse
	err := c.rpc("InstanceGroup.Get", &structs.InstanceGroupSpecificRequest{Name: name}, &out)
	if structs.KindOf(err) == structs.KindNotFound {
		return nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	return &out
}

// waitDeployed waits for the deployment of version to be successful.
func (c *cloud) waitDeployed(name string, version uint64) *structs.InstanceGroupResponse {
	c.t.Helper()
	var g *structs.InstanceGroupResponse
	c.waitFor(fmt.Sprintf("%s version %d deployed", name, version), func() error {
		g = c.group(name)
		switch {
		case g == nil:
			return fmt.Errorf("no group")
		case g.Deployment == nil:
			return fmt.Errorf("no deployment")
		case g.Deployment.Version != version || g.Deployment.Status != structs.DeploymentSuccessful:
			return fmt.Errorf("deployment of version %d: %s: %s (members: %s)", g.Deployment.Version, g.Deployment.Status,
				g.Deployment.Description, describe(g.Members))
		}
		return nil
	})
	return g
}

// describe summarises members for failure messages.
func describe(list []*structs.Instance) string {
	var parts []string
	for _, m := range list {
		p := m.Name + "=" + m.Status()
		if m.TaskState != "" {
			p += "/" + m.TaskState
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// names returns the members' names, sorted.
func names(list []*structs.Instance) []string {
	var out []string
	for _, m := range list {
		out = append(out, m.Name)
	}
	sort.Strings(out)
	return out
}

// ids maps members' names to their ids.
func ids(list []*structs.Instance) map[string]string {
	out := map[string]string{}
	for _, m := range list {
		out[m.Name] = m.ID
	}
	return out
}

// watcher follows a group's members with blocking queries and records
// the most members ever seen not ACTIVE at once.
type watcher struct {
	mu        sync.Mutex
	maxBusy   int
	worst     string
	snapshots int
	done      chan struct{}
	wg        sync.WaitGroup
}

func (c *cloud) watch(name string) *watcher {
	w := &watcher{done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var index uint64
		for {
			select {
			case <-w.done:
				return
			default:
			}
			var out structs.InstanceGroupResponse
			err := c.follower().RPC("InstanceGroup.Get", &structs.InstanceGroupSpecificRequest{Name: name,
				QueryOptions: structs.QueryOptions{MinQueryIndex: index, MaxQueryTime: 200 * time.Millisecond, AllowStale: true}}, &out)
			if err != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			index = out.Index
			busy := 0
			for _, m := range out.Members {
				if m.Status() != "ACTIVE" || m.TaskState != "" || m.Task != nil {
					busy++
				}
			}
			w.mu.Lock()
			w.snapshots++
			if busy > w.maxBusy {
				w.maxBusy, w.worst = busy, describe(out.Members)
			}
			w.mu.Unlock()
		}
	}()
	return w
}

func (w *watcher) stop() (maxBusy int, worst string, snapshots int) {
	close(w.done)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxBusy, w.worst, w.snapshots
}
