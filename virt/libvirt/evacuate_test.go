package libvirt_test

import (
	"crypto/sha256"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestEvacuateFromSharedStorageKeepsTheDisk evacuates an instance from
// the machine's libvirtd (A, taken for down) to a peer (B) sharing the
// images directory: B finds A's root and ephemeral disks there, builds
// the instance on copies under names of its own, and the guest's data
// is on B's root disk while A's files stay as they were; when A comes
// back and destroys its copy, B's disks and instance stay. Without
// shared storage B finds nothing.
func TestEvacuateFromSharedStorageKeepsTheDisk(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *libvirt.Config) { c.SharedStorage = true })
	peer := libvirtpeer.Start(t)
	bcfg := e.cfg
	bcfg.URI, bcfg.HostName = peer.URI, "peer-"+e.ns
	b, err := libvirt.New(bcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	braw := rawConnTo(t, peer.URI)

	spec := tinySpec("ev")
	spec.EphemeralGB, spec.SwapMB = 1, 16
	spec.ImageID, spec.ImagePath = "img", qcow2Image(t, "1G")
	name := e.drv.DomainName("ev")
	if found, err := b.SharedDisks(ctx(t), "ev", "img"); err != nil || len(found) != 0 {
		t.Fatalf("SharedDisks before any spawn: %v, %v; want none", found, err)
	}
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.PowerOff(ctx(t), "ev", time.Minute); err != nil {
		t.Fatal(err)
	}
	aDisks := disksOf(t, e.raw, name)
	if len(aDisks) != 3 {
		t.Fatalf("A's disks %v, want root, ephemeral and swap", aDisks)
	}
	writePattern(t, aDisks[0])
	writePattern(t, aDisks[1])
	aSum := fileSums(t, aDisks)

	// A's own domain's disks are its own, not another host's.
	if own, err := e.drv.SharedDisks(ctx(t), "ev", "img"); err != nil || len(own) != 0 {
		t.Fatalf("SharedDisks on A, which holds the instance: %v, %v; want none", own, err)
	}
	found, err := b.SharedDisks(ctx(t), "ev", "img")
	if err != nil {
		t.Fatal(err)
	}
	roles := map[string]virt.ImportedDisk{}
	for _, d := range found {
		roles[d.Role] = d
	}
	root, eph := roles[virt.DiskRoleRoot], roles[virt.DiskRoleEphemeral]
	if len(found) != 2 || root.Path != aDisks[0] || eph.Path != aDisks[1] || !root.Shared || root.BackingImageID != "img" || eph.BackingImageID != "" {
		t.Fatalf("SharedDisks on B: %+v; want A's root (an overlay on img) and ephemeral", found)
	}

	bspec := *spec
	bspec.Disks = found
	if _, err := b.Spawn(ctx(t), &bspec); err != nil {
		t.Fatalf("Spawn on B: %v", err)
	}
	if err := b.PowerOff(ctx(t), "ev", time.Minute); err != nil {
		t.Fatal(err)
	}
	bDisks := disksOf(t, braw, name)
	if len(bDisks) != 3 {
		t.Fatalf("B's disks %v", bDisks)
	}
	for _, p := range bDisks {
		if slices.Contains(aDisks, p) {
			t.Errorf("B's instance runs from A's file %s", p)
		}
	}
	if !hasPattern(t, bDisks[0]) || !hasPattern(t, bDisks[1]) {
		t.Error("B's root or ephemeral disk lacks the guest's data")
	}
	if got := fileSums(t, aDisks); !maps.Equal(got, aSum) {
		t.Error("A's files changed under B's evacuation")
	}
	// B's own disks are not taken for shared ones again.
	if again, err := b.SharedDisks(ctx(t), "ev", "img"); err != nil || len(again) != 2 || !slices.Contains(aDisks, again[0].Path) || !slices.Contains(aDisks, again[1].Path) {
		t.Errorf("SharedDisks on B, which holds the instance: %+v, %v; want A's two only", again, err)
	}

	// A comes back and destroys its copy: B's stays whole.
	if err := e.drv.Destroy(ctx(t), "ev"); err != nil {
		t.Fatal(err)
	}
	for _, p := range bDisks {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("B's disk after A's destroy: %v", err)
		}
	}
	for _, p := range aDisks {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("A's disk %s outlived A's destroy: %v", p, err)
		}
	}
	if !hasPattern(t, bDisks[0]) {
		t.Error("B's root disk lost the guest's data to A's destroy")
	}
	if err := b.Destroy(ctx(t), "ev"); err != nil {
		t.Fatal(err)
	}
	for _, v := range volumeNames(t, e.raw, e.drv.PoolName()) {
		if strings.HasPrefix(v, name) {
			t.Errorf("volume %s left after both destroys", v)
		}
	}

	// Without shared storage nothing is another host's.
	local := newEnv(t, nil)
	if _, err := local.drv.Spawn(ctx(t), tinySpec("ev")); err != nil {
		t.Fatal(err)
	}
	lcfg := local.cfg
	lcfg.URI, lcfg.HostName = peer.URI, "peer-"+local.ns
	lb, err := libvirt.New(lcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lb.Close() })
	if found, err := lb.SharedDisks(ctx(t), "ev", ""); err != nil || len(found) != 0 {
		t.Errorf("SharedDisks without shared storage: %+v, %v; want none", found, err)
	}
}

// fileSums are the SHA-256 sums of files' contents, by path.
func fileSums(t *testing.T, paths []string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = sha256.Sum256(b)
	}
	return out
}
