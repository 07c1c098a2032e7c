package scheduler

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// schedule runs Schedule over hosts for instances of the given flavors.
func schedule(t *testing.T, hosts []*structs.Host, cfg Config, seed uint64, insts ...*structs.Instance) *structs.Plan {
	t.Helper()
	eval := &structs.Evaluation{ID: "eval-1"}
	for _, i := range insts {
		eval.InstanceIDs = append(eval.InstanceIDs, i.ID)
	}
	plan, err := Schedule(sliceState(hosts), eval, insts, cfg, newRNG(seed))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Placements)+len(plan.Failures) != len(insts) {
		t.Fatalf("%d placements + %d failures for %d instances", len(plan.Placements), len(plan.Failures), len(insts))
	}
	return plan
}

func instances(n int, f *structs.Flavor) []*structs.Instance {
	out := make([]*structs.Instance, n)
	for i := range out {
		out[i] = testInstance(fmt.Sprintf("i%d", i), f)
	}
	return out
}

func hostsOf(plan *structs.Plan) []string {
	var out []string
	for _, a := range plan.Placements {
		out = append(out, a.HostID)
	}
	return out
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestScheduleAllocationFields(t *testing.T) {
	inst := testInstance("i0", small("resources:CUSTOM_FPGA=1"))
	plan := schedule(t, []*structs.Host{testHost("h", withInv("CUSTOM_FPGA", 1))}, DefaultConfig(), 1, inst)
	if plan.EvalID != "eval-1" || len(plan.Placements) != 1 || len(plan.Failures) != 0 {
		t.Fatalf("plan %+v", plan)
	}
	a := plan.Placements[0]
	if !uuidPattern.MatchString(a.ID) {
		t.Fatalf("allocation id %q is not a v4 UUID", a.ID)
	}
	want := map[string]int64{"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10, "CUSTOM_FPGA": 1}
	if a.InstanceID != "i0" || a.HostID != "h" || a.EvalID != "eval-1" || !reflect.DeepEqual(a.Resources, want) ||
		a.DesiredState != structs.AllocDesiredRunning || a.ClientState != structs.AllocClientPending {
		t.Fatalf("allocation %+v", a)
	}
}

func TestScheduleSpreadsByRAM(t *testing.T) {
	// b has the most free RAM, then c, then a.
	hosts := []*structs.Host{
		testHost("a", withUsage(structs.ResourceMemoryMB, 20000)),
		testHost("b"),
		testHost("c", withUsage(structs.ResourceMemoryMB, 10000)),
	}
	plan := schedule(t, hosts, DefaultConfig(), 1, testInstance("i", small()))
	if got := hostsOf(plan); got[0] != "b" {
		t.Fatalf("placed on %v, want the host with the most free RAM", got)
	}
	// Equal hosts: three instances land on three hosts.
	plan = schedule(t, []*structs.Host{testHost("a"), testHost("b"), testHost("c")}, DefaultConfig(), 1, instances(3, small())...)
	if got := hostsOf(plan); len(got) != 3 || got[0] == got[1] || got[1] == got[2] || got[0] == got[2] {
		t.Fatalf("spread placed on %v", got)
	}
}

// Equally good hosts: a seed reproduces the choice, and different seeds
// (concurrent evaluations scheduling from one snapshot) spread over
// them rather than all taking the lowest host ID (issue #31).
func TestScheduleTiesDependOnTheSeed(t *testing.T) {
	var hosts []*structs.Host
	for i := range 20 {
		hosts = append(hosts, testHost(fmt.Sprintf("h%02d", i)))
	}
	chosen := map[string]bool{}
	for seed := range uint64(40) {
		got := hostsOf(schedule(t, hosts, DefaultConfig(), seed, testInstance("i", small())))
		again := hostsOf(schedule(t, hosts, DefaultConfig(), seed, testInstance("i", small())))
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("seed %d placed on %v, then on %v", seed, got, again)
		}
		chosen[got[0]] = true
	}
	if len(chosen) < 10 {
		t.Fatalf("40 seeds chose only %d of 20 equal hosts: %v", len(chosen), chosen)
	}
}

func TestSchedulePacksWithNegativeMultiplier(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RAMWeightMultiplier, cfg.CPUWeightMultiplier, cfg.DiskWeightMultiplier = -1, 0, 0
	hosts := []*structs.Host{testHost("a"), testHost("b", withUsage(structs.ResourceMemoryMB, 4096)), testHost("c")}
	plan := schedule(t, hosts, cfg, 1, instances(4, small())...)
	if got := hostsOf(plan); !reflect.DeepEqual(got, []string{"b", "b", "b", "b"}) {
		t.Fatalf("pack placed on %v", got)
	}
}

func TestScheduleOverlayNeverOvercommits(t *testing.T) {
	// 32256 MB usable: room for three 10 GiB instances.
	flavor := testFlavor(2, 10240, 20)
	plan := schedule(t, []*structs.Host{testHost("tiny")}, DefaultConfig(), 1, instances(5, flavor)...)
	if len(plan.Placements) != 3 || len(plan.Failures) != 2 {
		t.Fatalf("%d placed, %d failed", len(plan.Placements), len(plan.Failures))
	}
	f := plan.Failures[0]
	if f.InstanceID != "i3" || f.Explanation != "0/1 hosts: 1 insufficient MEMORY_MB" || f.HostsEvaluated != 1 {
		t.Fatalf("failure %+v", f)
	}

	// Across several small hosts no host ends up over capacity.
	hosts := []*structs.Host{testHost("a"), testHost("b", withUsage(structs.ResourceMemoryMB, 12000)), testHost("c")}
	plan = schedule(t, hosts, DefaultConfig(), 1, instances(12, flavor)...)
	used := map[string]int64{}
	for _, a := range plan.Placements {
		used[a.HostID] += a.Resources[structs.ResourceMemoryMB]
	}
	for _, h := range hosts {
		if total := used[h.ID] + h.Usage[structs.ResourceMemoryMB]; total > 32256 {
			t.Fatalf("%s overcommitted: %d MB", h.ID, total)
		}
	}
	if len(plan.Placements) != 3+1+3 {
		t.Fatalf("placed %d, want 7", len(plan.Placements))
	}
}

func TestScheduleNoValidHostExplanation(t *testing.T) {
	down := func(h *structs.Host) { h.Status = structs.HostStatusDown }
	disabled := func(h *structs.Host) { h.Enabled = false }
	full := withUsage(structs.ResourceMemoryMB, 30000)
	hosts := []*structs.Host{
		testHost("d1", withAZ("az2"), down),
		testHost("d2", withAZ("az1"), down, full), // counted once, as down
		testHost("x1", withAZ("az2"), disabled),
		testHost("m1", withAZ("az2"), full),
		testHost("m2", withAZ("az2"), full, withTraits("HW_GPU")),
		testHost("m3", withAZ("az1"), full),
		testHost("z1", withAZ("az1"), withTraits("HW_GPU")),
		testHost("z2", withAZ("az3")),
		testHost("t1", withAZ("az2")),
		testHost("t2", withAZ("az2"), withTraits("OTHER")),
	}
	inst := testInstance("i0", testFlavor(2, 8192, 20, "trait:HW_GPU=required"))
	inst.AZ = "az2"
	plan := schedule(t, hosts, DefaultConfig(), 1, inst)
	if len(plan.Failures) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	f := plan.Failures[0]
	want := "0/10 hosts: 3 insufficient MEMORY_MB, 2 host down, 2 missing trait HW_GPU, 2 not in zone az2, 1 disabled"
	if f.Explanation != want {
		t.Fatalf("explanation\n got %q\nwant %q", f.Explanation, want)
	}
	wantMap := map[string]int{"insufficient MEMORY_MB": 3, "host down": 2, "missing trait HW_GPU": 2, "not in zone az2": 2, "disabled": 1}
	if !reflect.DeepEqual(f.Filtered, wantMap) || f.HostsEvaluated != 10 || f.InstanceID != "i0" {
		t.Fatalf("failure %+v", f)
	}

	plan = schedule(t, nil, DefaultConfig(), 1, inst)
	if f := plan.Failures[0]; f.Explanation != "0/0 hosts: no hosts registered" || f.HostsEvaluated != 0 {
		t.Fatalf("no hosts: %+v", f)
	}
}

func TestScheduleHostSubsetSize(t *testing.T) {
	// h0 has the most free RAM, h9 the least.
	var hosts []*structs.Host
	for i := range 10 {
		hosts = append(hosts, testHost(fmt.Sprintf("h%d", i), withUsage(structs.ResourceMemoryMB, int64(i)*1000)))
	}
	cfg := DefaultConfig()
	cfg.HostSubsetSize = 3
	seen := map[string]int{}
	for seed := range uint64(200) {
		plan := schedule(t, hosts, cfg, seed, testInstance("i", small()))
		seen[plan.Placements[0].HostID]++
		again := schedule(t, hosts, cfg, seed, testInstance("i", small()))
		if !reflect.DeepEqual(plan, again) {
			t.Fatalf("seed %d: plans differ: %v vs %v", seed, plan.Placements[0], again.Placements[0])
		}
	}
	if len(seen) != 3 || seen["h0"] == 0 || seen["h1"] == 0 || seen["h2"] == 0 {
		t.Fatalf("picked %v, want only and all of h0, h1, h2", seen)
	}
}

func TestScheduleAvoidsTriedHosts(t *testing.T) {
	hosts := []*structs.Host{testHost("a"), testHost("b"), testHost("c", withUsage(structs.ResourceMemoryMB, 20000))}
	inst := testInstance("i0", small())
	inst.Attempts = []*structs.BuildAttempt{{HostID: "a", Error: "boom"}, {HostID: "b", Error: "boom"}}
	plan := schedule(t, hosts, DefaultConfig(), 1, inst)
	if got := hostsOf(plan); !reflect.DeepEqual(got, []string{"c"}) {
		t.Fatalf("retried instance placed on %v", got)
	}
	inst.Attempts = append(inst.Attempts, &structs.BuildAttempt{HostID: "c"})
	plan = schedule(t, hosts, DefaultConfig(), 1, inst)
	if f := plan.Failures[0]; f.Explanation != "0/3 hosts: 3 already tried" {
		t.Fatalf("explanation %q", f.Explanation)
	}
}

func TestScheduleCustomResources(t *testing.T) {
	hosts := []*structs.Host{testHost("a"), testHost("fpga", withInv("CUSTOM_FPGA", 1)), testHost("c")}
	fpga := small("resources:CUSTOM_FPGA=1")
	plan := schedule(t, hosts, DefaultConfig(), 1, testInstance("i0", fpga), testInstance("i1", small()), testInstance("i2", fpga))
	// i1 goes to either host without the FPGA's load (a tie).
	if got := hostsOf(plan); len(got) != 2 || got[0] != "fpga" || (got[1] != "a" && got[1] != "c") {
		t.Fatalf("placed on %v", got)
	}
	if f := plan.Failures[0]; f.InstanceID != "i2" || f.Explanation != "0/3 hosts: 3 insufficient CUSTOM_FPGA" {
		t.Fatalf("failure %+v", f)
	}
}

func TestScheduleTraits(t *testing.T) {
	hosts := []*structs.Host{
		testHost("plain"),
		testHost("gpu", withTraits("HW_GPU"), withUsage(structs.ResourceMemoryMB, 30000)),
		testHost("gpu-ssd", withTraits("HW_GPU", "STORAGE_DISK_SSD")),
	}
	plan := schedule(t, hosts, DefaultConfig(), 1,
		testInstance("need-gpu", small("trait:HW_GPU=required")),
		testInstance("gpu-no-ssd", small("trait:HW_GPU=required", "trait:STORAGE_DISK_SSD=forbidden")),
		testInstance("no-gpu", small("trait:HW_GPU=forbidden")))
	if got := hostsOf(plan); !reflect.DeepEqual(got, []string{"gpu-ssd", "gpu", "plain"}) {
		t.Fatalf("placed on %v", got)
	}
}

func TestScheduleAvoidsBuildFailures(t *testing.T) {
	hosts := []*structs.Host{testHost("flaky", func(h *structs.Host) { h.BuildFailures = 1 }), testHost("busy", withUsage(structs.ResourceMemoryMB, 30000))}
	if got := hostsOf(schedule(t, hosts, DefaultConfig(), 1, testInstance("i", small()))); got[0] != "busy" {
		t.Fatalf("placed on %v", got)
	}
}

func TestScheduleBadFlavorIsAFailure(t *testing.T) {
	bad := testInstance("bad", small("resources:CUSTOM_X=lots"))
	noFlavor := testInstance("none", nil)
	plan := schedule(t, []*structs.Host{testHost("a")}, DefaultConfig(), 1, bad, noFlavor, testInstance("ok", small()))
	if len(plan.Placements) != 1 || plan.Placements[0].InstanceID != "ok" || len(plan.Failures) != 2 {
		t.Fatalf("plan %+v", plan)
	}
	want := `invalid: flavor f: extra spec "resources:CUSTOM_X"="lots" is not a non-negative integer`
	if f := plan.Failures[0]; f.InstanceID != "bad" || f.Explanation != want {
		t.Fatalf("failure %+v", f)
	}
}

func TestScheduleDoesNotModifyState(t *testing.T) {
	hosts := []*structs.Host{testHost("a", withInv("CUSTOM_FPGA", 2)), testHost("b", withUsage(structs.ResourceVCPU, 3))}
	before := make([]*structs.Host, len(hosts))
	for i, h := range hosts {
		before[i] = h.Copy()
	}
	insts := instances(6, small("resources:CUSTOM_FPGA=1"))
	instBefore := insts[0].Copy()
	schedule(t, hosts, DefaultConfig(), 1, insts...)
	if !reflect.DeepEqual(hosts, before) {
		t.Fatal("Schedule modified the hosts")
	}
	if !reflect.DeepEqual(insts[0], instBefore) {
		t.Fatal("Schedule modified an instance")
	}
}

type errState struct{}

func (errState) Hosts() ([]*structs.Host, error) { return nil, errors.New("snapshot gone") }

func TestScheduleErrors(t *testing.T) {
	eval := &structs.Evaluation{ID: "e"}
	if _, err := Schedule(errState{}, eval, nil, DefaultConfig(), newRNG(1)); err == nil {
		t.Fatal("state error swallowed")
	}
	if _, err := Schedule(sliceState(nil), nil, nil, DefaultConfig(), newRNG(1)); err == nil {
		t.Fatal("nil eval accepted")
	}
	if _, err := Schedule(sliceState(nil), eval, []*structs.Instance{nil}, DefaultConfig(), newRNG(1)); err == nil {
		t.Fatal("nil instance accepted")
	}
	if plan, err := Schedule(sliceState{testHost("a")}, eval, instances(1, small()), Config{}, nil); err != nil || len(plan.Placements) != 1 {
		t.Fatalf("zero config and nil rng: %v %+v", err, plan)
	}
}
