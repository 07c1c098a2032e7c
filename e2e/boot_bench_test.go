package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
	"github.com/stratus-cloud/stratus/internal/benchprof"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// BenchmarkBootThroughput boots servers through the HTTP APIs of a
// 3-server cluster (in-process agents, real Raft over loopback TCP) with
// STRATUS_BOOT_HOSTS simulated hosts (default 1,000). Concurrent clients
// send single boots — one server per request, the realistic case — to
// POST /compute/v2.1/servers with a Keystone token, then to the native
// POST /v1/instances. The simulated hosts register and heartbeat over
// RPC and report their allocations running in one batch per wake-up of
// the same blocking Alloc.GetHostAllocs query a real agent runs. It
// reports boots/s accepted (every request answered), boots/s reaching
// ACTIVE (every allocation reported running) and request latency.
func BenchmarkBootThroughput(b *testing.B) {
	hosts := bootSize("STRATUS_BOOT_HOSTS", 1000, 100)
	c := startBootCluster(b, hosts)
	for _, api := range []string{"nova", "native"} {
		b.Run("api="+api, func(b *testing.B) {
			for n := 0; n < b.N; n++ {
				c.bootRound(b, api, fmt.Sprintf("%s-%d", api, n))
			}
		})
	}
	c.checkAllActive(b)
}

// simNodeSecret is the node secret of every simulated host, as one
// agent's hosts share its secret.
const simNodeSecret = "boot-bench-simulated-agent-node-secret"

// bootCluster is three in-process server agents and the simulated hosts
// behind them.
type bootCluster struct {
	agents []*agent.Agent
	// pools are the simulated hosts' connections, one each: every real
	// agent has its own session to a server.
	pools []*rpc.ConnPool
	// token is the admin's; tokens are the clients', one each, as
	// separate users would have (the API rate-limits per credential).
	token   string
	tokens  []string
	project string
	hostIDs []string
	client  *http.Client
	// running counts the allocations the simulated hosts have reported
	// running; created counts the instances the clients have created.
	running atomic.Int64
	created atomic.Int64
	// reports counts the simulated hosts' Alloc.UpdateFromClient calls.
	reports atomic.Int64
	ids     []string
}

// bootSize is the setting name from the environment, else full, or small
// under STRATUS_BENCH_SMALL (make bench-smoke).
func bootSize(name string, full, small int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	if os.Getenv("STRATUS_BENCH_SMALL") != "" {
		return small
	}
	return full
}

func startBootCluster(b *testing.B, hosts int) *bootCluster {
	c := &bootCluster{}
	var first string
	for i := 0; i < 3; i++ {
		zero := 0
		cfg := &agent.Config{
			NodeName: fmt.Sprintf("bench-s%d", i+1), DataDir: b.TempDir(), BindAddr: "127.0.0.1",
			Ports: &agent.PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
			// Raft's timeouts ×5: the whole cluster, its hosts and its
			// clients share two cores, and a starved heartbeat must not
			// cost the leadership mid-run.
			Server: &agent.ServerConfig{Enabled: true, BootstrapExpect: 3, HeartbeatTTL: "1h", RaftTimeScale: 5},
		}
		if first != "" {
			cfg.Server.RetryJoin = []string{first}
		}
		if err := cfg.Finalize(); err != nil {
			b.Fatal(err)
		}
		a, err := agent.New(cfg, hclog.NewNullLogger())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = a.Shutdown() })
		if first == "" {
			first = a.GossipAddr()
		}
		c.agents = append(c.agents, a)
	}
	// Registered after the agents' cleanups, so it runs first: the
	// simulated hosts stop before their servers do.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	b.Cleanup(func() {
		cancel()
		for _, p := range c.pools {
			_ = p.Shutdown()
		}
		wg.Wait()
	})
	// Retried for a while: a new cluster may refuse calls until its
	// leader is settled (its own credential ready, leadership moved).
	eventually(b, "the dev flavors and identity seeded", 60*time.Second, func() error {
		leader := c.waitLeader(b).Server()
		if err := leader.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{}); err != nil {
			return err
		}
		return leader.RPC("Identity.SeedDev", &structs.IdentitySeedRequest{}, &structs.GenericResponse{})
	})
	c.client = &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 1024}}
	c.token = c.keystoneToken(b)
	c.unlimitedQuota(b)
	c.registerHosts(b, hosts)
	for i, id := range c.hostIDs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.simulateHost(ctx, c.pools[i], id, c.agents[i%len(c.agents)].RPCAddr())
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.heartbeat(ctx)
	}()
	return c
}

