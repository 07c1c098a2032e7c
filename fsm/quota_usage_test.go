package fsm

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"os"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// recountUsage counts every project's and user's instances, cores and
// ram by walking the instances, as the quota checks did before the
// counters: a soft-deleted instance counts for nothing, one being
// resized counts the larger of its flavors, one without a project
// counts nowhere. Keys are "project" and "project/user".
func recountUsage(t *testing.T, s *StateStore) map[string][3]int64 {
	t.Helper()
	insts, err := s.Instances(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][3]int64{}
	add := func(k string, cores, ram int64) {
		v := out[k]
		out[k] = [3]int64{v[0] + 1, v[1] + cores, v[2] + ram}
	}
	for _, i := range insts {
		if i.ProjectID == "" || i.VMState == structs.VMStateSoftDeleted || i.VMState == structs.VMStateDeleted {
			continue
		}
		var cores, ram int64
		if i.Flavor != nil {
			cores, ram = int64(i.Flavor.VCPUs), int64(i.Flavor.MemoryMB)
		}
		if i.Task != nil && i.Task.NewFlavor != nil {
			cores, ram = max(cores, int64(i.Task.NewFlavor.VCPUs)), max(ram, int64(i.Task.NewFlavor.MemoryMB))
		}
		add(i.ProjectID, cores, ram)
		if i.UserID != "" {
			add(i.ProjectID+"/"+i.UserID, cores, ram)
		}
	}
	return out
}

// storedCounters reads every counter row.
func storedCounters(t *testing.T, s *StateStore) map[string][3]int64 {
	t.Helper()
	out := map[string][3]int64{}
	txn := s.ReadTxn()
	for _, table := range []string{tableProjectUsage, tableUserUsage} {
		it, err := txn.Get(table, "id")
		if err != nil {
			t.Fatal(err)
		}
		for raw := it.Next(); raw != nil; raw = it.Next() {
			u := raw.(*structs.InstanceQuotaUsage)
			k := u.ProjectID
			if table == tableUserUsage {
				k += "/" + u.UserID
			}
			out[k] = [3]int64{u.Instances, u.Cores, u.RAM}
		}
	}
	return out
}

func checkCounters(t *testing.T, s *StateStore, step string) {
	t.Helper()
	want, got := recountUsage(t, s), storedCounters(t, s)
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("after %s: counters %v, recount %v", step, got, want)
	}
	for k, v := range want {
		project, user, _ := bytes.Cut([]byte(k), []byte("/"))
		var used map[string]int64
		var err error
		if len(user) == 0 {
			used, err = s.QuotaUsage(nil, string(project), "")
		} else {
			used, err = s.UserQuotaUsage(nil, string(project), string(user))
		}
		if err != nil {
			t.Fatal(err)
		}
		if used[structs.QuotaInstances] != v[0] || used[structs.QuotaCores] != v[1] || used[structs.QuotaRAM] != v[2] {
			t.Fatalf("after %s: usage of %s %v, recount %v", step, k, used, v)
		}
	}
}

// usageSim drives an FSM with real entries: creates with placements and
// agent reports, resizes confirmed or reverted, soft deletes and
// restores, deletes, and direct instance rewrites.
type usageSim struct {
	t     *testing.T
	f     *FSM
	rng   *rand.Rand
	index uint64
	seq   int
	ids   []string
	// seen counts the states the run went through, so that the test
	// knows it covered them.
	seen map[string]int
}

func (u *usageSim) apply(mt structs.MessageType, body any) any {
	u.t.Helper()
	u.index++
	return apply(u.t, u.f, u.index, mt, body)
}

func (u *usageSim) pick() *structs.Instance {
	for len(u.ids) > 0 {
		k := u.rng.Intn(len(u.ids))
		inst, err := u.f.State().InstanceByID(nil, u.ids[k])
		if err != nil {
			u.t.Fatal(err)
		}
		if inst != nil {
			u.seen[inst.VMState]++
			if inst.Task != nil && inst.Task.NewFlavor != nil {
				u.seen["resizing"]++
			}
			return inst
		}
		u.ids = append(u.ids[:k], u.ids[k+1:]...)
	}
	return nil
}

func (u *usageSim) flavor() *structs.Flavor {
	return structs.DevFlavors()[u.rng.Intn(4)]
}

