package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
	"github.com/stratus-cloud/stratus/internal/benchprof"
)

// BenchmarkBootAgentPath boots servers the way a user of a dev cloud
// does, through every step a request really takes: one in-process dev
// agent (a server with real Raft, the Compute and Identity APIs) whose
// STRATUS_BOOT_HOSTS hosts (default 1,000; 20 under bench-smoke) are real
// hypervisor agents — the client's allocation watch and runner, the fake
// driver's spawn, the port each server gets on the dev network with an
// address from IPAM, its image resolved — and concurrent Compute API
// clients, each with a Keystone token of its own, sending single
// creates of mixed flavors (m1.tiny, m1.small, m1.medium) on a /16
// tenant network the benchmark makes. A server counts once the Compute API lists it
// ACTIVE. What it skips, and says so: the fake driver builds no disk and
// downloads no image (no image cache), there is no network dataplane
// (bridges, DHCP), and the API rate limit is lifted (http_rate = 0), as
// an operator benchmarking a cloud would. It reports the process's CPU
// and heap a boot besides the rates, which the machine's other load
// moves far more; STRATUS_BENCH_LOG=1 prints the dev agent's warnings
// (a failed evaluation's reason, for one) to stderr.
func BenchmarkBootAgentPath(b *testing.B) {
	hosts := bootSize("STRATUS_BOOT_HOSTS", 1000, 20)
	requests := bootSize("STRATUS_BOOT_REQUESTS", 2000, 60)
	clients := bootSize("STRATUS_BOOT_CLIENTS", 32, 4)
	a := startAgentPathCloud(b, hosts)
	base := "http://" + a.HTTPAddr()
	c := &bootCluster{agents: []*agent.Agent{a},
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 1024}}}
	c.token = c.keystoneToken(b)
	c.unlimitedQuota(b)
	for len(c.tokens) < clients {
		c.tokens = append(c.tokens, c.keystoneToken(b))
	}
	// A network of its own, a /16: the dev network's /24 holds only
	// 250-odd ports.
	netID := c.benchNetwork(b, base)
	flavors := []string{"1", "2", "3"}
	for n := 0; n < b.N; n++ {
		var next atomic.Int64
		lat := make([][]time.Duration, clients)
		errs := make(chan error, clients)
		var wg sync.WaitGroup
		stop := benchprof.Start(b, fmt.Sprintf(".agentpath-%d", n))
		cpuStart := cpuTime()
		allocStart, _ := heapAllocated()
		start := time.Now()
		for w := 0; w < clients; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					r := next.Add(1)
					if r > int64(requests) {
						return
					}
					body := fmt.Sprintf(`{"server":{"name":"ap-%d-%d","imageRef":"cirros","flavorRef":%q,"networks":[{"uuid":%q}]}}`,
						n, r, flavors[r%int64(len(flavors))], netID)
					t0 := time.Now()
					if err := c.novaPost(base+"/compute/v2.1/servers", c.tokens[w], body); err != nil {
						errs <- err
						return
					}
					lat[w] = append(lat[w], time.Since(t0))
				}
			}()
		}
		wg.Wait()
		accepted := time.Since(start)
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		want := (n + 1) * requests
		eventually(b, fmt.Sprintf("%d servers ACTIVE", want), 3*time.Minute, func() error {
			got, err := c.countActive(base)
			if err != nil {
				return err
			}
			if got < want {
				return fmt.Errorf("%d of %d ACTIVE as the Compute API lists them; every server by status: %s", got, want, c.statuses(base))
			}
			return nil
		})
		active := time.Since(start)
		cpu := cpuTime() - cpuStart
		allocEnd, _ := heapAllocated()
		stop()
		var all []time.Duration
		for w := range lat {
			all = append(all, lat[w]...)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		pct := func(p float64) time.Duration { return all[int(p*float64(len(all)-1)+0.5)] }
		b.ReportMetric(float64(requests)/accepted.Seconds(), "accepted/s")
		b.ReportMetric(float64(requests)/active.Seconds(), "active/s")
		b.ReportMetric(float64(pct(0.5).Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
		// The process's CPU (server, hosts and clients) and heap a boot:
		// unlike the rates, they hardly depend on the machine's other load.
		cpuMS := float64(cpu.Microseconds()) / 1000 / float64(requests)
		allocKiB := float64(allocEnd-allocStart) / 1024 / float64(requests)
		b.ReportMetric(cpuMS, "cpu-ms/boot")
		b.ReportMetric(allocKiB, "alloc-KiB/boot")
		b.Logf("agent path, %d hosts: %d boots by %d clients: accepted in %v (%.0f/s), ACTIVE as the Compute API lists them in %v (%.0f/s); latency p50 %v, p99 %v; %.2f ms of CPU and %.0f KiB allocated a boot",
			hosts, requests, clients, accepted.Round(time.Millisecond), float64(requests)/accepted.Seconds(),
			active.Round(time.Millisecond), float64(requests)/active.Seconds(), pct(0.5), pct(0.99), cpuMS, allocKiB)
	}
}

// startAgentPathCloud starts the dev agent with hosts real hypervisor
// agents (its own and hosts-1 simulated ones, all on the fake driver).
func startAgentPathCloud(b *testing.B, hosts int) *agent.Agent {
	zero, noRate := 0, 0.0
	cfg := &agent.Config{
		DevMode: true, NodeName: "bench-dev", DataDir: b.TempDir(), BindAddr: "127.0.0.1",
		Ports:  &agent.PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		Client: &agent.ClientConfig{SimulatedHosts: hosts - 1},
		Limits: &agent.LimitsConfig{HTTPRate: &noRate},
	}
	if err := cfg.Finalize(); err != nil {
		b.Fatal(err)
	}
	var lg hclog.Logger = hclog.NewNullLogger()
	if os.Getenv("STRATUS_BENCH_LOG") != "" {
		lg = hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr})
	}
	a, err := agent.New(cfg, lg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Shutdown() })
	c := &bootCluster{agents: []*agent.Agent{a}, client: http.DefaultClient}
	eventually(b, "the dev cloud's hosts up", 5*time.Minute, func() error {
		n, err := c.countHostsUp("http://" + a.HTTPAddr())
		if err != nil {
			return err
		}
		if n < hosts {
			return fmt.Errorf("%d of %d hosts up", n, hosts)
		}
		return nil
	})
	return a
}

