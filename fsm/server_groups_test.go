package fsm

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func (q *quotaFixture) group(id, project, policy string) {
	q.t.Helper()
	q.must(q.s.CreateServerGroup(q.next(), &structs.ServerGroupCreateEntry{Group: &structs.ServerGroup{
		ID: id, Name: "g-" + id, ProjectID: project, UserID: "u1", Policy: policy}}))
}

func memberIDs(t *testing.T, s *StateStore, gid string) []string {
	t.Helper()
	g, err := s.ServerGroupByID(nil, gid)
	if err != nil || g == nil {
		t.Fatalf("group %s: %v %v", gid, g, err)
	}
	return g.Members
}

func TestServerGroupCreateAndQuota(t *testing.T) {
	f := testFSM(t)
	entry := func(id, project, policy string, max int) *structs.ServerGroupCreateEntry {
		return &structs.ServerGroupCreateEntry{Group: &structs.ServerGroup{ID: id, Name: "g", ProjectID: project, UserID: "u1",
			Policy: policy, MaxServerPerHost: max, Members: []string{"ignored"}}}
	}
	if resp := apply(t, f, 1, structs.ServerGroupCreateType, entry("g1", "p1", structs.PolicyAntiAffinity, 3)); resp != nil {
		t.Fatal(resp)
	}
	g, _ := f.State().ServerGroupByID(nil, "g1")
	if g.CreateIndex != 1 || g.MaxPerHost() != 3 || len(g.Members) != 0 || !g.Hard() {
		t.Fatalf("group %+v", g)
	}
	for _, bad := range []struct {
		e    *structs.ServerGroupCreateEntry
		kind structs.ErrorKind
	}{
		{entry("g1", "p1", structs.PolicyAffinity, 0), structs.KindConflict},
		{entry("g2", "p1", "spread", 0), structs.KindInvalid},
		{entry("g2", "p1", structs.PolicyAffinity, 2), structs.KindInvalid},
		{&structs.ServerGroupCreateEntry{}, structs.KindInvalid},
	} {
		if resp := apply(t, f, 2, structs.ServerGroupCreateType, bad.e); structs.KindOf(resp.(error)) != bad.kind {
			t.Fatalf("%+v: %v", bad.e.Group, resp)
		}
	}
	apply(t, f, 3, structs.QuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaServerGroups: 2}})
	if resp := apply(t, f, 4, structs.ServerGroupCreateType, entry("g2", "p1", structs.PolicySoftAffinity, 0)); resp != nil {
		t.Fatal(resp)
	}
	resp := apply(t, f, 5, structs.ServerGroupCreateType, entry("g3", "p1", structs.PolicyAffinity, 0))
	if err, _ := resp.(error); structs.KindOf(err) != structs.KindQuotaReached || structs.Message(err) != "Quota exceeded, too many server groups." {
		t.Fatalf("over quota: %v", resp)
	}
	if resp := apply(t, f, 6, structs.ServerGroupCreateType, entry("g3", "p2", structs.PolicyAffinity, 0)); resp != nil {
		t.Fatal(resp)
	}
	all, _ := f.State().ServerGroups(nil, "")
	mine, _ := f.State().ServerGroups(nil, "p1")
	if len(all) != 3 || len(mine) != 2 || mine[0].ID != "g1" || mine[1].ID != "g2" {
		t.Fatalf("all %d, p1 %v", len(all), mine)
	}
	// Deleting frees the quota; a missing group is not found.
	if resp := apply(t, f, 7, structs.ServerGroupDeleteType, &structs.ServerGroupDeleteEntry{GroupIDs: []string{"g2"}}); resp != nil {
		t.Fatal(resp)
	}
	if resp := apply(t, f, 8, structs.ServerGroupDeleteType, &structs.ServerGroupDeleteEntry{GroupIDs: []string{"g2"}}); structs.KindOf(resp.(error)) != structs.KindNotFound {
		t.Fatalf("delete missing: %v", resp)
	}
	if resp := apply(t, f, 9, structs.ServerGroupCreateType, entry("g4", "p1", structs.PolicyAffinity, 0)); resp != nil {
		t.Fatal(resp)
	}
}

func TestGroupMembershipIsRecordedWithTheCreate(t *testing.T) {
	q := newQuotaFixture(t)
	q.group("g1", "p1", structs.PolicyAntiAffinity)
	a, b := q.instance("p1", "u1", 0), q.instance("p1", "u1", 0)
	a.ServerGroupID, b.ServerGroupID = "g1", "g1"
	q.must(q.create(a, b))
	if got := memberIDs(t, q.s, "g1"); !reflect.DeepEqual(got, []string{a.ID, b.ID}) {
		t.Fatalf("members %v", got)
	}
	if q.s.Index(TableServerGroups) != q.index {
		t.Fatal("the groups table's index did not move with the create")
	}
	// A create naming a missing group writes nothing.
	c := q.instance("p1", "u1", 0)
	c.ServerGroupID = "nope"
	if err := q.create(c); structs.KindOf(err) != structs.KindInvalid || structs.Message(err) != "Instance group nope could not be found." {
		t.Fatalf("missing group: %v", err)
	}
	if got, _ := q.s.InstanceByID(nil, c.ID); got != nil {
		t.Fatal("instance of a refused create stored")
	}

	// server_group_members is counted per user in the group.
	q.setQuota(structs.QuotaScopeProject, "p1", map[string]int64{structs.QuotaServerGroupMembers: 3})
	d, e := q.instance("p1", "u1", 0), q.instance("p1", "u1", 0)
	d.ServerGroupID, e.ServerGroupID = "g1", "g1"
	if err := q.create(d, e); structs.KindOf(err) != structs.KindQuotaReached || structs.Message(err) != "Quota exceeded, too many servers in group" {
		t.Fatalf("over members quota: %v", err)
	}
	other := q.instance("p1", "u2", 0)
	other.ServerGroupID = "g1"
	q.must(q.create(d))
	q.must(q.create(other))

	// A member that is gone is no longer listed, and no longer counts.
	q.must(q.s.DeleteInstances(q.next(), &structs.InstanceDeleteEntry{Purge: []string{a.ID}}))
	if got := memberIDs(t, q.s, "g1"); !reflect.DeepEqual(got, []string{b.ID, d.ID, other.ID}) {
		t.Fatalf("members after delete %v", got)
	}
	q.must(q.create(e))
	g, _ := q.s.ServerGroupByID(nil, "g1")
	members, _ := q.s.GroupMembers(nil, g)
	if len(members) != 4 || members[3].ID != e.ID {
		t.Fatalf("members %v", g.Members)
	}
	// The stored group was pruned by the last write; reads never modify it.
	raw, _ := q.s.ReadTxn().First(TableServerGroups, "id", "g1")
	if n := len(raw.(*structs.ServerGroup).Members); n != 4 {
		t.Fatalf("stored %d members", n)
	}
}
