package fsm

import (
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// fired reports whether any channel of ws is closed, without waiting.
func fired(ws memdb.WatchSet) bool {
	for ch := range ws {
		select {
		case <-ch:
			return true
		default:
		}
	}
	return false
}

// TestEmptyHostPortWatchIgnoresOtherHosts: every host's agent watches
// the ports bound to it (a blocking Net.List); an empty host's watch
// must not fire for placements on other hosts. It was the nearest
// ancestor of the absent key in the instances' host index, so every
// instance change on a neighbouring host woke it (issue #31).
func TestEmptyHostPortWatchIgnoresOtherHosts(t *testing.T) {
	b := newBoot(t) // i1 on h1
	b.mustApply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: bootHost("h2")})
	ws := memdb.NewWatchSet()
	if ports, err := b.f.State().PortsByHost(ws, "h2"); err != nil || len(ports) != 0 {
		t.Fatalf("ports of empty h2: %v, %v", ports, err)
	}
	b.createAndPlace("3", "h1")
	if b.report(structs.AllocClientRunning, structs.PowerRunning, 0, "") != nil {
		t.Fatal("report of a1 refused")
	}
	if fired(ws) {
		t.Fatal("the watch of empty h2's ports fired for placements and reports on h1")
	}
	b.createAndPlace("4", "h2")
	if !fired(ws) {
		t.Fatal("the watch of h2's ports did not fire when an instance was placed on h2")
	}
	// With an instance, the watch is that host's entries in the index.
	ws = memdb.NewWatchSet()
	if _, err := b.f.State().PortsByHost(ws, "h2"); err != nil {
		t.Fatal(err)
	}
	b.createAndPlace("5", "h1")
	if fired(ws) {
		t.Fatal("the watch of h2's ports fired for a placement on h1")
	}
}
