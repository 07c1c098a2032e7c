package fsm

import (
	"maps"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestPlanReadsUpFrontAsOneByOne applies the same placements as one
// plan (its instances and allocations read before any is written) and
// as one plan each (read as each is applied), and as a plan that names
// an instance twice (read one by one, each seeing the one before), and
// checks that each store ends as the one-by-one store does.
func TestPlanReadsUpFrontAsOneByOne(t *testing.T) {
	type outcome struct {
		hosts  map[string]map[string]int64
		placed map[string]string
		allocs int
	}
	same := func(a, b outcome) bool {
		return maps.EqualFunc(a.hosts, b.hosts, maps.Equal) && maps.Equal(a.placed, b.placed) && a.allocs == b.allocs
	}
	run := func(plans [][]*structs.Allocation) outcome {
		q := newQuotaFixture(t)
		q.must(q.s.RegisterHost(q.next(), bootHost("h2")))
		insts := []*structs.Instance{q.instance("p1", "u1", 0), q.instance("p1", "u1", 0), q.instance("p1", "u1", 0)}
		q.must(q.create(insts...))
		for _, placements := range plans {
			q.must(q.s.ApplyPlan(q.next(), &structs.PlanApplyEntry{Placements: placements, UpdatedAt: 7}))
		}
		out := outcome{hosts: map[string]map[string]int64{}, placed: map[string]string{}}
		for _, id := range []string{"h1", "h2"} {
			h, err := q.s.HostByID(nil, id)
			q.must(err)
			out.hosts[id] = h.Usage
		}
		for _, inst := range insts {
			got, err := q.s.InstanceByID(nil, inst.ID)
			q.must(err)
			out.placed[got.ID] = got.HostID + "/" + got.AZ
		}
		allocs, err := q.s.Allocations(nil)
		q.must(err)
		out.allocs = len(allocs)
		return out
	}
	res, _ := structs.FlavorResources(structs.DevFlavors()[0])
	place := func(id, inst, host string) *structs.Allocation {
		return &structs.Allocation{ID: id, InstanceID: inst, HostID: host, Resources: res, DesiredState: structs.AllocDesiredRunning}
	}
	// newQuotaFixture names instances i1, i2, i3 in creation order.
	all := func() []*structs.Allocation {
		return []*structs.Allocation{place("a1", "i1", "h1"), place("a2", "i2", "h2"), place("a3", "i3", "h1")}
	}
	var single [][]*structs.Allocation
	for _, a := range all() {
		single = append(single, []*structs.Allocation{a})
	}
	want := run(single)
	if got := run([][]*structs.Allocation{all()}); !same(got, want) {
		t.Errorf("one plan: %+v, one by one: %+v", got, want)
	}
	// i1 placed twice in one plan: both allocations count, the second
	// host is the instance's, as when they come in two plans.
	twice := append(all(), place("a4", "i1", "h2"))
	want = run(append(single, []*structs.Allocation{twice[3]}))
	if got := run([][]*structs.Allocation{twice}); !same(got, want) {
		t.Errorf("an instance twice: %+v, one by one: %+v", got, want)
	}
	if want.placed["i1"][:2] != "h2" || want.allocs != 4 {
		t.Errorf("one by one: %+v", want)
	}
}
