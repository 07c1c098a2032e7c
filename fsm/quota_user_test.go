package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// populateUserQuotas fills the user quota table for the snapshot round
// trip.
func populateUserQuotas(t *testing.T, s *StateStore) {
	t.Helper()
	if err := s.UpdateUserQuotas(6, &structs.UserQuotaEntry{ProjectID: "p1", UserID: "u1",
		Set: map[string]int64{structs.QuotaInstances: 2}}); err != nil {
		t.Fatal(err)
	}
}

func TestUserQuotaLimitsFallBackToTheProject(t *testing.T) {
	f := testFSM(t)
	q := &quotaFixture{t: t, s: f.State(), index: 10}
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaCores: 8})
	if resp := apply(t, f, q.next(), structs.UserQuotaUpdateType, &structs.UserQuotaEntry{ProjectID: "p1", UserID: "u1",
		Set: map[string]int64{structs.QuotaInstances: 2, structs.QuotaKeyPairs: 1}}); resp != nil {
		t.Fatalf("apply: %v", resp)
	}
	u1, u2 := q.s.UserQuotaLimits(nil, "p1", "u1"), q.s.UserQuotaLimits(nil, "p1", "u2")
	if u1[structs.QuotaInstances] != 2 || u1[structs.QuotaKeyPairs] != 1 || u1[structs.QuotaCores] != 8 || u1[structs.QuotaRAM] != 51200 {
		t.Fatalf("u1 %v", u1)
	}
	if u2[structs.QuotaInstances] != 10 || u2[structs.QuotaCores] != 8 {
		t.Fatalf("u2 %v", u2)
	}
	if q.s.Index(TableUserQuotas) != q.index {
		t.Fatalf("table index %d, want %d", q.s.Index(TableUserQuotas), q.index)
	}
	// A second entry merges; a delete drops the user's own limits.
	q.must(q.s.UpdateUserQuotas(q.next(), &structs.UserQuotaEntry{ProjectID: "p1", UserID: "u1", Set: map[string]int64{structs.QuotaRAM: 512}}))
	if u1 = q.s.UserQuotaLimits(nil, "p1", "u1"); u1[structs.QuotaInstances] != 2 || u1[structs.QuotaRAM] != 512 {
		t.Fatalf("merged %v", u1)
	}
	if resp := apply(t, f, q.next(), structs.UserQuotaUpdateType, &structs.UserQuotaEntry{ProjectID: "p1", UserID: "u1", Delete: true}); resp != nil {
		t.Fatalf("delete: %v", resp)
	}
	if u1 = q.s.UserQuotaLimits(nil, "p1", "u1"); u1[structs.QuotaInstances] != 10 {
		t.Fatalf("after delete %v", u1)
	}
	// A project's delete drops its users' limits, not other projects'.
	q.must(q.s.UpdateUserQuotas(q.next(), &structs.UserQuotaEntry{ProjectID: "p1", UserID: "u1", Set: map[string]int64{structs.QuotaRAM: 1}}))
	q.must(q.s.UpdateUserQuotas(q.next(), &structs.UserQuotaEntry{ProjectID: "p2", UserID: "u1", Set: map[string]int64{structs.QuotaRAM: 2}}))
	q.must(q.s.UpdateQuotas(q.next(), &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1", Delete: true}))
	if got := q.s.UserQuotaLimits(nil, "p1", "u1")[structs.QuotaRAM]; got != 51200 {
		t.Fatalf("p1's user limit after the project's delete: %d", got)
	}
	if got := q.s.UserQuotaLimits(nil, "p2", "u1")[structs.QuotaRAM]; got != 2 {
		t.Fatalf("p2's user limit: %d", got)
	}
	for _, bad := range []*structs.UserQuotaEntry{
		{ProjectID: "p1", UserID: "u1", Set: map[string]int64{"gpus": 1}},
		{ProjectID: "p1", UserID: "u1", Set: map[string]int64{structs.QuotaCores: -2}},
		{ProjectID: "p1"},
		{UserID: "u1"},
	} {
		if err := q.s.UpdateUserQuotas(q.next(), bad); structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
}

func TestCreateInstancesEnforcesUserQuota(t *testing.T) {
	q := newQuotaFixture(t)
	q.must(q.s.UpdateUserQuotas(q.next(), &structs.UserQuotaEntry{ProjectID: "p1", UserID: "u1",
		Set: map[string]int64{structs.QuotaInstances: 2, structs.QuotaCores: 3}}))
	q.must(q.create(q.instance("p1", "u1", 0)))
	before := q.s.Index(TableInstances)
	err := q.create(q.instance("p1", "u1", 0), q.instance("p1", "u1", 0))
	quotaErr(t, err, "Quota exceeded for instances: Requested 2, but already used 1 of 2 instances")
	if q.s.Index(TableInstances) != before {
		t.Fatal("a refused create wrote")
	}
	// m1.large's 4 cores pass the user's 3.
	err = q.create(q.instance("p1", "u1", 3))
	if structs.KindOf(err) != structs.KindQuotaReached {
		t.Fatalf("cores over the user's limit: %v", err)
	}
	// Other users of the project keep the project's limits.
	for range 5 {
		q.must(q.create(q.instance("p1", "u2", 0)))
	}
	q.must(q.create(q.instance("p1", "u1", 0)))
	quotaErr(t, q.create(q.instance("p1", "u1", 0)), "Quota exceeded for instances: Requested 1, but already used 2 of 2 instances")
	used, err := q.s.UserQuotaUsage(nil, "p1", "u1")
	if err != nil || used[structs.QuotaInstances] != 2 || used[structs.QuotaCores] != 2 {
		t.Fatalf("usage %v %v", used, err)
	}
}

func TestKeyPairQuotaOfTheUser(t *testing.T) {
	q := newQuotaFixture(t)
	q.must(q.s.UpsertIdentity(q.next(), &structs.IdentityUpsertEntry{Users: []*structs.User{{ID: "u1", Name: "u1", DomainID: "default", DefaultProjectID: "p1"}}}))
	q.must(q.s.UpdateUserQuotas(q.next(), &structs.UserQuotaEntry{ProjectID: "p1", UserID: "u1", Set: map[string]int64{structs.QuotaKeyPairs: 1}}))
	q.must(q.s.UpsertKeyPairs(q.next(), []*structs.KeyPair{{Name: "a", UserID: "u1", Type: "ssh", PublicKey: "ssh-rsa A"}}))
	err := q.s.UpsertKeyPairs(q.next(), []*structs.KeyPair{{Name: "b", UserID: "u1", Type: "ssh", PublicKey: "ssh-rsa B"}})
	quotaErr(t, err, "Maximum number of key pairs exceeded")
}
