package fsm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// populatePlacement fills the server group, aggregate and quota tables
// for the snapshot round trip, at indexes up to 6 like populate's.
func populatePlacement(t *testing.T, s *StateStore) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.CreateServerGroup(5, &structs.ServerGroupCreateEntry{Group: &structs.ServerGroup{
		ID: "g1", Name: "web", ProjectID: "p1", UserID: "u1", Policy: structs.PolicyAntiAffinity, MaxServerPerHost: 2, CreatedAt: 9}}))
	az := "az1"
	must(s.ApplyAggregate(5, &structs.AggregateEntry{Op: structs.AggregateOpCreate, UUID: "ag-uuid", Name: "rack1", AZ: &az, At: 9}))
	must(s.ApplyAggregate(6, &structs.AggregateEntry{Op: structs.AggregateOpAddHost, AggregateID: 5, HostID: "h1"}))
	must(s.UpdateQuotas(6, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1", Set: map[string]int64{structs.QuotaInstances: 50}}))
}

// quotaFixture is an FSM with one host and the m1 flavors.
type quotaFixture struct {
	t     *testing.T
	s     *StateStore
	index uint64
	seq   int
}

func newQuotaFixture(t *testing.T) *quotaFixture {
	q := &quotaFixture{t: t, s: testFSM(t).State()}
	q.must(q.s.RegisterHost(q.next(), bootHost("h1")))
	return q
}

func (q *quotaFixture) next() uint64 { q.index++; return q.index }

func (q *quotaFixture) must(err error) {
	q.t.Helper()
	if err != nil {
		q.t.Fatal(err)
	}
}

func (q *quotaFixture) setQuota(scope, id string, limits map[string]int64) {
	q.t.Helper()
	q.must(q.s.UpdateQuotas(q.next(), &structs.QuotaEntry{Scope: scope, ID: id, Set: limits}))
}

// instance is a new instance of project p with flavor f (DevFlavors
// index).
func (q *quotaFixture) instance(project, user string, f int) *structs.Instance {
	q.seq++
	id := fmt.Sprintf("i%d", q.seq)
	inst := bootInstance(id)
	inst.ProjectID, inst.UserID, inst.Flavor = project, user, structs.DevFlavors()[f]
	return inst
}

func (q *quotaFixture) create(insts ...*structs.Instance) error {
	e := &structs.InstanceCreateEntry{Instances: insts, Eval: &structs.Evaluation{ID: fmt.Sprintf("e%d", q.index+1), Status: structs.EvalStatusPending}}
	for _, i := range insts {
		e.Eval.InstanceIDs = append(e.Eval.InstanceIDs, i.ID)
	}
	return q.s.CreateInstances(q.next(), e)
}

func quotaErr(t *testing.T, err error, msg string) {
	t.Helper()
	if structs.KindOf(err) != structs.KindQuotaReached || structs.Message(err) != msg {
		t.Fatalf("got %v, want a quota error %q", err, msg)
	}
}

func TestQuotaLimitsResolveProjectThenClassThenDefault(t *testing.T) {
	q := newQuotaFixture(t)
	if got := q.s.QuotaLimits(nil, "p1")[structs.QuotaInstances]; got != 10 {
		t.Fatalf("built-in default %d", got)
	}
	q.setQuota(structs.QuotaScopeClass, structs.QuotaDefaultClass, map[string]int64{structs.QuotaInstances: 20, structs.QuotaCores: 40})
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaInstances: -1})
	p1, p2 := q.s.QuotaLimits(nil, "p1"), q.s.QuotaLimits(nil, "p2")
	if p1[structs.QuotaInstances] != -1 || p1[structs.QuotaCores] != 40 || p1[structs.QuotaRAM] != 51200 {
		t.Fatalf("p1 %v", p1)
	}
	if p2[structs.QuotaInstances] != 20 || len(p2) != len(structs.DefaultQuotas) {
		t.Fatalf("p2 %v", p2)
	}
	if c := q.s.QuotaClassLimits(nil, structs.QuotaDefaultClass); c[structs.QuotaInstances] != 20 || c["injected_files"] != 5 {
		t.Fatalf("class %v", c)
	}
	// A second update merges; a delete drops the project's own limits.
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaCores: 3})
	if p1 = q.s.QuotaLimits(nil, "p1"); p1[structs.QuotaInstances] != -1 || p1[structs.QuotaCores] != 3 {
		t.Fatalf("merged %v", p1)
	}
	q.must(q.s.UpdateQuotas(q.next(), &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1", Delete: true}))
	if p1 = q.s.QuotaLimits(nil, "p1"); p1[structs.QuotaInstances] != 20 {
		t.Fatalf("after delete %v", p1)
	}
	for _, bad := range []*structs.QuotaEntry{
		{Scope: structs.QuotaScopeProject, ID: "p1", Set: map[string]int64{"gpus": 1}},
		{Scope: structs.QuotaScopeProject, ID: "p1", Set: map[string]int64{structs.QuotaCores: -2}},
		{Scope: "user", ID: "p1"},
		{Scope: structs.QuotaScopeProject},
	} {
		if err := q.s.UpdateQuotas(q.next(), bad); structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
}

func TestCreateInstancesEnforcesQuotaAtomically(t *testing.T) {
	q := newQuotaFixture(t)
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaInstances: 3})
	q.must(q.create(q.instance("p1", "u1", 0), q.instance("p1", "u1", 0)))
	// A multi-create that would pass the limit is refused whole.
	before := q.s.Index(TableInstances)
	err := q.create(q.instance("p1", "u1", 0), q.instance("p1", "u1", 0))
	quotaErr(t, err, "Quota exceeded for instances: Requested 2, but already used 2 of 3 instances")
	if q.s.Index(TableInstances) != before {
		t.Fatal("a refused create wrote")
	}
	if insts, _ := q.s.Instances(nil); len(insts) != 2 {
		t.Fatalf("%d instances", len(insts))
	}
	if ev, _ := q.s.EvalByID(nil, fmt.Sprintf("e%d", q.index)); ev != nil {
		t.Fatal("a refused create's eval was stored")
	}
	q.must(q.create(q.instance("p1", "u1", 0)))
	// Other projects, and instances without a project, are not affected.
	q.must(q.create(q.instance("p2", "u2", 0)))
	for range 12 {
		q.must(q.create(q.instance("", "", 0)))
	}

	// Deleting releases: usage is counted, never stored.
	insts, _ := q.s.Instances(nil)
	var victim string
	for _, i := range insts {
		if i.ProjectID == "p1" {
			victim = i.ID
		}
	}
	q.must(q.s.DeleteInstances(q.next(), &structs.InstanceDeleteEntry{Purge: []string{victim}}))
	q.must(q.create(q.instance("p1", "u1", 0)))
	used, err := q.s.QuotaUsage(nil, "p1", "")
	if err != nil || used[structs.QuotaInstances] != 3 || used[structs.QuotaCores] != 3 || used[structs.QuotaRAM] != 3*512 {
		t.Fatalf("usage %v %v", used, err)
	}
}

