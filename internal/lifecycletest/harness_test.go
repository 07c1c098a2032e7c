package lifecycletest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/diskxfer/diskxfertest"
	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/internal/clienttest"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

var seq atomic.Int64

// latency is how long each fake hypervisor operation takes: long enough
// that transient states are observable, short enough for CI.
const latency = 300 * time.Millisecond

// cloud is a small Stratus: servers and hypervisor agents in-process.
type cloud struct {
	t       *testing.T
	servers []*server.Server
	mu      sync.Mutex
	hvs     map[string]*hypervisor
	// floor is the index of the last write the test made: reads wait
	// until they reflect it, so a read right after a leader change never
	// shows the state from before the test's own last operation.
	floor atomic.Uint64
}

// wrote raises the read floor to index.
func (c *cloud) wrote(index uint64) {
	for {
		cur := c.floor.Load()
		if index <= cur || c.floor.CompareAndSwap(cur, index) {
			return
		}
	}
}

// readOpts are the options of a read that reflects the test's writes.
func (c *cloud) readOpts() structs.QueryOptions {
	f := c.floor.Load()
	if f == 0 {
		return structs.QueryOptions{}
	}
	return structs.QueryOptions{MinQueryIndex: f - 1, MaxQueryTime: 10 * time.Second}
}

// hypervisor is one host: its driver outlives the agent that drives it,
// as a real hypervisor outlives a restarted agent.
type hypervisor struct {
	name    string
	drv     *fake.Driver
	dataDir string
	agent   *client.Client
	via     *server.Server
	// export serves the hypervisor's disks to moves, across restarts of
	// its agent.
	export *diskxfertest.Export
	// hold, when it holds a channel, makes the image cache's downloads
	// wait until it is closed; fetching is told of each that waits.
	hold     atomic.Pointer[chan struct{}]
	fetching chan string
}

// heldFetcher is a hypervisor's image fetcher, which its hold stops.
type heldFetcher struct {
	hv    *hypervisor
	inner imagecache.Fetcher
}

func (f heldFetcher) Fetch(ctx context.Context, img imagecache.Image) (io.ReadCloser, error) {
	if ch := f.hv.hold.Load(); ch != nil {
		select {
		case f.hv.fetching <- img.ID:
		default:
		}
		<-*ch
	}
	return f.inner.Fetch(ctx, img)
}

type cloudOpts struct {
	servers int
	hosts   []string
	tweak   func(*server.Config)
}

func logger(name string) hclog.Logger {
	level := hclog.Warn
	if os.Getenv("STRATUS_TEST_LOG") != "" {
		level = hclog.Debug
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level})
}

func newCloud(t *testing.T, o cloudOpts) *cloud {
	t.Helper()
	if o.servers == 0 {
		o.servers = 1
	}
	c := &cloud{t: t, hvs: map[string]*hypervisor{}}
	var join []string
	for i := 0; i < o.servers; i++ {
		n := seq.Add(1)
		cfg := &server.Config{
			NodeName: fmt.Sprintf("s%d", n), NodeID: fmt.Sprintf("00000000-0000-0000-0000-%012d", n),
			DataDir: t.TempDir(), BindAddr: "127.0.0.1", BootstrapExpect: o.servers, GossipFast: true,
			Join: join, HeartbeatTTL: 2 * time.Second, Logger: logger(fmt.Sprintf("s%d", n)),
		}
		if o.tweak != nil {
			o.tweak(cfg)
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
		if c.leader() == nil {
			return fmt.Errorf("no leader")
		}
		return nil
	})
	if err := c.rpc("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	for _, h := range o.hosts {
		c.addHost(h)
	}
	return c
}

// live returns the servers not dropped.
func (c *cloud) live() []*server.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*server.Server(nil), c.servers...)
}

// drop forgets a server that was shut down.
func (c *cloud) drop(s *server.Server) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var keep []*server.Server
	for _, x := range c.servers {
		if x != s {
			keep = append(keep, x)
		}
	}
	c.servers = keep
}

func (c *cloud) leader() *server.Server {
	for _, s := range c.live() {
		if s.IsLeader() {
			return s
		}
	}
	return nil
}

