package fsm

import (
	"fmt"
	"maps"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestReportsReadUpFrontAsOneByOne checks that a batch of agents'
// reports read up front (readReports) leaves the same state as the same
// updates applied one entry at a time (read as each is applied): the
// allocations, the instances, their create actions and the hosts'
// usage; and that a batch that must be read one at a time (an instance
// reported twice, a failure) still applies.
func TestReportsReadUpFrontAsOneByOne(t *testing.T) {
	type outcome map[string]string
	res, _ := structs.FlavorResources(structs.DevFlavors()[0])
	run := func(batch bool, states []string) outcome {
		q := newQuotaFixture(t)
		q.must(q.s.RegisterHost(q.next(), bootHost("h2")))
		var insts []*structs.Instance
		for range states {
			insts = append(insts, q.instance("p1", "u1", 0))
		}
		e := &structs.InstanceCreateEntry{Instances: insts, RequestID: "req-1", CreatedAt: 3,
			Eval: &structs.Evaluation{ID: "e1", Status: structs.EvalStatusPending}}
		q.must(q.s.CreateInstances(q.next(), e))
		var placements []*structs.Allocation
		for i, inst := range insts {
			placements = append(placements, &structs.Allocation{ID: fmt.Sprintf("a%d", i), InstanceID: inst.ID,
				HostID: []string{"h1", "h2"}[i%2], Resources: res, DesiredState: structs.AllocDesiredRunning})
		}
		q.must(q.s.ApplyPlan(q.next(), &structs.PlanApplyEntry{Placements: placements, UpdatedAt: 5}))
		reports := map[string]*structs.AllocClientUpdateEntry{}
		var entries []*structs.AllocClientUpdateEntry
		for i, st := range states {
			u := &structs.AllocClientUpdate{AllocID: fmt.Sprintf("a%d", i), ClientState: st, PowerState: structs.PowerRunning}
			if st == structs.AllocClientFailed {
				u.ClientDescription, u.PowerState = "no space left", structs.PowerNoState
			}
			host := placements[i].HostID
			if !batch {
				entries = append(entries, &structs.AllocClientUpdateEntry{HostID: host, Updates: []*structs.AllocClientUpdate{u}, UpdatedAt: 9})
				continue
			}
			if reports[host] == nil {
				reports[host] = &structs.AllocClientUpdateEntry{HostID: host, UpdatedAt: 9}
				entries = append(entries, reports[host])
			}
			reports[host].Updates = append(reports[host].Updates, u)
		}
		if batch {
			for i, err := range q.s.UpdateAllocsFromClientBatch(q.next(), &structs.AllocClientUpdateBatchEntry{Entries: entries}) {
				if err != nil {
					t.Fatalf("report %d: %v", i, err)
				}
			}
		} else {
			for _, e := range entries {
				q.must(q.s.UpdateAllocsFromClient(q.next(), e))
			}
		}
		out := outcome{}
		for i, inst := range insts {
			got, err := q.s.InstanceByID(nil, inst.ID)
			q.must(err)
			out[inst.ID] = fmt.Sprintf("%s/%s/%d on %s", got.VMState, got.TaskState, got.PowerState, got.HostID)
			acts, err := q.s.InstanceActions(nil, inst.ID)
			q.must(err)
			for _, a := range acts {
				for _, ev := range a.Events {
					out[inst.ID+" "+a.Action+" "+ev.Event] = fmt.Sprintf("%s at %d", ev.Result, ev.FinishTime)
				}
			}
			a, err := q.s.AllocationByID(nil, fmt.Sprintf("a%d", i))
			q.must(err)
			if a != nil {
				out[a.ID] = a.ClientState + "/" + a.DesiredState
			}
		}
		for _, id := range []string{"h1", "h2"} {
			h, err := q.s.HostByID(nil, id)
			q.must(err)
			out[id] = fmt.Sprint(h.Usage)
		}
		return out
	}
	running := []string{structs.AllocClientRunning, structs.AllocClientRunning, structs.AllocClientRunning, structs.AllocClientSpawning, structs.AllocClientRunning}
	want := run(false, running)
	if got := run(true, running); !maps.Equal(got, want) {
		t.Errorf("read up front:\n%v\none by one:\n%v", got, want)
	}
	if want["i1"] != "active//1 on h1" || want["i1 create compute__do_build_and_run_instance"] == "" {
		t.Errorf("one by one: %v", want)
	}
	// A failure takes the path that reads as it goes.
	mixed := append(running[:3:3], structs.AllocClientFailed)
	want = run(false, mixed)
	if got := run(true, mixed); !maps.Equal(got, want) {
		t.Errorf("with a failure, batched:\n%v\none by one:\n%v", got, want)
	}
}