func TestCreateQuotaNamesEveryResourceOver(t *testing.T) {
	q := newQuotaFixture(t)
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaCores: 4, structs.QuotaRAM: 8192})
	q.must(q.create(q.instance("p1", "u1", 2))) // m1.medium: 2 VCPUs, 4096 MB
	err := q.create(q.instance("p1", "u1", 3))  // m1.large: 4 VCPUs, 8192 MB
	quotaErr(t, err, "Quota exceeded for cores, ram: Requested 4, 8192, but already used 2, 4096 of 4, 8192 cores, ram")
	err = q.create(q.instance("p1", "u1", 2), q.instance("p1", "u1", 0))
	quotaErr(t, err, "Quota exceeded for cores, ram: Requested 3, 4608, but already used 2, 4096 of 4, 8192 cores, ram")
	q.must(q.create(q.instance("p1", "u1", 1))) // m1.small: 1 VCPU, 2048 MB

	// A soft-deleted instance uses nothing.
	insts, _ := q.s.Instances(nil)
	q.must(q.s.UpsertInstance(q.next(), func() *structs.Instance {
		c := insts[0].Copy()
		c.VMState = structs.VMStateSoftDeleted
		return c
	}()))
	if used, _ := q.s.QuotaUsage(nil, "p1", ""); used[structs.QuotaInstances] != 1 || used[structs.QuotaCores] != 1 {
		t.Fatalf("usage with a soft-deleted instance %v", used)
	}
}