// term is the highest Raft term any live server has seen.
func (c *cloud) term() uint64 {
	var t uint64
	for _, s := range c.live() {
		t = max(t, s.Raft().CurrentTerm())
	}
	return t
}

// follower returns a live server that is not the leader (or the leader
// when it is alone): agents talk to it so a leader can be killed under
// them.
func (c *cloud) follower() *server.Server {
	live := c.live()
	for _, s := range live {
		if !s.IsLeader() {
			return s
		}
	}
	return live[0]
}

// rpc calls the servers, retrying while a leader is being elected.
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

func (c *cloud) waitFor(what string, cond func() error) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// addHost starts a hypervisor and its agent and waits for it to be up.
func (c *cloud) addHost(name string) *hypervisor {
	c.t.Helper()
	return c.addHostWith(name, fake.Config{SpawnLatency: latency, DestroyLatency: latency / 2, PowerLatency: latency})
}

// addHostWith starts a hypervisor configured by cfg.
func (c *cloud) addHostWith(name string, cfg fake.Config) *hypervisor {
	c.t.Helper()
	cfg.HostName = name
	drv := fake.New(cfg)
	hv := &hypervisor{name: name, drv: drv, dataDir: c.t.TempDir(), fetching: make(chan string, 8)}
	c.mu.Lock()
	c.hvs[name] = hv
	c.mu.Unlock()
	c.startAgent(name)
	c.waitFor("host "+name+" up", func() error {
		h := c.host(name)
		if h == nil || !h.Up() {
			return fmt.Errorf("host %s: %+v", name, h)
		}
		return nil
	})
	return hv
}

func (c *cloud) hv(name string) *hypervisor {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hvs[name]
}

// startAgent starts (or restarts) the agent of a hypervisor.
func (c *cloud) startAgent(name string) {
	c.t.Helper()
	hv := c.hv(name)
	hv.via = c.follower()
	if hv.export == nil {
		hv.export = diskxfertest.Serve(c.t)
	}
	var a *client.Client
	cache, err := imagecache.New(imagecache.Config{Dir: filepath.Join(hv.dataDir, "image-cache"), Fetcher: heldFetcher{hv: hv, inner: clienttest.Fetcher{Server: c.leader}},
		InUse: func() map[string]bool { return a.ImagesInUse() }})
	if err != nil {
		c.t.Fatal(err)
	}
	a, err = client.New(client.Config{DataDir: hv.dataDir, NodeName: name, Driver: hv.drv, RPC: rpcVia{c},
		Logger: logger("agent-" + name), ReportInterval: 20 * time.Millisecond, PowerSyncInterval: 500 * time.Millisecond,
		DiskExportURL: hv.export.URL, ImageUploader: clienttest.Uploader{Server: c.leader}, ImageFiles: cache})
	if err != nil {
		c.t.Fatal(err)
	}
	hv.export.Set(a)
	hv.agent = a
	go func() { _ = a.Start() }()
	c.t.Cleanup(func() { _ = a.Shutdown() })
}

// stopAgent stops a hypervisor's agent; its instances keep running.
func (c *cloud) stopAgent(name string) {
	c.t.Helper()
	if err := c.hv(name).agent.Shutdown(); err != nil {
		c.t.Fatalf("stop agent %s: %v", name, err)
	}
}

// rpcVia lets agents reach whichever server is alive.
type rpcVia struct{ c *cloud }

func (r rpcVia) RPC(method string, args, reply any) error { return r.c.rpc(method, args, reply) }

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

func (c *cloud) hostName(id string) string {
	var out structs.HostListResponse
	if err := c.rpc("Host.List", &structs.HostListRequest{}, &out); err != nil {
		return ""
	}
	for _, h := range out.Hosts {
		if h.ID == id {
			return h.Name
		}
	}
	return ""
}

