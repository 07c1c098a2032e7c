package server

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAllocReportsShareOneRaftEntry queues several hosts' reports while
// the leader's batcher is busy and checks that they commit in one entry
// (one index for all), that a refused one does not stop the others, and
// that every placed instance is ACTIVE.
func TestAllocReportsShareOneRaftEntry(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	seedFlavors(t, s)
	const hosts = 4
	for i := range hosts {
		registerHost(t, s, testHost(fmt.Sprintf("h%d", i), 1, 4096))
	}
	created := ids(createInstances(t, s, "web", "m1.tiny", hosts))
	placed := waitSettled(t, s, created)
	allocs := map[string]string{} // host → its allocation
	for _, inst := range placed {
		list, err := s.fsm.State().AllocationsByInstance(nil, inst.ID)
		if err != nil || len(list) != 1 || inst.HostID == "" {
			t.Fatalf("instance %s: host %q, allocations %v, %v", inst.ID, inst.HostID, list, err)
		}
		allocs[inst.HostID] = list[0].ID
	}
	if len(allocs) != hosts {
		t.Fatalf("%d instances on %d hosts, want one on each", hosts, len(allocs))
	}

	// Hold the batcher as if both its flushers were committing, so that
	// every report queues; then let one flusher take them all.
	b := &s.allocUpdates
	holdBatcher(b)
	type outcome struct {
		host  string
		index uint64
		err   error
	}
	out := make(chan outcome, hosts+1)
	var wg sync.WaitGroup
	submit := func(host, alloc string) {
		defer wg.Done()
		e := &structs.AllocClientUpdateEntry{HostID: host, UpdatedAt: time.Now().UnixNano(), Faults: map[string]*structs.Fault{},
			Updates: []*structs.AllocClientUpdate{{AllocID: alloc, ClientState: structs.AllocClientRunning, PowerState: structs.PowerRunning}}}
		index, err := b.submit(s, e)
		out <- outcome{host, index, err}
	}
	for host, alloc := range allocs {
		wg.Add(1)
		go submit(host, alloc)
	}
	wg.Add(1)
	go submit("intruder", allocs["h1"]) // another host's allocation: refused
	flushWhenQueued(t, s, b, hosts+1, "reports")
	wg.Wait()
	close(out)
	var index uint64
	for o := range out {
		if o.host == "intruder" {
			if structs.KindOf(o.err) != structs.KindPermission {
				t.Fatalf("the foreign report: %v", o.err)
			}
			continue
		}
		if o.err != nil {
			t.Fatalf("report of %s: %v", o.host, o.err)
		}
		if index != 0 && o.index != index {
			t.Fatalf("reports committed at %d and %d, want one entry", index, o.index)
		}
		index = o.index
	}
	for _, id := range created {
		inst, err := s.fsm.State().InstanceByID(nil, id)
		if err != nil || inst == nil || inst.Status() != "ACTIVE" || inst.ModifyIndex != index {
			t.Fatalf("instance %s after the batch: %+v, %v (want ACTIVE at %d)", id, inst, err, index)
		}
	}
}