func (c *bootCluster) waitLeader(b *testing.B) *agent.Agent {
	var leader *agent.Agent
	eventually(b, "a leader of three servers", 60*time.Second, func() error {
		for _, a := range c.agents {
			if a.Server().IsLeader() {
				leader = a
				return nil
			}
		}
		return fmt.Errorf("no leader")
	})
	return leader
}

// keystoneToken gets a project-scoped token for devstack's admin.
func (c *bootCluster) keystoneToken(b *testing.B) string {
	body := `{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"admin","domain":{"id":"default"},"password":"admin"}}},` +
		`"scope":{"project":{"name":"admin","domain":{"id":"default"}}}}}`
	var token string
	eventually(b, "a Keystone token", 60*time.Second, func() error {
		resp, err := c.client.Post("http://"+c.agents[0].HTTPAddr()+"/identity/v3/auth/tokens", "application/json", bytes.NewBufferString(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		msg, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("status %d: %s", resp.StatusCode, msg)
		}
		token = resp.Header.Get("X-Subject-Token")
		var out struct {
			Token struct{ Project struct{ ID string } }
		}
		if err := json.Unmarshal(msg, &out); err != nil {
			return err
		}
		c.project = out.Token.Project.ID
		return nil
	})
	return token
}

// unlimitedQuota lifts the admin project's Nova quotas (10 instances by
// default), through the Compute API as an operator would.
func (c *bootCluster) unlimitedQuota(b *testing.B) {
	body := `{"quota_set":{"instances":-1,"cores":-1,"ram":-1}}`
	req, err := http.NewRequest(http.MethodPut, "http://"+c.agents[0].HTTPAddr()+"/compute/v2.1/os-quota-sets/"+c.project, bytes.NewBufferString(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if msg, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusOK {
		b.Fatalf("lift quotas: status %d: %s", resp.StatusCode, msg)
	}
}

// registerHosts registers hosts with room for 64 m1.tiny each (16 cores
// at ratio 4, 64 GiB), as BenchmarkClusterPlacement's hosts.
func (c *bootCluster) registerHosts(b *testing.B, n int) {
	// One introduction for every new host, as an operator's
	// `cloudctl operator node-intro create` for a batch of agents.
	intro, _, err := c.waitLeader(b).Server().NodeIntroToken("", time.Hour)
	if err != nil {
		b.Fatalf("node introduction: %v", err)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("sim-%05d", i)
		c.hostIDs = append(c.hostIDs, id)
		h := &structs.Host{ID: id, Name: "hv-" + id, AZ: "nova", Enabled: true, Arch: "x86_64", HypervisorType: "fake",
			Inventories: map[string]*structs.Inventory{
				structs.ResourceVCPU:     {Total: 16, MinUnit: 1, MaxUnit: 16, StepSize: 1, AllocationRatio: 4},
				structs.ResourceMemoryMB: {Total: 65536, MinUnit: 1, MaxUnit: 65536, StepSize: 1, AllocationRatio: 1},
				structs.ResourceDiskGB:   {Total: 1000, MinUnit: 1, MaxUnit: 1000, StepSize: 1, AllocationRatio: 1},
			}}
		addr := c.agents[i%len(c.agents)].RPCAddr()
		pool := rpc.NewConnPool(rpc.PoolConfig{})
		c.pools = append(c.pools, pool)
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			req := &structs.HostRegisterRequest{Host: h, IntroToken: intro, WriteRequest: structs.WriteRequest{AuthToken: simNodeSecret}}
			if err := pool.RPC(addr, "Host.Register", req, &structs.HostRegisterResponse{}); err != nil {
				errs <- fmt.Errorf("register %s: %w", h.ID, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// simulateHost is a fake hypervisor agent: it watches its host's
// allocations with the blocking query a real agent runs and reports
// every new one running, all of a wake-up's in one batch.
func (c *bootCluster) simulateHost(ctx context.Context, pool *rpc.ConnPool, hostID, addr string) {
	var index uint64
	reported := map[string]bool{}
	for ctx.Err() == nil {
		var resp structs.AllocIndexResponse
		req := &structs.AllocHostRequest{HostID: hostID, QueryOptions: structs.QueryOptions{
			MinQueryIndex: index, MaxQueryTime: 5 * time.Second, AllowStale: true, AuthToken: simNodeSecret}}
		if err := pool.RPC(addr, "Alloc.GetHostAllocs", req, &resp); err != nil {
			if ctx.Err() == nil {
				time.Sleep(100 * time.Millisecond) // a retry backoff, as a real agent's
			}
			continue
		}
		index = resp.Index
		var updates []*structs.AllocClientUpdate
		for id := range resp.Allocs {
			if !reported[id] {
				updates = append(updates, &structs.AllocClientUpdate{AllocID: id, ClientState: structs.AllocClientRunning, PowerState: structs.PowerRunning})
			}
		}
		if len(updates) == 0 {
			continue
		}
		sort.Slice(updates, func(i, j int) bool { return updates[i].AllocID < updates[j].AllocID })
		update := &structs.AllocUpdateRequest{HostID: hostID, Updates: updates, WriteRequest: structs.WriteRequest{AuthToken: simNodeSecret}}
		err := pool.RPC(addr, "Alloc.UpdateFromClient", update, &structs.GenericResponse{})
		c.reports.Add(1)
		if err != nil {
			index = 0 // look again and report again
			continue
		}
		for _, u := range updates {
			reported[u.AllocID] = true
		}
		c.running.Add(int64(len(updates)))
	}
}

// waitRunning waits until the simulated hosts have reported target
// allocations running. It looks every 2 ms, not at eventually's 100 ms:
// the time it returns at is the round's ACTIVE figure, and a round lasts
// about two seconds.
func (c *bootCluster) waitRunning(b *testing.B, target int64) {
	deadline := time.Now().Add(10 * time.Minute)
	for c.running.Load() < target {
		if time.Now().After(deadline) {
			b.Fatalf("timed out waiting for every boot ACTIVE: %d of %d allocations running", c.running.Load(), target)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// heartbeat keeps every simulated host alive in one call, as the TTL
// fallback needs.
func (c *bootCluster) heartbeat(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		req := &structs.HostHeartbeatRequest{HostIDs: c.hostIDs, WriteRequest: structs.WriteRequest{AuthToken: simNodeSecret}}
		_ = c.pools[0].RPC(c.agents[0].RPCAddr(), "Host.Heartbeat", req, &structs.HostRegisterResponse{})
	}
}

// bootRound sends STRATUS_BOOT_REQUESTS single boots (default 2,000)
// from STRATUS_BOOT_CLIENTS concurrent clients (default 64), spread
// over the three agents, and waits until all of them are ACTIVE.
func (c *bootCluster) bootRound(b *testing.B, api, prefix string) {
	requests := bootSize("STRATUS_BOOT_REQUESTS", 2000, 100)
	clients := bootSize("STRATUS_BOOT_CLIENTS", 64, 8)
	for len(c.tokens) < clients {
		c.tokens = append(c.tokens, c.keystoneToken(b))
	}
	target := c.created.Load() + int64(requests)
	var next atomic.Int64
	lat := make([][]time.Duration, clients)
	ids := make([][]string, clients)
	errs := make(chan error, clients)
	var wg sync.WaitGroup
	raftStart, cpuStart, reportsStart := c.raftIndex(b), cpuTime(), c.reports.Load()
	allocStart, gcStart := heapAllocated()
	stopProfile := benchprof.Start(b, "."+prefix) // the timed round alone
	writeAllocProfile(b, "."+prefix+".start")
	start := time.Now()
	for w := 0; w < clients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			base := "http://" + c.agents[w%len(c.agents)].HTTPAddr()
			for {
				r := next.Add(1)
				if r > int64(requests) {
					return
				}
				t0 := time.Now()
				id, err := c.boot(api, base, c.tokens[w], fmt.Sprintf("%s-%d", prefix, r))
				if err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
				ids[w] = append(ids[w], id)
				c.created.Add(1)
			}
		}()
	}
	wg.Wait()
	accepted := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	c.waitRunning(b, target)
	active := time.Since(start)
	stopProfile()
	writeAllocProfile(b, "."+prefix+".end")
	entries, cpu, reports := c.raftIndex(b)-raftStart, cpuTime()-cpuStart, c.reports.Load()-reportsStart
	allocEnd, gcEnd := heapAllocated()
	allocKiB := float64(allocEnd-allocStart) / 1024 / float64(requests)
	var all []time.Duration
	for w := range lat {
		all = append(all, lat[w]...)
		c.ids = append(c.ids, ids[w]...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) time.Duration { return all[int(p*float64(len(all)-1)+0.5)] }
	b.ReportMetric(float64(requests)/accepted.Seconds(), "accepted/s")
	b.ReportMetric(float64(requests)/active.Seconds(), "active/s")
	b.ReportMetric(float64(pct(0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
	// Wall-clock rates depend on the machine's other load; these two
	// depend on the code: Raft entries and CPU (the whole cluster's,
	// clients and simulated hosts included) per boot.
	b.ReportMetric(float64(entries)/float64(requests), "raft-entries/boot")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(requests), "cpu-ms/boot")
	b.ReportMetric(float64(reports)/float64(requests), "reports/boot")
	// The heap allocated a boot (the whole process's) drives the
	// garbage collector's share of the CPU.
	b.ReportMetric(allocKiB, "alloc-KiB/boot")
	b.Logf("%s: %d boots by %d clients: accepted in %v (%.0f/s), ACTIVE in %v (%.0f/s); latency p50 %v, p99 %v, max %v; "+
		"%.2f Raft entries, %.2f agents' reports, %.2f ms of CPU and %.0f KiB allocated a boot, %d GC cycles",
		api, requests, clients, accepted.Round(time.Millisecond), float64(requests)/accepted.Seconds(),
		active.Round(time.Millisecond), float64(requests)/active.Seconds(), pct(0.5), pct(0.99), all[len(all)-1],
		float64(entries)/float64(requests), float64(reports)/float64(requests), float64(cpu.Microseconds())/1000/float64(requests),
		allocKiB, gcEnd-gcStart)
}

// allocProfileEnv names the file prefix the allocation profiles of each
// round are written to, at its start and at its end: the round's own
// allocations are the difference (go tool pprof -diff_base start end),
// where -memprofile would mix in the cluster's start and registrations.
const allocProfileEnv = "STRATUS_BENCH_ALLOCPROFILE"

// writeAllocProfile writes the allocation profile so far to the file
// allocProfileEnv names, followed by suffix; unset, it does nothing.
func writeAllocProfile(b *testing.B, suffix string) {
	path := os.Getenv(allocProfileEnv)
	if path == "" {
		return
	}
	f, err := os.Create(path + suffix)
	if err != nil {
		b.Fatalf("%s: %v", allocProfileEnv, err)
	}
	defer f.Close()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		b.Fatalf("%s: %v", allocProfileEnv, err)
	}
}

// raftIndex is the leader's last Raft index.
func (c *bootCluster) raftIndex(b *testing.B) uint64 {
	return c.waitLeader(b).Server().Raft().LastIndex()
}

// cpuTime is the CPU time this process (the whole cluster) has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapAllocated is the bytes this process has allocated on the heap so
// far and the garbage collections it has run.
func heapAllocated() (uint64, uint32) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc, ms.NumGC
}

// boot sends one single-server boot and returns the new server's id.
func (c *bootCluster) boot(api, base, token, name string) (string, error) {
	var req *http.Request
	var err error
	if api == "nova" {
		body := fmt.Sprintf(`{"server":{"name":%q,"imageRef":"cirros","flavorRef":"1","networks":"none"}}`, name)
		req, err = http.NewRequest(http.MethodPost, base+"/compute/v2.1/servers", bytes.NewBufferString(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("X-Auth-Token", token)
		req.Header.Set("X-OpenStack-Nova-API-Version", "2.37")
	} else {
		body := fmt.Sprintf(`{"Name":%q,"Image":"cirros","Flavor":"m1.tiny","Count":1}`, name)
		req, err = http.NewRequest(http.MethodPost, base+"/v1/instances", bytes.NewBufferString(body))
		if err != nil {
			return "", err
		}
		req.Header.Set("X-Stratus-Token", token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("boot %s: %w", name, err)
	}
	defer resp.Body.Close()
	msg, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", fmt.Errorf("boot %s: %w", name, err)
	}
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("boot %s: status %d: %s", name, resp.StatusCode, msg)
	}
	var out struct {
		Server    struct{ ID string }
		Instances []struct{ ID string }
	}
	if err := json.Unmarshal(msg, &out); err != nil {
		return "", fmt.Errorf("boot %s: %w: %s", name, err, msg)
	}
	if out.Server.ID != "" {
		return out.Server.ID, nil
	}
	if len(out.Instances) == 1 {
		return out.Instances[0].ID, nil
	}
	return "", fmt.Errorf("boot %s: no server in the answer: %s", name, msg)
}

// checkAllActive checks, outside the timings, that every booted server
// is ACTIVE on a host in the leader's state.
func (c *bootCluster) checkAllActive(b *testing.B) {
	var resp structs.InstanceListResponse
	if err := c.waitLeader(b).Server().RPC("Instance.List", &structs.InstanceListRequest{}, &resp); err != nil {
		b.Fatal(err)
	}
	byID := make(map[string]*structs.Instance, len(resp.Instances))
	for _, inst := range resp.Instances {
		byID[inst.ID] = inst
	}
	for _, id := range c.ids {
		inst := byID[id]
		if inst == nil || inst.HostID == "" || inst.VMState != structs.VMStateActive {
			b.Fatalf("server %s is not ACTIVE on a host: %+v", id, inst)
		}
	}
}
