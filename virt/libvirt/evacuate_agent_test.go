package libvirt_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentEvacuateFromSharedStorageKeepsTheDisk evacuates a stopped
// instance, through the servers and the agents, from a host whose agent
// is gone to one sharing its storage (two real libvirtds): with no
// on_shared_storage given (microversion 2.14 and later) the destination
// finds the disk there and rebuilds on a copy of it under names of its
// own, so what the guest wrote survives and the down host's files stay
// as they were; when that host's agent comes back it destroys its copy
// of the evacuated instance, and the destination's disks stay.
func TestAgentEvacuateFromSharedStorageKeepsTheDisk(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	hvA, hvB := c.addPeerHosts()
	id := c.boot("ev").ID
	src := c.hostOf(c.get(id))
	dst := hvB
	if src == hvB {
		dst = hvA
	}
	name := src.drv.DomainName(id)
	c.task(id, structs.OpStop)
	c.waitStatus(id, "SHUTOFF")
	srcDisks := disksOf(t, src.env.raw, name)
	writePattern(t, srcDisks[0])
	srcSums := fileSums(t, srcDisks)

	if err := src.agent.Shutdown(); err != nil {
		t.Fatal(err)
	}
	c.waitFor(src.name+" down", 60*time.Second, func() error {
		if h := c.host(src.name); h == nil || h.Up() {
			return fmt.Errorf("host %s: %+v", src.name, h)
		}
		return nil
	})
	c.task(id, structs.OpEvacuate, func(r *structs.InstanceTaskRequest) { r.TargetHost = dst.name })
	c.waitFor(id+" evacuated to "+dst.name, statusWait, func() error {
		inst := c.waitStatus(id, "SHUTOFF")
		if h := c.host(dst.name); h == nil || inst.HostID != h.ID || inst.Task != nil {
			return fmt.Errorf("instance on %q (task %+v), want %s", inst.HostID, inst.Task, dst.name)
		}
		return nil
	})
	dstDisks := disksOf(t, dst.env.raw, name)
	for _, p := range dstDisks {
		if slices.Contains(srcDisks, p) {
			t.Fatalf("the evacuated instance runs from the down host's file %s", p)
		}
	}
	if !hasPattern(t, dstDisks[0]) {
		t.Fatal("the evacuated instance's root disk lost what the guest wrote")
	}
	if got := fileSums(t, srcDisks); !maps.Equal(got, srcSums) {
		t.Fatal("the evacuation changed the down host's files")
	}

	// The down host comes back: it destroys its copy, by its own names.
	src.drv = src.env.open()
	c.startAgent(src)
	waitUntil(t, statusWait, "the down host's copy destroyed", func() error {
		for _, p := range srcDisks {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				return errors.New("still there: " + p)
			}
		}
		return nil
	})
	for _, p := range dstDisks {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the evacuated instance's disk after its old host came back: %v", err)
		}
	}
	if !hasPattern(t, dstDisks[0]) {
		t.Fatal("the evacuated instance's root disk lost the data when its old host came back")
	}
}
