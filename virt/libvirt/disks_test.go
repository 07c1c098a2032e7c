package libvirt_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/internal/qemutest"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// writePattern writes 1 MiB of 0xab at the start of a stopped guest's
// disk: what the guest wrote, for the tests to find again.
func writePattern(t *testing.T, path string) {
	t.Helper()
	if out, ok := qemutest.Try(t, path, qemutest.Opts{}, "write -P 0xab 0 1M"); !ok || !strings.Contains(out, "wrote 1048576/1048576 bytes") {
		t.Fatalf("qemu-io write on %s: %s", path, out)
	}
}

// hasPattern reports whether the disk still starts with writePattern's
// megabyte.
func hasPattern(t *testing.T, path string) bool {
	t.Helper()
	out, ok := qemutest.Try(t, path, qemutest.Opts{Share: true}, "read -P 0xab 0 1M")
	if !ok && !strings.Contains(out, "Pattern verification failed") {
		t.Fatalf("qemu-io read on %s: %s", path, out)
	}
	return ok && strings.Contains(out, "read 1048576/1048576 bytes") && !strings.Contains(out, "Pattern verification failed")
}

// disksOf are the files of a domain's disks (vda, vdb, …), as libvirt
// has them.
func disksOf(t *testing.T, lv *golibvirt.Libvirt, name string) []string {
	t.Helper()
	var out []string
	for _, d := range domainXML(t, lv, name, golibvirt.DomainXMLInactive).Devices.Disks {
		if d.Source != nil && d.Source.File != nil {
			out = append(out, d.Source.File.File)
		}
	}
	return out
}

// TestMoveOntoSharedStorageKeepsTheSource builds the same instance on two
// hosts sharing their images directory — the machine's libvirtd (A) and a
// peer (B), both with shared_storage — as a resize or cold migration onto
// shared storage does: the destination's spawn creates disks of its own
// next to the source's and never touches them; a revert (destroy on B)
// leaves the source's disks and the guest's data, and a confirm (destroy
// on A) leaves the destination's.
func TestMoveOntoSharedStorageKeepsTheSource(t *testing.T) {
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

	spec := tinySpec("mv")
	spec.EphemeralGB, spec.SwapMB = 1, 16
	spec.ImageID, spec.ImagePath = "img", qcow2Image(t, "1G")
	spec.ConfigDrive = []byte("not really an ISO image, but bytes all the same")
	name := e.drv.DomainName("mv")
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.PowerOff(ctx(t), "mv", time.Minute); err != nil {
		t.Fatal(err)
	}
	aDisks := disksOf(t, e.raw, name)
	if len(aDisks) != 4 {
		t.Fatalf("A's disks %v, want root, ephemeral, swap and config drive", aDisks)
	}
	writePattern(t, aDisks[0])

	// The move's destination: a second attempt, on B.
	spawnB := func() []string {
		t.Helper()
		if _, err := b.Spawn(ctx(t), spec); err != nil {
			t.Fatalf("Spawn on B: %v", err)
		}
		bDisks := disksOf(t, braw, name)
		if len(bDisks) != 4 {
			t.Fatalf("B's disks %v", bDisks)
		}
		for _, p := range bDisks {
			if slices.Contains(aDisks, p) {
				t.Errorf("B's spawn uses A's disk %s", p)
			}
		}
		if hasPattern(t, bDisks[0]) {
			t.Error("B's fresh root disk has A's data: it is A's file")
		}
		return bDisks
	}
	bDisks := spawnB()
	if !hasPattern(t, aDisks[0]) {
		t.Fatal("A's root disk lost the guest's data to B's spawn")
	}

	// Revert: B's copy goes, A's disks stay, with the data.
	if err := b.Destroy(ctx(t), "mv"); err != nil {
		t.Fatal(err)
	}
	for _, p := range bDisks {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("B's disk %s outlived B's destroy: %v", p, err)
		}
	}
	for _, p := range aDisks {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("A's disk after B's destroy: %v", err)
		}
	}
	if !hasPattern(t, aDisks[0]) {
		t.Error("A's root disk lost the guest's data to B's destroy")
	}
	// A destroy on B of an instance B no longer has deletes nothing.
	if err := b.Destroy(ctx(t), "mv"); err != nil {
		t.Fatal(err)
	}
	for _, p := range aDisks {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("A's disk after a second destroy on B: %v", err)
		}
	}

	// Confirm: the move again, then A's copy goes and B's stays.
	bDisks = spawnB()
	if err := e.drv.Destroy(ctx(t), "mv"); err != nil {
		t.Fatal(err)
	}
	for _, p := range aDisks {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("A's disk %s outlived A's destroy: %v", p, err)
		}
	}
	for _, p := range bDisks {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("B's disk after A's destroy: %v", err)
		}
	}
	if info, err := b.GetInfo(ctx(t), "mv"); err != nil || info.PowerState != virt.PowerRunning {
		t.Errorf("B's instance after A's destroy: %+v, %v", info, err)
	}
	if err := b.Destroy(ctx(t), "mv"); err != nil {
		t.Fatal(err)
	}
	for _, v := range volumeNames(t, e.raw, e.drv.PoolName()) {
		if strings.HasPrefix(v, name) {
			t.Errorf("volume %s left after both destroys", v)
		}
	}
}