func TestCheckQuotaDeltaForResize(t *testing.T) {
	q := newQuotaFixture(t)
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaCores: 4, structs.QuotaRAM: 6144})
	inst := q.instance("p1", "u1", 2) // 2 VCPUs, 4096 MB
	q.must(q.create(inst))
	txn := q.s.writeTxn()
	defer txn.Abort()
	if err := checkQuotaDelta(txn, "p1", 2, 2048); err != nil {
		t.Fatalf("growing to the limit: %v", err)
	}
	quotaErr(t, checkQuotaDelta(txn, "p1", 3, 0), "Quota exceeded for cores: Requested 3, but already used 2 of 4 cores")
	quotaErr(t, checkQuotaDelta(txn, "p1", 1, 4096), "Quota exceeded for ram: Requested 4096, but already used 4096 of 6144 ram")
	if err := checkQuotaDelta(txn, "p1", -1, -2048); err != nil {
		t.Fatalf("shrinking: %v", err)
	}
	if err := checkQuotaDelta(txn, "", 100, 100); err != nil {
		t.Fatalf("no project: %v", err)
	}
	txn.Abort()

	// While a resize is in flight its larger flavor stays counted.
	stored, _ := q.s.InstanceByID(nil, inst.ID)
	c := stored.Copy()
	c.Task = &structs.Task{Kind: structs.TaskKindResize, NewFlavor: structs.DevFlavors()[3]}
	q.must(q.s.UpsertInstance(q.next(), c))
	if used, _ := q.s.QuotaUsage(nil, "p1", ""); used[structs.QuotaCores] != 4 || used[structs.QuotaRAM] != 8192 {
		t.Fatalf("usage during a resize %v", used)
	}
}

func TestMetadataItemsQuota(t *testing.T) {
	q := newQuotaFixture(t)
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaMetadataItems: 2})
	inst := q.instance("p1", "u1", 0)
	inst.Metadata = map[string]string{"a": "1", "b": "2", "c": "3"}
	quotaErr(t, q.create(inst), "Maximum number of metadata items exceeds 2")
	inst.Metadata = map[string]string{"a": "1", "b": "2"}
	q.must(q.create(inst))
	err := q.s.UpdateInstance(q.next(), &structs.InstanceUpdateEntry{InstanceID: inst.ID, SetMetadata: map[string]string{"c": "3"}})
	quotaErr(t, err, "Maximum number of metadata items exceeds 2")
	if got, _ := q.s.InstanceByID(nil, inst.ID); len(got.Metadata) != 2 {
		t.Fatalf("refused update wrote %v", got.Metadata)
	}
	q.must(q.s.UpdateInstance(q.next(), &structs.InstanceUpdateEntry{InstanceID: inst.ID, ReplaceMetadata: true,
		SetMetadata: map[string]string{"x": "1", "y": "2"}}))
	// Without a project the default class applies (128).
	noProject := q.instance("", "", 0)
	noProject.Metadata = map[string]string{}
	for i := range 129 {
		noProject.Metadata[fmt.Sprint(i)] = "v"
	}
	quotaErr(t, q.create(noProject), "Maximum number of metadata items exceeds 128")
}

