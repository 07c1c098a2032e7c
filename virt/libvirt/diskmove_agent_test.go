package libvirt_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentMovesKeepTheDisk drives cold migrations and a resize between
// two real libvirtds (the machine's and a peer's) through the servers and
// the agents, with what the guest wrote (a qemu-io pattern written while
// it is stopped) followed at every step: the destination's root disk has
// it, the source's keeps it untouched; a revert boots the source's own
// disk and deletes the destination's; a resize grows the carried disk;
// a confirm deletes the source's disk only then. The two hosts share
// their pool, so no disk's bytes travel through the source's disk
// export: the destination copies the source's files inside the pool.
func TestAgentMovesKeepTheDisk(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	hvA, hvB := c.addPeerHosts()
	id := c.boot("mv").ID
	src := c.hostOf(c.get(id))
	dst := hvA
	if src == hvA {
		dst = hvB
	}
	name := src.drv.DomainName(id)
	c.task(id, structs.OpStop)
	c.waitStatus(id, "SHUTOFF")
	srcRoot := disksOf(t, src.env.raw, name)[0]
	writePattern(t, srcRoot)

	onDest := func(what string) string {
		t.Helper()
		c.waitFor(id+" "+what+" on "+dst.name, statusWait, func() error {
			inst := c.waitStatus(id, "VERIFY_RESIZE")
			if h := c.host(dst.name); h == nil || inst.HostID != h.ID {
				return fmt.Errorf("instance on %q, want %s", inst.HostID, dst.name)
			}
			return nil
		})
		root := disksOf(t, dst.env.raw, name)[0]
		if root == srcRoot {
			t.Fatalf("%s: the destination uses the source's disk %s", what, root)
		}
		if !hasPattern(t, root) {
			t.Fatalf("%s: the destination's root disk lost what the guest wrote", what)
		}
		if !hasPattern(t, srcRoot) {
			t.Fatalf("%s: the source's root disk changed before the confirm", what)
		}
		if n := src.export.sent.Load(); n != 0 {
			t.Fatalf("%s: %d bytes of disk data went through the source's export, though the hosts share the pool", what, n)
		}
		return root
	}

	// A cold migration, reverted: back on the source's own disk.
	c.task(id, structs.OpMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = dst.name })
	dstRoot := onDest("cold migration")
	c.task(id, structs.OpRevertResize)
	c.waitFor(id+" back on "+src.name, statusWait, func() error {
		inst := c.waitStatus(id, "SHUTOFF")
		if h := c.host(src.name); h == nil || inst.HostID != h.ID {
			return fmt.Errorf("instance on %q, want %s", inst.HostID, src.name)
		}
		if _, err := os.Stat(dstRoot); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("the destination's disk outlived the revert: %v", err)
		}
		return nil
	})
	if got := disksOf(t, src.env.raw, name)[0]; got != srcRoot || !hasPattern(t, srcRoot) {
		t.Fatalf("after the revert the root disk is %s (data kept: %v), want %s with the data", got, hasPattern(t, got), srcRoot)
	}

	// A resize to a larger disk on the other host, confirmed.
	c.task(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = flavorSmall.ID })
	dstRoot = onDest("resize")
	if got := qemuImgInfo(t, dstRoot).VirtualSize; got != int64(flavorSmall.RootGB)<<30 {
		t.Errorf("the resized root disk has %d bytes, want %d GiB", got, flavorSmall.RootGB)
	}
	c.task(id, structs.OpConfirmResize)
	c.waitFor(id+" confirmed", statusWait, func() error {
		c.waitStatus(id, "SHUTOFF")
		if _, err := os.Stat(srcRoot); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("the source's disk outlived the confirm: %v", err)
		}
		return nil
	})
	if !hasPattern(t, dstRoot) {
		t.Fatal("the confirmed instance's disk lost the guest's data")
	}
	if ents, err := os.ReadDir(dst.dataDir + "/disks"); err == nil {
		for _, e := range ents {
			t.Errorf("fetched disks left in the agent's staging directory: %s", e.Name())
		}
	}
}

// TestAgentMoveSurvivesAgentsDyingMidCopy kills the destination's agent
// and then the source's while a cold migration's disk copy is under way
// (the source's export paced so that it lasts seconds) between two hosts
// that share no storage: the copy resumes where it stopped (a range
// request), the half-copied file never becomes the disk, and the
// instance arrives with every byte the guest wrote.
func TestAgentMoveSurvivesAgentsDyingMidCopy(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	src := c.addHost("hv-src", 10*time.Second)
	id := c.boot("crash").ID
	dst := c.addHost("hv-dst", 10*time.Second)
	c.task(id, structs.OpStop)
	c.waitStatus(id, "SHUTOFF")
	srcRoot := disksOf(t, src.env.raw, src.drv.DomainName(id))[0]
	const size = "40M"
	if out, ok := qemutest.Try(t, srcRoot, qemutest.Opts{}, "write -P 0xab 0 "+size); !ok {
		t.Fatalf("qemu-io write: %s", out)
	}
	src.export.slow.Store(true)
	c.task(id, structs.OpMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = dst.name })

	partAt := func(min int64) {
		t.Helper()
		c.waitFor(fmt.Sprintf("a partial copy of %d bytes", min), statusWait, func() error {
			parts, _ := filepath.Glob(filepath.Join(dst.dataDir, "disks", "*", "root.part"))
			for _, p := range parts {
				if st, err := os.Stat(p); err == nil && st.Size() >= min {
					return nil
				}
			}
			return fmt.Errorf("partial copies %v", parts)
		})
	}
	partAt(4 << 20)
	c.restartAgent(dst) // the destination dies mid-copy
	partAt(12 << 20)
	c.restartAgent(src) // then the source
	c.waitFor(id+" on "+dst.name, statusWait, func() error {
		inst := c.waitStatus(id, "VERIFY_RESIZE")
		if h := c.host(dst.name); h == nil || inst.HostID != h.ID {
			return fmt.Errorf("instance on %q", inst.HostID)
		}
		return nil
	})
	if n := src.export.ranges.Load(); n == 0 {
		t.Error("no fetch resumed at an offset: the copies started over")
	}
	if n := src.export.sent.Load(); n < 40<<20 {
		t.Errorf("only %d bytes went through the source's export, want the disk's 40 MiB and more", n)
	}
	dstRoot := disksOf(t, dst.env.raw, dst.drv.DomainName(id))[0]
	for _, at := range []string{"0", "39M"} {
		if out, ok := qemutest.Try(t, dstRoot, qemutest.Opts{Share: true}, "read -P 0xab "+at+" 1M"); !ok {
			t.Fatalf("the carried disk differs at %s: %s", at, out)
		}
	}
	c.task(id, structs.OpConfirmResize)
	c.waitFor("the source's disk deleted", statusWait, func() error {
		c.waitStatus(id, "SHUTOFF")
		if _, err := os.Stat(srcRoot); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("source disk: %v", err)
		}
		return nil
	})
}