func (u *usageSim) create() {
	n := 1 + u.rng.Intn(3)
	project := fmt.Sprintf("p%d", u.rng.Intn(3))
	if u.rng.Intn(8) == 0 {
		project = "" // an operator's instance: counted nowhere
	}
	f := u.flavor()
	e := &structs.InstanceCreateEntry{Flavor: f, RequestID: fmt.Sprintf("req-c%d", u.index+1),
		Eval: &structs.Evaluation{ID: fmt.Sprintf("e%d", u.index+1), Status: structs.EvalStatusPending}}
	plan := &structs.PlanApplyEntry{UpdatedAt: 2}
	res, err := structs.FlavorResources(f)
	if err != nil {
		u.t.Fatal(err)
	}
	for k := 0; k < n; k++ {
		u.seq++
		id := fmt.Sprintf("i%d", u.seq)
		inst := bootInstance(id)
		inst.Flavor, inst.FlavorID = nil, f.ID
		inst.ProjectID, inst.UserID = project, fmt.Sprintf("u%d", u.rng.Intn(3))
		e.Instances = append(e.Instances, inst)
		e.Eval.InstanceIDs = append(e.Eval.InstanceIDs, id)
		plan.Placements = append(plan.Placements, &structs.Allocation{ID: "a-" + id, InstanceID: id,
			HostID: fmt.Sprintf("h%d", u.rng.Intn(3)), EvalID: e.Eval.ID, Resources: res,
			DesiredState: structs.AllocDesiredRunning, ClientState: structs.AllocClientPending})
		u.ids = append(u.ids, id)
	}
	if resp := u.apply(structs.InstanceCreateType, e); resp != nil {
		if err, _ := resp.(error); structs.KindOf(err) != structs.KindQuotaReached {
			u.t.Fatalf("create: %v", resp)
		}
		return // p2 keeps Nova's default limits: some creates are refused
	}
	if u.rng.Intn(4) > 0 {
		u.apply(structs.PlanApplyType, plan)
	}
}

// advance moves a random instance one step: a resize waiting for its
// destination gets one, each of its allocations reports what it was
// asked for, and a finished resize is confirmed or reverted.
func (u *usageSim) advance() {
	inst := u.pick()
	if inst == nil {
		return
	}
	if inst.Task != nil && inst.Task.Step == structs.StepSchedule {
		f := inst.Task.NewFlavor
		if f == nil {
			f = inst.Flavor
		}
		res, _ := structs.FlavorResources(f)
		u.apply(structs.PlanApplyType, &structs.PlanApplyEntry{UpdatedAt: 3, Placements: []*structs.Allocation{{
			ID: fmt.Sprintf("a-%s-%d", inst.ID, u.index), InstanceID: inst.ID, HostID: fmt.Sprintf("h%d", u.rng.Intn(3)),
			EvalID: "e-move", Resources: res, ClientState: structs.AllocClientPending}}})
		return
	}
	if inst.VMState == structs.VMStateResized && inst.Task == nil && inst.TaskState == "" {
		op := structs.OpConfirmResize
		if u.rng.Intn(2) == 0 {
			op = structs.OpRevertResize
		}
		u.task(inst.ID, op, nil)
		return
	}
	allocs, err := u.f.State().AllocationsByInstance(nil, inst.ID)
	if err != nil {
		u.t.Fatal(err)
	}
	for _, a := range allocs {
		state, power := "", structs.PowerNoState
		switch a.DesiredState {
		case structs.AllocDesiredRunning:
			state, power = structs.AllocClientRunning, structs.PowerRunning
		case structs.AllocDesiredStopped:
			state, power = structs.AllocClientStopped, structs.PowerShutdown
		case structs.AllocDesiredDeleted:
			state = structs.AllocClientDeleted
		}
		if state == "" || a.Terminal() || (state == a.ClientState && a.PendingAction == "") {
			continue
		}
		u.apply(structs.AllocClientUpdateType, &structs.AllocClientUpdateEntry{HostID: a.HostID, UpdatedAt: int64(u.index),
			Updates: []*structs.AllocClientUpdate{{AllocID: a.ID, ClientState: state, PowerState: power, ActionDoneSeq: a.ActionSeq}}})
	}
}

