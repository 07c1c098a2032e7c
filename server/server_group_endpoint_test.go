package server

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

func createGroup(t testing.TB, s *Server, project, policy string, maxPerHost int) *structs.ServerGroup {
	t.Helper()
	var resp structs.SingleServerGroupResponse
	err := s.RPC("ServerGroup.Create", &structs.ServerGroupCreateRequest{Group: &structs.ServerGroup{
		Name: "g-" + policy, ProjectID: project, UserID: "u1", Policy: policy, MaxServerPerHost: maxPerHost}}, &resp)
	if err != nil {
		t.Fatalf("create %s group: %v", policy, err)
	}
	return resp.Group
}

// bootInGroup boots one instance in a group, as a Nova create with the
// group hint does.
func bootInGroup(t testing.TB, s *Server, name, group string) (*structs.InstanceCreateResponse, error) {
	var resp structs.InstanceCreateResponse
	err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: name, FlavorID: "m1.tiny", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", Hints: &structs.SchedulerHints{Group: group}}, &resp)
	return &resp, err
}

func TestServerGroupEndpoint(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	registerHost(t, s, testHost("h1", 8, 16384))
	g := createGroup(t, s, "p1", structs.PolicyAffinity, 0)
	if g.ID == "" || g.CreateIndex == 0 || g.CreatedAt == 0 {
		t.Fatalf("group %+v", g)
	}
	createGroup(t, s, "p2", structs.PolicyAntiAffinity, 2)
	err := s.RPC("ServerGroup.Create", &structs.ServerGroupCreateRequest{Group: &structs.ServerGroup{Name: "x", ProjectID: "p1",
		Policy: structs.PolicyAffinity, MaxServerPerHost: 2}}, &structs.SingleServerGroupResponse{})
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("rules with affinity: %v", err)
	}

	resp, err := bootInGroup(t, s, "web", g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if inst := resp.Instances[0]; inst.ServerGroupID != g.ID || inst.Hints == nil || inst.Hints.Group != g.ID {
		t.Fatalf("instance %+v", inst)
	}
	if _, err := bootInGroup(t, s, "lost", "00000000-0000-0000-0000-000000000000"); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("missing group: %v", err)
	}

	var one structs.SingleServerGroupResponse
	if err := s.RPC("ServerGroup.Get", &structs.ServerGroupSpecificRequest{GroupID: g.ID}, &one); err != nil {
		t.Fatal(err)
	}
	if len(one.Group.Members) != 1 || one.Group.Members[0] != resp.Instances[0].ID {
		t.Fatalf("members %v", one.Group.Members)
	}
	var list structs.ServerGroupListResponse
	if err := s.RPC("ServerGroup.List", &structs.ServerGroupListRequest{ProjectID: "p1"}, &list); err != nil || len(list.Groups) != 1 {
		t.Fatalf("p1's groups %v %v", list.Groups, err)
	}
	if err := s.RPC("ServerGroup.List", &structs.ServerGroupListRequest{}, &list); err != nil || len(list.Groups) != 2 {
		t.Fatalf("all groups %v %v", list.Groups, err)
	}

	// Deleting the member empties the group; deleting the group leaves
	// nothing to read.
	if err := s.RPC("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: ids(resp)}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the member to go", 10*time.Second, func() error {
		if err := s.RPC("ServerGroup.Get", &structs.ServerGroupSpecificRequest{GroupID: g.ID}, &one); err != nil {
			return err
		}
		if len(one.Group.Members) != 0 {
			// Placed on an up host: the agent must confirm. Do it.
			inst, _ := s.fsm.State().InstanceByID(nil, resp.Instances[0].ID)
			if inst != nil && inst.HostID != "" {
				allocs, _ := s.fsm.State().AllocationsByInstance(nil, inst.ID)
				for _, a := range allocs {
					_ = s.RPC("Alloc.UpdateFromClient", &structs.AllocUpdateRequest{HostID: inst.HostID,
						Updates: []*structs.AllocClientUpdate{{AllocID: a.ID, ClientState: structs.AllocClientDeleted}}}, &structs.GenericResponse{})
				}
			}
			return fmt.Errorf("members %v", one.Group.Members)
		}
		return nil
	})
	if err := s.RPC("ServerGroup.Delete", &structs.ServerGroupDeleteRequest{GroupID: g.ID}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("ServerGroup.Get", &structs.ServerGroupSpecificRequest{GroupID: g.ID}, &one); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("deleted group: %v", err)
	}
	if err := s.RPC("ServerGroup.Delete", &structs.ServerGroupDeleteRequest{GroupID: g.ID}, &structs.GenericResponse{}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("delete again: %v", err)
	}
}

