package server

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/internal/benchprof"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// BenchmarkPlacementMix places instances as a cloud's users ask for
// them, where BenchmarkClusterPlacement sends identical 100-instance
// multi-creates onto empty hosts from in process. Here:
//
//   - every create is one instance, sent over TCP (rpc.ConnPool, the
//     msgpack RPC a client or an agent's API uses) by one of 32 clients,
//     each logged in with its own token (users admin and demo, in
//     projects admin and demo) and talking to one of the three servers,
//     which forwards to the leader as it does for any client; ACLs are on,
//     so every create's token is checked;
//   - flavors vary (m1.tiny to m1.xlarge, and a flavor that asks for an
//     aggregate's metadata, aggregate_instance_extra_specs:ssd=true);
//   - hosts are of two sizes and pre-filled, each to its own random 30–90 %
//     of its memory (the binding resource), by instances sent to it with
//     TargetHost before the timed part;
//   - a fifth of the hosts are in an aggregate with ssd=true (the
//     AggregateInstanceExtraSpecsFilter), a tenth in one isolated to
//     project demo (filter_tenant_id, AggregateMultiTenancyIsolation);
//   - 15 % of the creates join an affinity group (4 members each) and
//     15 % an anti-affinity group (10 members each).
//
// A placement's latency is from its create being sent to its instance
// having a host (or a fault) in the leader's replicated state, observed
// every 2 ms. It reports placements/s (placed instances over the time
// from the first create to the last placement), p50/p99 latency, the
// creates accepted per second, CPU per placement, and failures by kind of
// request and by the first reason of their NoValidHost explanation. It
// then checks that no host is overcommitted and that every group's policy
// holds.
//
// Sizes: STRATUS_BENCH_HOSTS (1,000; 60 under STRATUS_BENCH_SMALL) and
// STRATUS_BENCH_MIX_CREATES (4,000; 200 small).
func BenchmarkPlacementMix(b *testing.B) {
	hosts := benchSize("STRATUS_BENCH_HOSTS", 1000, 60)
	creates := benchSize("STRATUS_BENCH_MIX_CREATES", 4000, 200)
	m := newMixBench(b, hosts)
	stopProfile := benchprof.Start(b, "")
	b.ResetTimer()
	var res mixResult
	for n := 0; n < b.N; n++ {
		res.add(m.round(b, n, creates))
	}
	b.StopTimer()
	stopProfile()
	res.report(b)
	m.pb.checkNoOvercommit(b)
	m.checkGroups(b)
}

// The request kinds of the mix, for the failures' breakdown.
const (
	mixPlain        = "plain"
	mixSSD          = "ssd"
	mixAffinity     = "affinity"
	mixAntiAffinity = "anti-affinity"
)

// mixFlavors are the plain creates' flavors and their weights (percent).
var mixFlavors = []struct {
	id     string
	weight int
}{{"1", 20}, {"2", 30}, {"3", 25}, {"4", 15}, {"5", 10}}

// mixSSDFlavor asks for hosts in an aggregate with ssd=true.
var mixSSDFlavor = &structs.Flavor{ID: "ssd.medium", Name: "ssd.medium", VCPUs: 2, MemoryMB: 4096, RootGB: 40,
	RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{aggregateSpecKey("ssd"): "true"}}

// aggregateSpecKey is the flavor extra spec AggregateInstanceExtraSpecsFilter
// matches against aggregate metadata key.
func aggregateSpecKey(key string) string { return "aggregate_instance_extra_specs:" + key }

// Group sizes: creates per affinity and per anti-affinity group.
const (
	mixAffinitySize     = 4
	mixAntiAffinitySize = 10
	mixClients          = 32
)

// mixBench is the cluster and the users of BenchmarkPlacementMix.
type mixBench struct {
	pb      *placementBench
	clients []*mixClient
	// groups are each project's server groups by policy.
	groups map[string]map[string][]string
	mu     sync.Mutex
	// next counts the creates given to each group so far.
	next map[string]int
}

// mixClient is one user's connection and token.
type mixClient struct {
	conns   *rpc.ConnPool
	addr    string
	token   string
	project string
}

