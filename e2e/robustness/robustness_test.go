package robustness

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/structs"
)

const (
	workers    = 4
	perWorker  = 3 // live instances a worker keeps at most
	flavorID   = "rob1"
	recoverFor = 120 * time.Second
)

func runDuration(t *testing.T) time.Duration {
	if v := os.Getenv("STRATUS_ROBUSTNESS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("STRATUS_ROBUSTNESS_DURATION: %v", err)
		}
		return d
	}
	return 60 * time.Second
}

// adminToken is the bootstrap administrator's token, which every
// client of the workload sends (production agents require tokens). It is
// set once, before any worker starts.
var adminToken string

// adminProject is the bootstrap administrator's project, whose quota
// limits the register workload shares.
var adminProject string

func newClient(t *testing.T, addr string) *api.Client {
	c, err := api.NewClient(&api.Config{Address: addr, HTTPClient: &http.Client{Timeout: 30 * time.Second}, Token: adminToken})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bootstrapAdmin creates the cluster's first administrator, as an
// operator does on a new production cluster, logs in as it, and
// introduces the client agents' hosts.
func bootstrapAdmin(t *testing.T, c *cluster) {
	cl := newClient(t, c.servers[0].http)
	var boot *api.Bootstrap
	eventually(t, "bootstrap", 60*time.Second, func() (err error) {
		boot, err = cl.Operator().Bootstrap()
		return err
	})
	var login *api.Login
	eventually(t, "admin login", 60*time.Second, func() (err error) {
		login, err = cl.Login(api.Credentials{User: boot.UserName, Password: boot.Password, Project: boot.ProjectName})
		return err
	})
	adminToken, adminProject = login.Token, login.ProjectID
	// The client agents' hosts are new to the cluster: with ACLs on they
	// register once an operator introduces them.
	var intro *api.NodeIntro
	eventually(t, "a node introduction", 60*time.Second, func() (err error) {
		intro, err = newClient(t, c.servers[0].http).Operator().NodeIntroCreate(time.Hour, "")
		return err
	})
	if err := os.WriteFile(c.introFile, []byte(intro.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFaultInjection is the suite: see the package doc.
func TestFaultInjection(t *testing.T) {
	if os.Getenv("STRATUS_ROBUSTNESS") == "" {
		t.Skip("the fault-injection suite runs with STRATUS_ROBUSTNESS=1 (make test-robustness)")
	}
	seed := runSeed(t)
	ipBase := fmt.Sprintf("127.%d.%d", 80+os.Getpid()%40, os.Getpid()/40%250)
	env := &faultEnv{t: t}
	net, nerr := newNetFaults(t)
	if requireOrSkip(t, "network faults", nerr) {
		env.net = net
	}
	disk, derr := mountSmallDisk(t)
	dataDirs := map[int]string{}
	if requireOrSkip(t, "full disk", derr) {
		env.disk = disk
		dataDirs[2] = disk.dir // s3's data dir is the small tmpfs
	}
	steps := requireOrSkip(t, "clock steps", clockStepErr)
	c := startCluster(t, clusterSpec{ipBase: ipBase, servers: 3, clients: 3, dataDirs: dataDirs, net: env.net,
		delays: env.net != nil, clockSteps: steps})
	env.c = c
	env.rng = rand.New(rand.NewSource(seed ^ 0x5eed))
	bootstrapAdmin(t, c)
	admin := newClient(t, c.servers[0].http)
	waitHealthy(t, c)
	if _, _, err := admin.Flavors().Create(&api.Flavor{ID: flavorID, Name: "rob.small", VCPUs: 1, MemoryMB: 512, RootGB: 1, IsPublic: true}); err != nil {
		t.Fatalf("create flavor: %v", err)
	}
	regs := setupRegisters(t, admin, registerSpec{instances: sharedInstances, flavors: 1, flavorKeys: keysPerObject,
		quotas: []string{"key_pairs", "server_groups"}})

	h := newHistory()
	rh := newRegHistory(&history{start: h.start})
	env.start = h.start
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var seq atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		rng := rand.New(rand.NewSource(seed + int64(w) + 1))
		go func(w int) {
			defer wg.Done()
			runWorker(t, c, h, w, &seq, rng, stop)
		}(w)
	}
	for w := 0; w < regWorkers; w++ {
		wg.Add(1)
		rng := rand.New(rand.NewSource(seed + int64(workers+w) + 1))
		go func(w int) {
			defer wg.Done()
			runRegisterWorker(t, c, rh, w, regs, &seq, rng, stop)
		}(w)
	}

	survived := runSchedule(t, env, buildFaults(env), rand.New(rand.NewSource(seed)), runDuration(t))
	close(stop)
	wg.Wait()
	t.Logf("faults survived: %v", survived)
	if c.delays != nil {
		t.Logf("delay links relayed %d connections between agents", c.delays.stats().conns)
	}

	restartExited(t, c)
	waitHealthy(t, c)
	insts := waitConverged(t, c, admin, h)
	recordFinalReads(h, insts)
	checkHistory(t, h)
	checkRegisterHistory(t, rh)
	checkInvariants(t, c, admin, h, insts)
	checkNoRace(t, c)
	if t.Failed() {
		t.Logf("replay the fault schedule with STRATUS_ROBUSTNESS_SEED=%d", seed)
	}
}

// restartExited restarts any process a fault made crash, logging it: a
// server that exits on a full disk is allowed, as long as it recovers
// after a restart.
func restartExited(t *testing.T, c *cluster) {
	for _, p := range c.all() {
		if !p.running() {
			t.Logf("%s had exited; restarting it. Its last logs:\n%s", p.name, tail(p.logs.String(), 20))
			p.start(t)
		}
	}
}

// leaderOf returns the server process that leads, asking every live one.
func leaderOf(t *testing.T, c *cluster) *proc {
	var leader *proc
	eventually(t, "a leader", recoverFor, func() error {
		for _, s := range c.servers {
			addr, err := newClient(t, s.http).Status().Leader()
			if err != nil || addr == "" {
				continue
			}
			for _, p := range c.servers {
				if strings.HasPrefix(addr, p.bindIP+":") {
					leader = p
					return nil
				}
			}
		}
		return fmt.Errorf("no server knows a leader")
	})
	return leader
}

func followerOf(t *testing.T, c *cluster) *proc {
	l := leaderOf(t, c)
	for _, s := range c.servers {
		if s != l {
			return s
		}
	}
	t.Fatal("no follower")
	return nil
}

// waitHealthy waits until every server agrees on a leader and every
// client's host is up.
func waitHealthy(t *testing.T, c *cluster) {
	t.Helper()
	eventually(t, "a healthy cluster", recoverFor, func() error {
		var leaders []string
		for _, s := range c.servers {
			addr, err := newClient(t, s.http).Status().Leader()
			if err != nil {
				return fmt.Errorf("%s: %v", s.name, err)
			}
			leaders = append(leaders, addr)
		}
		for _, l := range leaders {
			if l == "" || l != leaders[0] {
				return fmt.Errorf("servers see leaders %q", leaders)
			}
		}
		hosts, _, err := newClient(t, c.servers[0].http).Hosts().List(nil)
		if err != nil {
			return err
		}
		up := 0
		for _, h := range hosts {
			if h.Status == api.HostStatusUp {
				up++
			}
		}
		if up != len(c.clients) {
			return fmt.Errorf("%d of %d hosts up", up, len(c.clients))
		}
		return nil
	})
}

type owned struct{ id, name string }

// runWorker boots, acts on and deletes its own instances through a random
// agent's API until stop closes, recording each operation.
func runWorker(t *testing.T, c *cluster, h *history, w int, seq *atomic.Int64, rng *rand.Rand, stop chan struct{}) {
	procs := c.all()
	var mine []owned
	for {
		select {
		case <-stop:
			return
		default:
		}
		cl := newClient(t, procs[rng.Intn(len(procs))].http)
		r := rng.Float64()
		switch {
		case len(mine) < perWorker && (len(mine) == 0 || r < 0.45):
			name := fmt.Sprintf("rob-w%d-%d", w, seq.Add(1))
			in := opInput{Kind: opCreate, Name: name}
			call := h.now()
			resp, _, err := cl.Instances().Create(&api.InstanceCreateRequest{Name: name, Flavor: flavorID, Image: "cirros"})
			out := classify(err)
			h.record(w, in, out, call)
			if err == nil && len(resp.Instances) == 1 {
				mine = append(mine, owned{resp.Instances[0].ID, name})
			}
		case r < 0.75:
			o := mine[rng.Intn(len(mine))]
			action := []string{api.OpStop, api.OpStart, api.OpRebootSoft}[rng.Intn(3)]
			// Each action carries a key of its own: an attempt whose
			// outcome is unknown (no leader, a lost connection) is sent
			// once more with it, through another agent, and is answered
			// with the action it started, never a second one nor a
			// conflict with itself.
			opts := &api.ActionOptions{IdempotencyKey: fmt.Sprintf("rob-w%d-act-%d", w, seq.Add(1))}
			call := h.now()
			_, _, err := cl.Instances().Perform(o.id, action, opts)
			if classify(err).Result == resUnknown {
				_, _, err = newClient(t, procs[rng.Intn(len(procs))].http).Instances().Perform(o.id, action, opts)
			}
			h.record(w, opInput{Kind: opAction, Name: o.name, Detail: action}, classify(err), call)
		default:
			i := rng.Intn(len(mine))
			o := mine[i]
			call := h.now()
			_, err := cl.Instances().Delete(o.id)
			out := classify(err)
			h.record(w, opInput{Kind: opDelete, Name: o.name, Detail: o.id}, out, call)
			if out.Result != resFail {
				mine = append(mine[:i], mine[i+1:]...)
			}
		}
		time.Sleep(time.Duration(50+rng.Intn(200)) * time.Millisecond)
	}
}

// waitConverged waits until no instance has a task in progress or a
// delete pending, and returns the instances. Instances still unsettled
// after recoverFor fail the test, each with its operations, and the
// other checks still run.
func waitConverged(t *testing.T, c *cluster, admin *api.Client, h *history) []*api.Instance {
	var insts []*api.Instance
	var stuck []*api.Instance
	deadline := time.Now().Add(recoverFor)
	for {
		var err error
		insts, _, err = admin.Instances().List(nil)
		stuck = stuck[:0]
		for _, i := range insts {
			if i.TaskState != "" || i.Status == "BUILD" || i.Status == "DELETED" {
				stuck = append(stuck, i)
			}
		}
		if err == nil && len(stuck) == 0 {
			return insts
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatalf("list instances: %v", err)
			}
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, i := range stuck {
		t.Errorf("instance %s (%s) did not converge within %s: %s, task %q, host %q",
			i.Name, i.ID, recoverFor, i.Status, i.TaskState, i.HostID)
		for _, op := range h.snapshot() {
			if op.Input.(opInput).Name == i.Name {
				t.Logf("  at %.3fs: %s", float64(op.Call)/1e9, instanceModel.DescribeOperation(op.Input, op.Output))
			}
		}
		for _, p := range c.all() {
			for _, line := range strings.Split(p.logs.String(), "\n") {
				if strings.Contains(line, i.ID) {
					t.Logf("  %s: %s", p.name, line)
				}
			}
		}
	}
	return insts
}

// recordFinalReads adds a read of every name the workload used.
func recordFinalReads(h *history, insts []*api.Instance) {
	seen := map[string]string{}
	for _, i := range insts {
		seen[i.Name] = obsPresent
	}
	names := map[string]bool{}
	for _, op := range h.snapshot() {
		names[op.Input.(opInput).Name] = true
	}
	call := h.now()
	for n := range names {
		obs := seen[n]
		if obs == "" {
			obs = obsAbsent
		}
		h.record(0, opInput{Kind: opRead, Name: n}, opOutput{Result: resOK, Observed: obs}, call)
	}
}

func checkHistory(t *testing.T, h *history) {
	ops := h.snapshot()
	counts := map[string]int{}
	for _, op := range ops {
		counts[op.Input.(opInput).Kind+"/"+op.Output.(opOutput).Result]++
	}
	t.Logf("history: %d operations %v", len(ops), counts)
	if counts[opCreate+"/"+resOK] == 0 {
		t.Errorf("no create was acknowledged: the workload did not run")
	}
	res, info := porcupine.CheckOperationsVerbose(instanceModel, ops, 60*time.Second)
	switch res {
	case porcupine.Illegal:
		path := t.TempDir() + "/history.html"
		if f, err := os.Create(path); err == nil {
			_ = porcupine.Visualize(instanceModel, info, f)
			_ = f.Close()
		}
		t.Errorf("the history is not linearizable (visualization: %s)", path)
		// Name the instances whose own history is illegal.
		for _, part := range instanceModel.Partition(ops) {
			if porcupine.CheckOperations(instanceModel, part) {
				continue
			}
			t.Errorf("instance %s:", part[0].Input.(opInput).Name)
			for _, op := range part {
				t.Logf("  at %.3fs: %s", float64(op.Call)/1e9, instanceModel.DescribeOperation(op.Input, op.Output))
			}
		}
	case porcupine.Unknown:
		t.Errorf("the linearizability check did not finish within 60s: a suite that cannot decide has shown nothing")
	default:
		t.Logf("history is linearizable")
	}
}

// checkInvariants checks what must hold once the cluster has converged.
func checkInvariants(t *testing.T, c *cluster, admin *api.Client, h *history, insts []*api.Instance) {
	byName := map[string][]*api.Instance{}
	for _, i := range insts {
		byName[i.Name] = append(byName[i.Name], i)
	}
	deleted := map[string]bool{}
	for _, op := range h.snapshot() {
		in, out := op.Input.(opInput), op.Output.(opOutput)
		if in.Kind == opDelete && out.Result != resFail {
			deleted[in.Name] = true
		}
	}
	for _, op := range h.snapshot() {
		in, out := op.Input.(opInput), op.Output.(opOutput)
		if n := len(byName[in.Name]); n > 1 {
			t.Errorf("%d instances named %s: a create was applied twice", n, in.Name)
		}
		if in.Kind == opCreate && out.Result == resOK && !deleted[in.Name] && len(byName[in.Name]) != 1 {
			t.Errorf("acknowledged create of %s is lost", in.Name)
		}
	}
	checkPlacement(t, c, admin, insts)
	checkCapacity(t, admin, insts)
	checkQuota(t, insts)
}

// checkPlacement reads every client's fake hypervisor: no instance runs
// on two hosts, and each active or stopped instance runs on the host the
// servers placed it on.
func checkPlacement(t *testing.T, c *cluster, admin *api.Client, insts []*api.Instance) {
	hosts, _, err := admin.Hosts().List(nil)
	if err != nil {
		t.Fatalf("hosts: %v", err)
	}
	hostOf := map[string]string{} // node name → host id
	for _, h := range hosts {
		hostOf[h.Name] = h.ID
	}
	where := map[string][]string{} // instance id → host ids running it
	for _, cl := range c.clients {
		raw, err := os.ReadFile(cl.dataDir + "/client/fake-hypervisor.json")
		if errors.Is(err, os.ErrNotExist) {
			continue // no instance ever ran there
		}
		if err != nil {
			t.Errorf("%s's hypervisor: %v", cl.name, err)
			continue
		}
		var st struct {
			Instances []struct{ Spec struct{ ID string } }
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Errorf("%s's hypervisor state: %v", cl.name, err)
			continue
		}
		for _, in := range st.Instances {
			where[in.Spec.ID] = append(where[in.Spec.ID], hostOf[cl.name])
		}
	}
	for id, on := range where {
		if len(on) > 1 {
			t.Errorf("instance %s runs on %d hosts: %v", id, len(on), on)
		}
	}
	for _, i := range insts {
		if i.HostID == "" || (i.VMState != "active" && i.VMState != "stopped") {
			continue // not on a host, or in error: nothing need run
		}
		if on := where[i.ID]; len(on) != 1 || on[0] != i.HostID {
			t.Errorf("instance %s (%s) is placed on host %s but runs on %v", i.ID, i.Name, i.HostID, on)
		}
	}
}

func checkCapacity(t *testing.T, admin *api.Client, insts []*api.Instance) {
	hosts, _, err := admin.Hosts().List(nil)
	if err != nil {
		t.Fatalf("hosts: %v", err)
	}
	placed := map[string]int64{}
	for _, i := range insts {
		if i.HostID != "" && i.Flavor != nil {
			placed[i.HostID] += int64(i.Flavor.MemoryMB)
		}
	}
	for _, h := range hosts {
		for class, capa := range h.Capacity {
			if capa.Used > capa.Capacity {
				t.Errorf("host %s overcommitted on %s: %d used of %d", h.Name, class, capa.Used, capa.Capacity)
			}
		}
		if capa := h.Capacity[api.ResourceMemoryMB]; capa != nil && placed[h.ID] > capa.Capacity {
			t.Errorf("host %s holds instances of %d MB, capacity %d", h.Name, placed[h.ID], capa.Capacity)
		}
	}
}

func checkQuota(t *testing.T, insts []*api.Instance) {
	perProject := map[string]int64{}
	ram := map[string]int64{}
	for _, i := range insts {
		perProject[i.ProjectID]++
		if i.Flavor != nil {
			ram[i.ProjectID] += int64(i.Flavor.MemoryMB)
		}
	}
	for p, n := range perProject {
		if p == "" {
			// Every boot carries the bootstrap admin's project-scoped
			// token, so every instance belongs to its project.
			t.Errorf("%d instances belong to no project", n)
			continue
		}
		if n > structs.DefaultQuotas[structs.QuotaInstances] {
			t.Errorf("project %q holds %d instances, quota %d", p, n, structs.DefaultQuotas[structs.QuotaInstances])
		}
		if ram[p] > structs.DefaultQuotas[structs.QuotaRAM] {
			t.Errorf("project %q holds %d MB, quota %d", p, ram[p], structs.DefaultQuotas[structs.QuotaRAM])
		}
	}
	t.Logf("instances per project at the end: %v", perProject)
}

// checkNoRace fails the run for every agent the race detector caught.
func checkNoRace(t *testing.T, c *cluster) {
	for _, p := range c.all() {
		if r := p.logs.raceReport(); r != "" {
			t.Errorf("the race detector caught a data race in %s:\n%s", p.name, r)
		}
	}
}