// TestConcurrentBootsKeepAntiAffinity races boots into anti-affinity
// groups: the evaluations wait in the broker until eight workers start
// at once, so each is scheduled without seeing the others' placements
// and only the plan applier's re-check keeps members apart. No two
// members of the strict group may share a host, and no host may take
// more than two of the group with max_server_per_host 2; every member is
// placed in the end (refused placements are re-planned).
func TestConcurrentBootsKeepAntiAffinity(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1 })
	waitForLeader(t, s)
	seedFlavors(t, s)
	for i := range 8 {
		registerHost(t, s, testHost(fmt.Sprintf("h%d", i), 8, 16384))
	}
	strict := createGroup(t, s, "p1", structs.PolicyAntiAffinity, 0)
	two := createGroup(t, s, "p1", structs.PolicyAntiAffinity, 2)
	setQuota(t, s, "p1", map[string]int64{structs.QuotaServerGroupMembers: -1, structs.QuotaInstances: -1, structs.QuotaCores: -1, structs.QuotaRAM: -1})

	var mu sync.Mutex
	byGroup := map[string][]string{}
	var wg sync.WaitGroup
	for i := range 14 {
		group := strict.ID
		if i%2 == 1 {
			group = two.ID
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := bootInGroup(t, s, fmt.Sprintf("r%d", i), group)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			byGroup[group] = append(byGroup[group], ids(resp)...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	s.startWorkers(8)
	for _, tc := range []struct {
		group *structs.ServerGroup
		max   int
	}{{strict, 1}, {two, 2}} {
		insts := waitSettled(t, s, byGroup[tc.group.ID])
		perHost := map[string]int{}
		for _, inst := range insts {
			if inst.HostID == "" {
				t.Fatalf("member of %s not placed: %+v", tc.group.Policy, inst.Fault)
			}
			perHost[inst.HostID]++
		}
		for h, n := range perHost {
			if n > tc.max {
				t.Fatalf("%d members of a group allowing %d share host %s: %v", n, tc.max, h, perHost)
			}
		}
	}
}

// TestPlanApplierRechecksGroups submits conflicting placements straight
// to the applier's check, against state and against the batch.
func TestPlanApplierRechecksGroups(t *testing.T) {
	f, err := fsm.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	state := f.State()
	var index uint64
	next := func() uint64 { index++; return index }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range []string{"h1", "h2", "h3"} {
		host := testHost(h, 8, 16384)
		host.Status = structs.HostStatusUp
		must(state.RegisterHost(next(), host))
	}
	groups := map[string]*structs.ServerGroup{
		"anti": {ID: "anti", Name: "a", Policy: structs.PolicyAntiAffinity},
		"two":  {ID: "two", Name: "t", Policy: structs.PolicyAntiAffinity, MaxServerPerHost: 2},
		"aff":  {ID: "aff", Name: "f", Policy: structs.PolicyAffinity},
		"soft": {ID: "soft", Name: "s", Policy: structs.PolicySoftAntiAffinity},
	}
	for _, g := range groups {
		must(state.CreateServerGroup(next(), &structs.ServerGroupCreateEntry{Group: g}))
	}
	flavor := structs.DevFlavors()[0]
	res, _ := structs.FlavorResources(flavor)
	newInst := func(id, group string) {
		must(state.CreateInstances(next(), &structs.InstanceCreateEntry{Instances: []*structs.Instance{{ID: id, Name: id, Flavor: flavor,
			ServerGroupID: group, VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling}}}))
	}
	alloc := func(inst, host string) *structs.Allocation {
		return &structs.Allocation{ID: "a-" + inst, InstanceID: inst, HostID: host, EvalID: "e", Resources: res}
	}
	srv := &Server{}
	check := func(overlay map[string]map[string]int64, placements ...*structs.Allocation) *structs.PlanResult {
		t.Helper()
		entry := &structs.PlanApplyEntry{Faults: map[string]*structs.Fault{}}
		r, err := srv.evaluatePlan(state, &structs.Plan{EvalID: "e", Placements: placements}, overlay, entry)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	refused := func(r *structs.PlanResult) []string { return r.Refused }

	for _, id := range []string{"a1", "a2", "a3", "t1", "t2", "t3", "f1", "f2", "f3", "s1", "s2"} {
		newInst(id, map[byte]string{'a': "anti", 't': "two", 'f': "aff", 's': "soft"}[id[0]])
	}
	// Within one batch: the second anti-affinity member on h1 is refused,
	// the third max-2 member too; affinity follows the first; soft
	// policies never refuse.
	overlay := map[string]map[string]int64{}
	r := check(overlay, alloc("a1", "h1"), alloc("a2", "h1"), alloc("a3", "h2"),
		alloc("t1", "h1"), alloc("t2", "h1"), alloc("t3", "h1"),
		alloc("f1", "h3"), alloc("f2", "h2"), alloc("f3", "h3"),
		alloc("s1", "h1"), alloc("s2", "h1"))
	if got := refused(r); fmt.Sprint(got) != "[a2 t3 f2]" {
		t.Fatalf("refused %v", got)
	}
	// Against the state: what the batch accepted is committed, a later
	// plan (another worker's) sees it.
	must(state.ApplyPlan(next(), &structs.PlanApplyEntry{Placements: r.Placed}))
	r = check(map[string]map[string]int64{}, alloc("a2", "h2"), alloc("t3", "h1"), alloc("f2", "h1"))
	if got := refused(r); fmt.Sprint(got) != "[a2 t3 f2]" {
		t.Fatalf("refused against state %v", got)
	}
	r = check(map[string]map[string]int64{}, alloc("a2", "h3"), alloc("t3", "h2"), alloc("f2", "h3"))
	if got := refused(r); len(got) != 0 || len(r.Placed) != 3 {
		t.Fatalf("refused %v", got)
	}
	// A deleted group constrains nothing any more.
	newInst("a4", "anti")
	if r = check(map[string]map[string]int64{}, alloc("a4", "h1")); len(r.Refused) != 1 {
		t.Fatalf("a4 next to a1: refused %v", r.Refused)
	}
	must(state.DeleteServerGroups(next(), []string{"anti"}))
	if r = check(map[string]map[string]int64{}, alloc("a4", "h1")); len(r.Refused) != 0 {
		t.Fatalf("group gone, still refused %v", r.Refused)
	}
}