// TestCreateVolumeNeverReplaces: a file already bearing the name a
// volume is to get — which on shared storage could be another host's
// disk — makes the operation fail and stays as it was.
func TestCreateVolumeNeverReplaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	spec := tinySpec("cv")
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("cv")
	root := disksOf(t, e.raw, name)[0]
	// The rescue disk's name is the root disk's with another role.
	squatter := strings.TrimSuffix(root, "-disk") + "-disk.rescue"
	if err := os.WriteFile(squatter, []byte("someone else's"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The pool has not listed it (no refresh): the driver must look at
	// the directory too. Rescue deletes a leftover of its own name
	// through libvirt only, so the unlisted file stops it.
	err := e.drv.Rescue(ctx(t), "cv", virt.RescueSpec{})
	if err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("Rescue over an unlisted file = %v, want a refusal", err)
	}
	if b, err := os.ReadFile(squatter); err != nil || string(b) != "someone else's" {
		t.Errorf("the file was touched: %q, %v", b, err)
	}
	if err := os.Remove(squatter); err != nil {
		t.Fatal(err)
	}
	if err := e.drv.Rescue(ctx(t), "cv", virt.RescueSpec{}); err != nil {
		t.Errorf("Rescue once the file is gone: %v", err)
	}
	if err := e.drv.Destroy(ctx(t), "cv"); err != nil {
		t.Fatal(err)
	}
}

// TestVolumesOfOldDomains: domains built before volume names carried an
// attempt (<domain>-<role>, no attempt in the metadata) are managed by a
// restarted, newer agent by the names they recorded: a rescue and a
// resize add volumes with attempts, and destroy deletes them all. A
// volume a spawn cut short left behind (no domain records it) is swept
// by a destroy when the pool is the host's own.
func TestVolumesOfOldDomains(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.drv.SpawnLegacyNames(true)
	spec := tinySpec("old")
	spec.EphemeralGB, spec.SwapMB = 1, 16
	spec.ConfigDrive = []byte("config")
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("old")
	vols := volumeNames(t, e.raw, e.drv.PoolName())
	for _, role := range []string{"disk", "disk.eph0", "disk.swap", "disk.config"} {
		if !slices.Contains(vols, name+"-"+role) {
			t.Fatalf("legacy spawn made %v, want %s", vols, name+"-"+role)
		}
	}

	drv := e.open() // the upgraded agent
	if err := drv.Rescue(ctx(t), "old", virt.RescueSpec{}); err != nil {
		t.Fatal(err)
	}
	rescue := instanceVolume(t, e.raw, e.drv.PoolName(), name+"-disk.rescue")
	if rescue == "" || rescue == name+"-disk.rescue" {
		t.Errorf("rescue volume %q, want one with an attempt", rescue)
	}
	if err := drv.Unrescue(ctx(t), "old"); err != nil {
		t.Fatal(err)
	}
	if err := drv.Resize(ctx(t), "old", &virt.InstanceSpec{VCPUs: 1, MemoryMB: 64, RootGB: 1, EphemeralGB: 1, SwapMB: 32}); err != nil {
		t.Fatal(err)
	}
	if err := drv.Destroy(ctx(t), "old"); err != nil {
		t.Fatal(err)
	}
	for _, v := range volumeNames(t, e.raw, e.drv.PoolName()) {
		if strings.HasPrefix(v, name) {
			t.Errorf("volume %s survived the destroy of an old domain", v)
		}
	}

	// Leftovers of a spawn cut short, old and new names; and another
	// instance's volume whose name starts the same.
	p, err := e.raw.StoragePoolLookupByName(e.drv.PoolName())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(vol string) {
		t.Helper()
		doc := `<volume><name>` + vol + `</name><capacity>1048576</capacity><target><format type="qcow2"/></target></volume>`
		if _, err := e.raw.StorageVolCreateXML(p, doc, 0); err != nil {
			t.Fatal(err)
		}
	}
	other := e.drv.DomainName("old-0123abcd") + "-disk"
	for _, v := range []string{name + "-disk", name + "+0123abcd-disk.eph0", other} {
		mk(v)
	}
	if err := drv.Destroy(ctx(t), "old"); err != nil {
		t.Fatal(err)
	}
	if got := volumeNames(t, e.raw, e.drv.PoolName()); !slices.Contains(got, other) || len(got) != 1 {
		t.Errorf("volumes after sweeping instance old: %v, want only %s", got, other)
	}
}