func (u *usageSim) task(id, op string, tweak func(*structs.InstanceTaskEntry)) {
	e := &structs.InstanceTaskEntry{InstanceID: id, Op: op, UpdatedAt: int64(100 + u.index),
		Action: &structs.InstanceAction{RequestID: fmt.Sprintf("req-%s-%d", op, u.index), InstanceID: id, Action: op, StartTime: 1}}
	if tweak != nil {
		tweak(e)
	}
	u.apply(structs.InstanceTaskType, e) // refused operations are part of the mix
}

func (u *usageSim) resize() {
	inst := u.pick()
	if inst == nil {
		return
	}
	nf := u.flavor()
	u.task(inst.ID, structs.OpResize, func(e *structs.InstanceTaskEntry) {
		e.NewFlavor = nf
		e.Eval = &structs.Evaluation{ID: "e-move", InstanceIDs: []string{inst.ID}, Status: structs.EvalStatusPending}
		e.Migration = &structs.Migration{UUID: fmt.Sprintf("m-%d", u.index)}
	})
}

func (u *usageSim) softDeleteOrRestore() {
	inst := u.pick()
	if inst == nil {
		return
	}
	op := structs.OpSoftDelete
	if inst.VMState == structs.VMStateSoftDeleted {
		op = structs.OpRestore
	}
	u.task(inst.ID, op, nil)
}

func (u *usageSim) delete() {
	inst := u.pick()
	if inst == nil {
		return
	}
	e := &structs.InstanceDeleteEntry{UpdatedAt: int64(u.index), RequestID: fmt.Sprintf("req-d%d", u.index)}
	if u.rng.Intn(2) == 0 {
		e.Purge = []string{inst.ID}
	} else {
		e.Deleting = []string{inst.ID}
	}
	if resp := u.apply(structs.InstanceDeleteType, e); resp != nil {
		u.t.Fatalf("delete: %v", resp)
	}
}

// rewrite stores a changed copy of an instance directly: another
// flavor, project, user or vm_state.
func (u *usageSim) rewrite() {
	inst := u.pick()
	if inst == nil {
		return
	}
	c := inst.Copy()
	switch u.rng.Intn(4) {
	case 0:
		c.Flavor = u.flavor()
	case 1:
		c.ProjectID = fmt.Sprintf("p%d", u.rng.Intn(4))
	case 2:
		c.UserID = fmt.Sprintf("u%d", u.rng.Intn(4))
	case 3:
		c.VMState = []string{structs.VMStateActive, structs.VMStateSoftDeleted, structs.VMStateDeleted, structs.VMStateError}[u.rng.Intn(4)]
	}
	u.index++
	if err := u.f.State().UpsertInstance(u.index, c); err != nil {
		u.t.Fatal(err)
	}
}

// TestQuotaUsageCountersMatchARecount runs random creates, resizes
// (confirmed and reverted), soft deletes, restores, deletes and
// rewrites, and after each checks that the counters equal a full
// recount; then that a restored snapshot rebuilds the same counters.
func TestQuotaUsageCountersMatchARecount(t *testing.T) {
	seed := int64(20261130)
	u := &usageSim{t: t, f: testFSM(t), rng: rand.New(rand.NewSource(seed)), seen: map[string]int{}}
	for k := 0; k < 3; k++ {
		h := bootHost(fmt.Sprintf("h%d", k))
		h.Capabilities = []string{structs.HostCapabilityPause}
		h.Inventories[structs.ResourceVCPU].Total = 1 << 20
		h.Inventories[structs.ResourceMemoryMB].Total = 1 << 40
		h.Inventories[structs.ResourceMemoryMB].MaxUnit = 1 << 40
		if resp := u.apply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h}); resp != nil {
			t.Fatal(resp)
		}
	}
	for _, p := range []string{"p0", "p1", "p3"} {
		u.apply(structs.QuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: p,
			Set: map[string]int64{structs.QuotaInstances: 1 << 30, structs.QuotaCores: 1 << 30, structs.QuotaRAM: 1 << 40}})
	}
	ops := []struct {
		name   string
		weight int
		run    func()
	}{
		{"create", 4, u.create}, {"advance", 10, u.advance}, {"resize", 3, u.resize},
		{"soft delete or restore", 2, u.softDeleteOrRestore}, {"delete", 2, u.delete}, {"rewrite", 1, u.rewrite},
	}
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	for step := 0; step < 1500; step++ {
		r := u.rng.Intn(total)
		for _, op := range ops {
			if r -= op.weight; r < 0 {
				op.run()
				checkCounters(t, u.f.State(), fmt.Sprintf("step %d (%s, seed %d)", step, op.name, seed))
				break
			}
		}
	}
	for _, st := range []string{"resizing", structs.VMStateResized, structs.VMStateSoftDeleted, structs.VMStateActive} {
		if u.seen[st] == 0 {
			t.Fatalf("the sequence never went through %s: %v", st, u.seen)
		}
	}
	t.Logf("states seen: %v", u.seen)

	var buf bytes.Buffer
	if err := u.f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	checkCounters(t, g.State(), "restore")
	if want, got := storedCounters(t, u.f.State()), storedCounters(t, g.State()); !reflect.DeepEqual(want, got) {
		t.Fatalf("restored counters %v, applied %v", got, want)
	}
}