// novaPost sends one create to the Compute API.
func (c *bootCluster) novaPost(url, token, body string) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("X-OpenStack-Nova-API-Version", "2.37")
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("create: status %d: %s", resp.StatusCode, msg)
	}
	return nil
}

// countActive counts the servers the Compute API lists ACTIVE, page by
// page as a client does.
func (c *bootCluster) countActive(base string) (int, error) {
	n, marker := 0, ""
	for {
		u := base + "/compute/v2.1/servers?status=ACTIVE&limit=1000"
		if marker != "" {
			u += "&marker=" + marker
		}
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("X-Auth-Token", c.token)
		resp, err := c.client.Do(req)
		if err != nil {
			return 0, err
		}
		var out struct{ Servers []struct{ ID string } }
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("list servers: %d %v", resp.StatusCode, err)
		}
		n += len(out.Servers)
		if len(out.Servers) < 1000 {
			return n, nil
		}
		marker = out.Servers[len(out.Servers)-1].ID
	}
}

// countHostsUp counts the hosts the native API lists up.
func (c *bootCluster) countHostsUp(base string) (int, error) {
	resp, err := c.client.Get(base + "/v1/hosts")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var hosts []struct{ Status string }
	if err := json.NewDecoder(resp.Body).Decode(&hosts); err != nil {
		return 0, err
	}
	n := 0
	for _, h := range hosts {
		if h.Status == "up" {
			n++
		}
	}
	return n, nil
}

// benchNetwork creates a network with a /16 subnet through the Network
// API and returns its id.
func (c *bootCluster) benchNetwork(b *testing.B, base string) string {
	post := func(path, body string, out any) {
		req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewBufferString(body))
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
		msg, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("POST %s: %d %s", path, resp.StatusCode, msg)
		}
		if err := json.Unmarshal(msg, out); err != nil {
			b.Fatal(err)
		}
	}
	// Neutron's port quota (500 by default) lifted, as the Nova quotas are.
	req, err := http.NewRequest(http.MethodPut, base+"/network/v2.0/quotas/"+c.project, bytes.NewBufferString(`{"quota":{"port":-1}}`))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("lift the port quota: %d %s", resp.StatusCode, msg)
	}
	var net struct{ Network struct{ ID string } }
	post("/network/v2.0/networks", `{"network":{"name":"bench-net"}}`, &net)
	var sub struct{ Subnet struct{ ID string } }
	post("/network/v2.0/subnets", fmt.Sprintf(`{"subnet":{"network_id":%q,"ip_version":4,"cidr":"10.200.0.0/16","name":"bench-subnet"}}`, net.Network.ID), &sub)
	return net.Network.ID
}

// statuses counts every instance by status, as the native API lists
// them: what a stalled wait reports.
func (c *bootCluster) statuses(base string) string {
	resp, err := c.client.Get(base + "/v1/instances")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var list []struct {
		Status, TaskState string
		Fault             *struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return err.Error()
	}
	by, faults := map[string]int{}, map[string]int{}
	for _, i := range list {
		by[i.Status+"/"+i.TaskState]++
		if i.Fault != nil {
			faults[i.Fault.Message]++
		}
	}
	return fmt.Sprintf("%v; faults %v", by, faults)
}