func newMixBench(b *testing.B, hosts int) *mixBench {
	pb := &placementBench{}
	pb.servers = testCluster(b, 3, func(c *Config) {
		c.Logger = hclog.NewNullLogger()
		c.HeartbeatTTL = time.Hour
		c.RaftTimeScale = 5
		c.ACLEnabled = true
	})
	leader := waitForLeader(b, pb.servers...)
	waitFor(b, "a signing key", 2*time.Minute, func() error {
		if leader.serverCredential() == "" {
			return fmt.Errorf("no signing key yet")
		}
		return nil
	})
	if err := leader.SeedDevIdentity(); err != nil {
		b.Fatalf("seed identity: %v", err)
	}
	m := &mixBench{pb: pb, groups: map[string]map[string][]string{}, next: map[string]int{}}
	m.seed(b)
	m.login(b)
	m.registerHosts(b, hosts)
	m.makeAggregates(b, hosts)
	m.makeGroups(b)
	m.prefill(b, hosts)
	return m
}

// seed writes the flavors and lifts the default quotas: the benchmark
// measures placement, not a project's limits.
func (m *mixBench) seed(b *testing.B) {
	flavors := append(structs.DevFlavors(), mixSSDFlavor)
	m.call(b, "Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: flavors}, &structs.FlavorUpsertResponse{})
	limits := map[string]int64{structs.QuotaInstances: -1, structs.QuotaCores: -1, structs.QuotaRAM: -1,
		structs.QuotaServerGroups: -1, structs.QuotaServerGroupMembers: -1}
	m.call(b, "Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeClass, ID: structs.QuotaDefaultClass,
		Limits: limits}, &structs.QuotaResponse{})
}

// call makes an in-process call with the server's credential, across
// leader changes; setup only.
func (m *mixBench) call(b *testing.B, method string, args, reply any) {
	b.Helper()
	if err := m.pb.retry(method, func() error { return m.pb.leaderOrFirst().RPC(method, args, reply) }); err != nil {
		b.Fatal(err)
	}
}

// leaderOrFirst is the leader, or the first server while there is none.
func (pb *placementBench) leaderOrFirst() *Server {
	if l := pb.leader(); l != nil {
		return l
	}
	return pb.servers[0]
}

// login opens each client's connection pool to its server and logs it
// in over TCP, every other one as admin, the others as demo.
func (m *mixBench) login(b *testing.B) {
	for i := 0; i < mixClients; i++ {
		user := []string{"admin", "demo"}[i%2]
		c := &mixClient{conns: rpc.NewConnPool(rpc.PoolConfig{Logger: hclog.NewNullLogger()}),
			addr: m.pb.servers[i%len(m.pb.servers)].RPCAddr()}
		b.Cleanup(func() { _ = c.conns.Shutdown() })
		var out structs.TokenIssueResponse
		err := c.conns.RPC(c.addr, "Identity.IssueToken", &structs.TokenIssueRequest{Method: "password", UserName: user,
			UserDomainName: "Default", Password: user, ProjectName: user, ProjectDomainID: "default"}, &out)
		if err != nil {
			b.Fatalf("log in as %s: %v", user, err)
		}
		c.token, c.project = out.Token, out.Claims.ProjectID
		m.clients = append(m.clients, c)
	}
}

// mixHostName is the name of host i.
func mixHostName(i int) string { return fmt.Sprintf("mix-%05d", i) }

