package libvirt_test

import (
	"errors"
	"os"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentResizeOntoSharedStorageKeepsTheSource resizes a stopped
// instance between two real libvirtds sharing their storage, through the
// servers and the agents: while it awaits the confirm, the source's
// disks (with what the guest wrote) are untouched beside the
// destination's own; a revert goes back to them with the data; a
// confirm deletes them and keeps the destination's.
func TestAgentResizeOntoSharedStorageKeepsTheSource(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	hvA, hvB := c.addPeerHosts()
	id := c.boot("vm").ID
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

	resize := func(f *structs.Flavor) []string {
		t.Helper()
		c.task(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = f.ID })
		inst := c.waitStatus(id, "VERIFY_RESIZE")
		if c.hostOf(inst) != dst {
			t.Fatalf("resized onto %s, want %s", c.hostOf(inst).name, dst.name)
		}
		dstDisks := disksOf(t, dst.env.raw, name)
		for _, p := range dstDisks {
			for _, q := range srcDisks {
				if p == q {
					t.Fatalf("the destination uses the source's disk %s", p)
				}
			}
		}
		for _, p := range srcDisks {
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("the source's disk before the confirm: %v", err)
			}
		}
		if !hasPattern(t, srcDisks[0]) {
			t.Fatal("the destination's spawn overwrote the source's root disk")
		}
		return dstDisks
	}

	dstDisks := resize(flavorSmall)
	c.task(id, structs.OpRevertResize)
	c.waitStatus(id, "SHUTOFF")
	if got := c.hostOf(c.get(id)); got != src {
		t.Fatalf("reverted to %s", got.name)
	}
	waitUntil(t, statusWait, "the destination's copy removed", func() error {
		for _, p := range dstDisks {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				return errors.New("still there: " + p)
			}
		}
		return nil
	})
	if got := disksOf(t, src.env.raw, name); got[0] != srcDisks[0] || !hasPattern(t, srcDisks[0]) {
		t.Fatalf("after the revert the source runs %v, data kept %v", got, hasPattern(t, srcDisks[0]))
	}

	dstDisks = resize(flavorSmall)
	c.task(id, structs.OpConfirmResize)
	c.waitStatus(id, "SHUTOFF")
	waitUntil(t, statusWait, "the source's copy removed", func() error {
		if st := domainState(t, src.env.raw, name); st != -1 {
			return errors.New("the source's domain is still defined")
		}
		for _, p := range srcDisks {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				return errors.New("still there: " + p)
			}
		}
		return nil
	})
	for _, p := range dstDisks {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("the destination's disk after the confirm: %v", err)
		}
	}
	c.task(id, structs.OpStart)
	c.waitStatus(id, "ACTIVE")
	expectDomain(t, dst, id, golibvirt.DomainRunning)
}