func TestKeyPairQuotaPerUser(t *testing.T) {
	q := newQuotaFixture(t)
	q.must(q.s.UpsertIdentity(q.next(), &structs.IdentityUpsertEntry{
		Projects: []*structs.Project{{ID: "p1", Name: "demo", DomainID: "default", Enabled: true}},
		Users:    []*structs.User{{ID: "u1", Name: "alice", DomainID: "default", Enabled: true, DefaultProjectID: "p1"}},
	}))
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaKeyPairs: 2})
	q.setQuota(structs.QuotaScopeClass, structs.QuotaDefaultClass, map[string]int64{structs.QuotaKeyPairs: 1})
	kp := func(user, name string) *structs.KeyPair {
		return &structs.KeyPair{Name: name, UserID: user, Type: "ssh", PublicKey: "ssh-rsa AAAA"}
	}
	q.must(q.s.UpsertKeyPairs(q.next(), []*structs.KeyPair{kp("u1", "a"), kp("u1", "b")}))
	// Replacing an existing key pair uses nothing more.
	q.must(q.s.UpsertKeyPairs(q.next(), []*structs.KeyPair{kp("u1", "b")}))
	quotaErr(t, q.s.UpsertKeyPairs(q.next(), []*structs.KeyPair{kp("u1", "c")}), "Maximum number of key pairs exceeded")
	// A user unknown to identity gets the default class's limit.
	q.must(q.s.UpsertKeyPairs(q.next(), []*structs.KeyPair{kp("u9", "a")}))
	quotaErr(t, q.s.UpsertKeyPairs(q.next(), []*structs.KeyPair{kp("u9", "b")}), "Maximum number of key pairs exceeded")
	if used, _ := q.s.QuotaUsage(nil, "p1", "u1"); used[structs.QuotaKeyPairs] != 2 {
		t.Fatalf("usage %v", used)
	}
}

func TestConcurrentCreatesNeverPassTheQuota(t *testing.T) {
	// Entries apply one after the other, whatever order they were
	// proposed in: the one that would pass the limit is refused, as the
	// leader's concurrent proposals are.
	f := testFSM(t)
	apply(t, f, 1, structs.QuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaInstances: 5}})
	refused := 0
	for i := range 20 {
		inst := bootInstance(fmt.Sprintf("c%d", i))
		inst.ProjectID = "p1"
		resp := apply(t, f, uint64(i+2), structs.InstanceCreateType, &structs.InstanceCreateEntry{Instances: []*structs.Instance{inst}})
		if err, ok := resp.(error); ok {
			if !strings.Contains(err.Error(), "Quota exceeded for instances") {
				t.Fatal(err)
			}
			refused++
		}
	}
	if insts, _ := f.State().Instances(nil); len(insts) != 5 || refused != 15 {
		t.Fatalf("%d instances, %d refused", len(insts), refused)
	}
}

// TestQuotaUpdateChecksUsageInItsEntry: a project limit below the
// usage is refused by the entry itself when it asks for the check, so a
// create applied after the API looked cannot slip under it; an entry
// without the check (an admin's force) applies.
func TestQuotaUpdateChecksUsageInItsEntry(t *testing.T) {
	q := newQuotaFixture(t)
	q.must(q.create(q.instance("p1", "u1", 0), q.instance("p1", "u1", 0)))
	before := q.s.Index(TableQuotas)
	err := q.s.UpdateQuotas(q.next(), &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaInstances: 1, structs.QuotaCores: -1}, CheckUsage: true})
	if structs.KindOf(err) != structs.KindInvalid ||
		structs.Message(err) != "Quota limit 1 for instances must be greater than or equal to already used and reserved 2." {
		t.Fatalf("a limit below the usage: %v", err)
	}
	if q.s.Index(TableQuotas) != before {
		t.Fatal("a refused update wrote")
	}
	if err := q.s.CheckQuotaUsage("p1", map[string]int64{structs.QuotaInstances: 1}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("CheckQuotaUsage: %v", err)
	}
	q.must(q.s.UpdateQuotas(q.next(), &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaInstances: 2}, CheckUsage: true}))
	q.must(q.s.UpdateQuotas(q.next(), &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaInstances: 1}}))
	if l := q.s.QuotaLimits(nil, "p1")[structs.QuotaInstances]; l != 1 {
		t.Fatalf("forced limit %d", l)
	}
}