// TestQuotaUsageIsTransactional: a create refused by its quota, or a
// batch member left out, leaves no trace in the counters.
func TestQuotaUsageIsTransactional(t *testing.T) {
	q := newQuotaFixture(t)
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaInstances: 2})
	q.must(q.create(q.instance("p1", "u1", 0)))
	quotaErr(t, q.create(q.instance("p1", "u1", 0), q.instance("p1", "u2", 0)),
		"Quota exceeded for instances: Requested 2, but already used 1 of 2 instances")
	checkCounters(t, q.s, "a refused create")
	if got := storedCounters(t, q.s); len(got) != 2 || got["p1"][0] != 1 || got["p1/u1"][0] != 1 {
		t.Fatalf("counters %v", got)
	}
}

// TestRestoreSnapshotFromBeforeTheCounters restores a snapshot written
// by the build before the usage counters, the action index by prefix
// and the dropped instance index by project (testdata; 5 instances of
// p1/u1, p1/u2, p2/u1 and none, with their actions and allocations on
// h0 and h1): the counters are rebuilt, and every lookup the dropped
// indexes served still answers.
func TestRestoreSnapshotFromBeforeTheCounters(t *testing.T) {
	raw, err := os.ReadFile("testdata/snapshot-before-usage-counters.bin")
	if err != nil {
		t.Fatal(err)
	}
	f := testFSM(t)
	if err := f.Restore(io.NopCloser(bytes.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	s := f.State()
	checkCounters(t, s, "restoring the old snapshot")
	m0, m1 := structs.DevFlavors()[0], structs.DevFlavors()[1]
	want := map[string][3]int64{
		"p1":    {3, int64(2*m0.VCPUs + m1.VCPUs), int64(2*m0.MemoryMB + m1.MemoryMB)},
		"p1/u1": {2, int64(2 * m0.VCPUs), int64(2 * m0.MemoryMB)},
		"p1/u2": {1, int64(m1.VCPUs), int64(m1.MemoryMB)},
		"p2":    {1, int64(m0.VCPUs), int64(m0.MemoryMB)},
		"p2/u1": {1, int64(m0.VCPUs), int64(m0.MemoryMB)},
	}
	if got := storedCounters(t, s); !reflect.DeepEqual(got, want) {
		t.Fatalf("counters %v, want %v", got, want)
	}
	for _, id := range []string{"i1", "i2", "i3", "i4", "i5"} {
		acts, err := s.InstanceActions(nil, id)
		if err != nil || len(acts) != 1 || acts[0].Action != "create" || acts[0].InstanceID != id {
			t.Fatalf("actions of %s: %v %v", id, acts, err)
		}
		allocs, err := s.AllocationsByInstance(nil, id)
		if err != nil || len(allocs) != 1 {
			t.Fatalf("allocations of %s: %v %v", id, allocs, err)
		}
	}
	// i1 has no action of i10's: the prefix is the whole instance id.
	if acts, _ := s.InstanceActions(nil, "i"); len(acts) != 0 {
		t.Fatalf("a prefix of ids matched actions %v", acts)
	}
	if on0, _ := s.InstancesByHost(nil, "h0"); len(on0) != 2 {
		t.Fatalf("%d instances on h0, want 2", len(on0))
	}
	live, _, _, err := s.UsageSources(nil, "p1")
	if err != nil || len(live) != 3 {
		t.Fatalf("usage sources of p1: %d instances (%v)", len(live), err)
	}
}