// boot creates an instance and waits for it to be ACTIVE.
func (c *cloud) boot(name, flavor string) string {
	c.t.Helper()
	var out structs.InstanceCreateResponse
	if err := c.rpc("Instance.Create", &structs.InstanceCreateRequest{Name: name, FlavorID: flavor, ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", RequestID: "req-create-" + name}, &out); err != nil {
		c.t.Fatalf("create %s: %v", name, err)
	}
	id := out.Instances[0].ID
	c.waitStatus(id, "ACTIVE")
	return id
}

func (c *cloud) get(id string) (*structs.Instance, []*structs.Allocation) {
	c.t.Helper()
	var r structs.SingleInstanceResponse
	err := c.rpc("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id, QueryOptions: c.readOpts()}, &r)
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
	var allocs structs.AllocListResponse
	if err := c.rpc("Alloc.List", &structs.AllocListRequest{InstanceID: id}, &allocs); err != nil {
		c.t.Fatal(err)
	}
	return r.Instance, allocs.Allocs
}

func (c *cloud) inst(id string) *structs.Instance {
	c.t.Helper()
	i, _ := c.get(id)
	return i
}

func (c *cloud) waitStatus(id, status string) *structs.Instance {
	c.t.Helper()
	var inst *structs.Instance
	c.waitFor(id+" "+status, func() error {
		inst = c.inst(id)
		switch {
		case inst == nil:
			return fmt.Errorf("instance gone")
		case inst.Status() == "ERROR" && status != "ERROR":
			return fmt.Errorf("instance in ERROR: %+v", inst.Fault)
		case inst.Status() != status || inst.TaskState != "" || inst.Task != nil:
			return fmt.Errorf("status %s task %q", inst.Status(), inst.TaskState)
		}
		return nil
	})
	return inst
}

func (c *cloud) waitGone(id string) {
	c.t.Helper()
	c.waitFor(id+" gone", func() error {
		if i := c.inst(id); i != nil {
			return fmt.Errorf("still %s/%s", i.Status(), i.TaskState)
		}
		return nil
	})
}

// task starts an operation as an admin of the instance's project.
func (c *cloud) task(id, op string, tweak ...func(*structs.InstanceTaskRequest)) (*structs.InstanceTaskResponse, error) {
	// The request ID is the client's, as the Nova API's is, so c.rpc's
	// retries after a leader change are recognised as one request.
	args := &structs.InstanceTaskRequest{InstanceID: id, Op: op, ProjectID: "p1", UserID: "u1", Admin: true,
		RequestID: "req-" + uuid.NewString()}
	for _, f := range tweak {
		f(args)
	}
	var out structs.InstanceTaskResponse
	err := c.rpc("Instance.Task", args, &out)
	c.wrote(out.Index)
	return &out, err
}

func (c *cloud) mustTask(id, op string, tweak ...func(*structs.InstanceTaskRequest)) *structs.InstanceTaskResponse {
	c.t.Helper()
	out, err := c.task(id, op, tweak...)
	if err != nil {
		c.t.Fatalf("%s %s: %v", op, id, err)
	}
	return out
}

// watch records every distinct API status (with task state) an instance
// shows until stop is called.
func (c *cloud) watch(id string) (stop func() []string) {
	var (
		mu   sync.Mutex
		seen []string
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		var index uint64
		for {
			select {
			case <-done:
				return
			default:
			}
			var r structs.SingleInstanceResponse
			err := c.follower().RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id,
				QueryOptions: structs.QueryOptions{MinQueryIndex: index, MaxQueryTime: 200 * time.Millisecond, AllowStale: true}}, &r)
			if err != nil || r.Instance == nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			index = r.Index
			s := r.Instance.Status() + "/" + r.Instance.TaskState
			mu.Lock()
			if len(seen) == 0 || seen[len(seen)-1] != s {
				seen = append(seen, s)
			}
			mu.Unlock()
		}
	}()
	return func() []string {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// actions reads an instance's actions.
func (c *cloud) actions(id string) []*structs.InstanceAction {
	c.t.Helper()
	var out structs.InstanceActionListResponse
	if err := c.rpc("Instance.Actions", &structs.InstanceActionListRequest{InstanceID: id}, &out); err != nil {
		c.t.Fatal(err)
	}
	return out.Actions
}

func (c *cloud) migrations(id string) []*structs.Migration {
	c.t.Helper()
	var out structs.MigrationListResponse
	if err := c.rpc("Migration.List", &structs.MigrationListRequest{InstanceID: id}, &out); err != nil {
		c.t.Fatal(err)
	}
	return out.Migrations
}

// instancesOn counts the instances a hypervisor really runs.
func (hv *hypervisor) instances(t *testing.T) []string {
	t.Helper()
	ids, err := hv.drv.ListInstances(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return ids
}
