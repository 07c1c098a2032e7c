package libvirt_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/client/diskxfer"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// fetchFrom serves drv's disks of instance id as a source agent does and
// fetches them as a destination agent does, into a staging directory.
func fetchFrom(t *testing.T, drv *libvirt.Driver, id string) []virt.ImportedDisk {
	t.Helper()
	srv := httptest.NewServer(diskxfer.NewServer(func(ctx context.Context, allocID, token string) ([]virt.ExportedDisk, error) {
		return drv.ExportDisks(ctx, id)
	}, nil))
	t.Cleanup(srv.Close)
	src := &structs.DiskSource{AllocID: "alloc-" + id, URL: srv.URL + diskxfer.MountPath, Token: "t"}
	disks, err := (&diskxfer.Fetcher{}).Fetch(ctx(t), src, filepath.Join(t.TempDir(), "stage"))
	if err != nil {
		t.Fatalf("fetch the disks: %v", err)
	}
	return disks
}

// TestDisksMoveToAnotherHost moves an instance built on an image between
// two hosts that share nothing (two namespaces with pools of their own on
// the machine's libvirtd), as a cold migration with a resize does: only
// the root disk's overlay travels and is pointed at the destination's
// own copy of the image; root and ephemeral disks arrive with what the
// guest wrote and grow to the new flavor; the source's disks stay as
// they were until the source is destroyed.
func TestDisksMoveToAnotherHost(t *testing.T) {
	t.Parallel()
	a := newEnv(t, nil)
	b := newEnv(t, nil)
	img := qcow2Image(t, "1G")
	spec := tinySpec("dm")
	spec.ImageID, spec.ImagePath, spec.EphemeralGB, spec.SwapMB = "img-dm", img, 1, 16
	if _, err := a.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	if _, err := a.drv.ExportDisks(ctx(t), "dm"); !errors.Is(err, virt.ErrInvalidState) {
		t.Fatalf("ExportDisks of a running instance = %v, want ErrInvalidState", err)
	}
	if err := a.drv.PowerOff(ctx(t), "dm", time.Second); err != nil {
		t.Fatal(err)
	}
	aDisks := disksOf(t, a.raw, a.drv.DomainName("dm"))
	if len(aDisks) != 3 {
		t.Fatalf("A's disks %v, want root, ephemeral and swap", aDisks)
	}
	writePattern(t, aDisks[0])
	writePattern(t, aDisks[1])

	fetched := fetchFrom(t, a.drv, "dm")
	if len(fetched) != 2 || fetched[0].Role != virt.DiskRoleRoot || fetched[0].BackingImageID != "img-dm" || fetched[1].Role != virt.DiskRoleEphemeral {
		t.Fatalf("fetched %+v, want the root (an overlay on img-dm) and the ephemeral disk", fetched)
	}
	// The destination's image cache has its own copy of the image.
	bImg := filepath.Join(t.TempDir(), "cached-image.qcow2")
	if out, err := exec.Command("cp", img, bImg).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	bspec := tinySpec("dm")
	bspec.ImageID, bspec.ImagePath, bspec.RootGB, bspec.EphemeralGB, bspec.SwapMB = "img-dm", bImg, 2, 2, 32
	bspec.Disks = fetched
	if _, err := b.drv.Spawn(ctx(t), bspec); err != nil {
		t.Fatalf("Spawn on B with the fetched disks: %v", err)
	}
	if err := b.drv.PowerOff(ctx(t), "dm", time.Second); err != nil {
		t.Fatal(err)
	}
	bDisks := disksOf(t, b.raw, b.drv.DomainName("dm"))
	if len(bDisks) != 3 {
		t.Fatalf("B's disks %v", bDisks)
	}
	for i, want := range []int64{2 << 30, 2 << 30, 32 << 20} {
		if info := qemuImgInfo(t, bDisks[i]); info.VirtualSize != want {
			t.Errorf("B's disk %s: %d bytes, want %d", bDisks[i], info.VirtualSize, want)
		}
	}
	if got := qemuImgInfo(t, bDisks[0]).BackingFilename; got != bImg {
		t.Errorf("B's root disk is an overlay on %q, want B's own image %s", got, bImg)
	}
	for i, what := range []string{"root", "ephemeral"} {
		if !hasPattern(t, bDisks[i]) {
			t.Errorf("B's %s disk lost what the guest wrote on A", what)
		}
		if !hasPattern(t, aDisks[i]) {
			t.Errorf("A's %s disk changed", what)
		}
	}
	if err := b.drv.Destroy(ctx(t), "dm"); err != nil {
		t.Fatal(err)
	}
	for _, p := range aDisks {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("A's disk after B's destroy (a revert): %v", err)
		}
	}
	if err := a.drv.Destroy(ctx(t), "dm"); err != nil {
		t.Fatal(err)
	}
}

// TestImportRefusesAForeignOverlay: a fetched root disk that is an
// overlay on another image than the instance's is refused, and the
// failed spawn leaves nothing in the pool.
func TestImportRefusesAForeignOverlay(t *testing.T) {
	t.Parallel()
	a := newEnv(t, nil)
	b := newEnv(t, nil)
	img := qcow2Image(t, "1G")
	spec := tinySpec("fo")
	spec.ImageID, spec.ImagePath = "img-1", img
	if _, err := a.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	if err := a.drv.PowerOff(ctx(t), "fo", time.Second); err != nil {
		t.Fatal(err)
	}
	bspec := tinySpec("fo")
	bspec.ImageID, bspec.ImagePath = "img-2", img
	bspec.Disks = fetchFrom(t, a.drv, "fo")
	_, err := b.drv.Spawn(ctx(t), bspec)
	if err == nil || !strings.Contains(err.Error(), "overlay on image img-1") {
		t.Fatalf("Spawn on a foreign overlay = %v", err)
	}
	if vols := volumeNames(t, b.raw, b.drv.PoolName()); len(vols) != 0 {
		t.Errorf("the refused spawn left volumes %v", vols)
	}
}