// registerHosts registers hosts of two sizes: two thirds with 16 cores
// and 64 GiB, a third with 32 cores and 128 GiB, CPU overcommitted 4×.
func (m *mixBench) registerHosts(b *testing.B, hosts int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, hosts)
	for i := 0; i < hosts; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cores, mem := int64(16), int64(65536)
			if i%3 == 2 {
				cores, mem = 32, 131072
			}
			h := testHost(mixHostName(i), cores, mem)
			h.Name = mixHostName(i)
			h.Inventories[structs.ResourceVCPU].AllocationRatio = 4
			h.Inventories[structs.ResourceDiskGB].Total = 8000
			h.Inventories[structs.ResourceDiskGB].MaxUnit = 8000
			s := m.pb.servers[i%len(m.pb.servers)]
			// As an agent registers: with its node secret and, the first
			// time, an introduction (ACLs are on).
			secret := fmt.Sprintf("%064x", i+1)
			err := m.pb.retry("register "+h.ID, func() error { return registerWithSecret(s, h, secret) })
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// makeAggregates puts every fifth host in aggregate "ssd" (ssd=true)
// and every tenth, offset by one, in "demo-only" (filter_tenant_id = the
// demo project).
func (m *mixBench) makeAggregates(b *testing.B, hosts int) {
	demo := ""
	for _, c := range m.clients {
		if c.project != m.clients[0].project {
			demo = c.project
		}
	}
	for _, a := range []struct {
		name  string
		meta  map[string]string
		every int
	}{{"ssd", map[string]string{"ssd": "true"}, 5}, {"demo-only", map[string]string{"filter_tenant_id": demo}, 10}} {
		var out structs.SingleAggregateResponse
		m.call(b, "Aggregate.Create", &structs.AggregateCreateRequest{Name: a.name}, &out)
		id := out.Aggregate.ID
		m.call(b, "Aggregate.SetMetadata", &structs.AggregateMetadataRequest{AggregateID: id, Set: a.meta}, &out)
		for i := a.every - 1; i < hosts; i += a.every {
			m.call(b, "Aggregate.AddHost", &structs.AggregateHostRequest{AggregateID: id, Host: mixHostName(i)}, &out)
		}
	}
}

// mixGroupsPerProject is how many groups of each policy each project
// has: enough for every group create of the largest run.
const mixGroupsPerProject = 200

// makeGroups creates each project's affinity and anti-affinity groups.
func (m *mixBench) makeGroups(b *testing.B) {
	for _, project := range []string{m.clients[0].project, m.clients[1].project} {
		m.groups[project] = map[string][]string{}
		for _, policy := range []string{structs.PolicyAffinity, structs.PolicyAntiAffinity} {
			for g := 0; g < mixGroupsPerProject; g++ {
				var out structs.SingleServerGroupResponse
				m.call(b, "ServerGroup.Create", &structs.ServerGroupCreateRequest{Group: &structs.ServerGroup{
					Name: fmt.Sprintf("%s-%d", policy, g), ProjectID: project, Policy: policy}}, &out)
				m.groups[project][policy] = append(m.groups[project][policy], out.Group.ID)
			}
		}
	}
}

// prefill fills each host to its own random 30–90 % of its memory with
// m1.medium and m1.large instances sent to it (TargetHost), 16 hosts at
// a time, and waits for them all to be placed.
func (m *mixBench) prefill(b *testing.B, hosts int) {
	rng := rand.New(rand.NewPCG(1, 2))
	fills := make([]float64, hosts)
	for i := range fills {
		fills[i] = 0.3 + 0.6*rng.Float64()
	}
	var mu sync.Mutex
	var evals []string
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, hosts)
	for i := 0; i < hosts; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			mem := 65536
			if i%3 == 2 {
				mem = 131072
			}
			want := int(fills[i] * float64(mem) / 4096) // in m1.medium units
			for _, c := range []struct{ flavor, n int }{{4, want / 4}, {3, want % 4}} {
				if c.n == 0 {
					continue
				}
				req := &structs.InstanceCreateRequest{Name: fmt.Sprintf("fill-%d-%d", i, c.flavor), FlavorID: fmt.Sprint(c.flavor),
					ImageID: "cirros", Count: c.n, TargetHost: mixHostName(i),
					IdempotencyKey: fmt.Sprintf("mix-fill-%d-%d", i, c.flavor)}
				out := &structs.InstanceCreateResponse{}
				err := m.pb.retry(req.Name, func() error { return m.pb.leaderOrFirst().RPC("Instance.Create", req, out) })
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				evals = append(evals, out.EvalID)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	m.pb.waitEvalsDone(b, evals)
}
