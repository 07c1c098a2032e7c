package libvirt_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// TestResizeGrowsTheRootDiskInPlace: what the guest wrote survives a
// resize, which grows the root disk's qcow2 overlay (same file, larger
// virtual size) rather than building a new one; a smaller disk is
// refused with virt.ErrDiskShrink and changes nothing; resizing to the
// flavor the instance has does not even reboot it.
func TestResizeGrowsTheRootDiskInPlace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	spec := tinySpec("rz")
	spec.ImageID, spec.ImagePath = "img", qcow2Image(t, "1G")
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("rz")
	if err := e.drv.PowerOff(ctx(t), "rz", time.Minute); err != nil {
		t.Fatal(err)
	}
	root := disksOf(t, e.raw, name)[0]
	if got := qemuImgInfo(t, root).VirtualSize; got != 1<<30 {
		t.Fatalf("root disk of %d bytes before the resize", got)
	}
	writePattern(t, root)
	if err := e.drv.PowerOn(ctx(t), "rz"); err != nil {
		t.Fatal(err)
	}

	// A running instance: shut down, grown, booted again.
	if err := e.drv.Resize(ctx(t), "rz", &virt.InstanceSpec{VCPUs: 1, MemoryMB: 96, RootGB: 3}); err != nil {
		t.Fatal(err)
	}
	if got := disksOf(t, e.raw, name)[0]; got != root {
		t.Fatalf("root disk %s after the resize, want the same file %s", got, root)
	}
	info := qemuImgInfo(t, root)
	if info.VirtualSize != 3<<30 || info.BackingFilename != spec.ImagePath {
		t.Errorf("root disk after the resize: %+v, want 3 GiB on %s", info, spec.ImagePath)
	}
	if !hasPattern(t, root) {
		t.Error("the guest's data did not survive the resize")
	}
	if st := domainState(t, e.raw, name); st != golibvirt.DomainRunning {
		t.Errorf("domain state %d after resizing a running instance", st)
	}
	if x := domainXML(t, e.raw, name, 0); x.Memory.Value != 96*1024 {
		t.Errorf("memory %d KiB after the resize", x.Memory.Value)
	}

	// Smaller: refused, nothing changes.
	err := e.drv.Resize(ctx(t), "rz", &virt.InstanceSpec{VCPUs: 1, MemoryMB: 64, RootGB: 1})
	if !errors.Is(err, virt.ErrDiskShrink) {
		t.Errorf("Resize to a smaller root disk = %v, want ErrDiskShrink", err)
	}
	if got := qemuImgInfo(t, root).VirtualSize; got != 3<<30 {
		t.Errorf("a refused resize left a disk of %d bytes", got)
	}
	// The same flavor again: nothing happens, not even a reboot.
	qemu := domainID(t, e.raw, name)
	if err := e.drv.Resize(ctx(t), "rz", &virt.InstanceSpec{VCPUs: 1, MemoryMB: 96, RootGB: 3}); err != nil {
		t.Fatal(err)
	}
	if got := domainID(t, e.raw, name); got != qemu {
		t.Errorf("resizing to the current flavor restarted QEMU (%d → %d)", qemu, got)
	}
	if err := e.drv.Destroy(ctx(t), "rz"); err != nil {
		t.Fatal(err)
	}
}

// TestAgentResizeOnTheSameHost drives resizes through the servers and a
// real agent on one libvirt host with allow_resize_to_same_host: the
// instance stays on its host and domain, its root disk grows in place
// with the guest's data (written with qemu-io while it is stopped), a
// revert gives it its memory back with the disk and data kept, and a
// confirm keeps the new flavor. A resize to a smaller disk is refused
// with Nova's words before anything starts.
func TestAgentResizeOnTheSameHost(t *testing.T) {
	t.Parallel()
	c := newCloudWith(t, func(cfg *server.Config) { cfg.AllowResizeToSameHost = true })
	flavorMedium := &structs.Flavor{ID: "t3", Name: "t.medium", VCPUs: 1, MemoryMB: 128, RootGB: 3, RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{}}
	flavorLarge := &structs.Flavor{ID: "t4", Name: "t.large", VCPUs: 1, MemoryMB: 160, RootGB: 4, RxTxFactor: 1, IsPublic: true, ExtraSpecs: map[string]string{}}
	if err := c.rpc("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{flavorMedium, flavorLarge}}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	hv := c.addHost("hv1", 10*time.Second)
	id := c.boot("vm").ID
	name := hv.drv.DomainName(id)
	c.task(id, structs.OpStop)
	c.waitStatus(id, "SHUTOFF")
	root := disksOf(t, hv.env.raw, name)[0]
	writePattern(t, root)
	domUUID := domainXML(t, hv.env.raw, name, golibvirt.DomainXMLInactive).UUID

	resize := func(f *structs.Flavor, want int64) {
		t.Helper()
		c.task(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = f.ID })
		inst := c.waitStatus(id, "VERIFY_RESIZE")
		if c.hostOf(inst) != hv || inst.Flavor.Name != f.Name {
			t.Fatalf("resized to %s with %s", c.hostOf(inst).name, inst.Flavor.Name)
		}
		x := domainXML(t, hv.env.raw, name, golibvirt.DomainXMLInactive)
		if got := disksOf(t, hv.env.raw, name)[0]; got != root || x.UUID != domUUID {
			t.Fatalf("resized onto disk %s of domain %s, want %s of %s", got, x.UUID, root, domUUID)
		}
		if x.Memory.Value != uint(f.MemoryMB)*1024 {
			t.Errorf("resized domain has %d KiB, want %d MiB", x.Memory.Value, f.MemoryMB)
		}
		if got := qemuImgInfo(t, root).VirtualSize; got != want {
			t.Errorf("root disk of %d bytes after the resize, want %d", got, want)
		}
		if !hasPattern(t, root) {
			t.Fatal("the guest's data did not survive the resize")
		}
	}

	// Resize and revert: the old memory, the grown disk, the data.
	resize(flavorSmall, 2<<30)
	c.task(id, structs.OpRevertResize)
	inst := c.waitStatus(id, "SHUTOFF")
	if inst.Flavor.Name != flavorTiny.Name {
		t.Errorf("flavor %s after the revert", inst.Flavor.Name)
	}
	waitUntil(t, 30*time.Second, "the old memory back", func() error {
		if x := domainXML(t, hv.env.raw, name, golibvirt.DomainXMLInactive); x.Memory.Value != 64*1024 {
			return fmt.Errorf("%d KiB", x.Memory.Value)
		}
		return nil
	})
	if !hasPattern(t, root) {
		t.Fatal("the guest's data did not survive the revert")
	}

	// Resize and confirm.
	resize(flavorMedium, 3<<30)
	c.task(id, structs.OpConfirmResize)
	c.waitStatus(id, "SHUTOFF")
	if got := domainNames(t, hv.env.raw, hv.env.ns); len(got) != 1 {
		t.Errorf("domains after the confirm: %v", got)
	}
	if x := domainXML(t, hv.env.raw, name, golibvirt.DomainXMLInactive); x.Memory.Value != 128*1024 || !hasPattern(t, root) {
		t.Errorf("after the confirm: %d KiB, data kept %v", x.Memory.Value, hasPattern(t, root))
	}
	c.task(id, structs.OpStart)
	c.waitStatus(id, "ACTIVE")
	expectDomain(t, hv, id, golibvirt.DomainRunning)

	// A running instance: it runs resized while the resize awaits its
	// confirm (the source's allocation, stopped, leaves it alone), and
	// after.
	c.task(id, structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = flavorLarge.ID })
	c.waitStatus(id, "VERIFY_RESIZE")
	expectDomain(t, hv, id, golibvirt.DomainRunning)
	time.Sleep(3 * time.Second) // events and a power sync or two
	if inst := c.get(id); inst.Status() != "VERIFY_RESIZE" || domainState(t, hv.env.raw, name) != golibvirt.DomainRunning {
		t.Fatalf("during the verify: status %s, domain state %d", inst.Status(), domainState(t, hv.env.raw, name))
	}
	if x := domainXML(t, hv.env.raw, name, 0); x.Memory.Value != 160*1024 || qemuImgInfo(t, root).VirtualSize != 4<<30 || !hasPattern(t, root) {
		t.Errorf("running resize: %d KiB, %d bytes, data kept %v", x.Memory.Value, qemuImgInfo(t, root).VirtualSize, hasPattern(t, root))
	}
	c.task(id, structs.OpConfirmResize)
	c.waitStatus(id, "ACTIVE")
	expectDomain(t, hv, id, golibvirt.DomainRunning)

	// Smaller: refused before anything starts.
	err := c.rpc("Instance.Task", &structs.InstanceTaskRequest{InstanceID: id, Op: structs.OpResize, FlavorID: flavorSmall.ID,
		ProjectID: "p1", UserID: "u1", Admin: true}, &structs.InstanceTaskResponse{})
	if structs.KindOf(err) != structs.KindInvalid || structs.Message(err) != "Server disk was unable to be resized because: Unable to resize disk down." {
		t.Errorf("resize to a smaller disk = %v", err)
	}
	if inst := c.get(id); inst.Task != nil || inst.TaskState != "" || inst.Flavor.Name != flavorLarge.Name {
		t.Errorf("a refused resize left task %+v, task_state %q, flavor %s", inst.Task, inst.TaskState, inst.Flavor.Name)
	}
	// The confirmed flavor stays, once the confirm's clean-up is done.
	time.Sleep(2 * time.Second)
	if x := domainXML(t, hv.env.raw, name, golibvirt.DomainXMLInactive); x.Memory.Value != 160*1024 {
		t.Errorf("after the last confirm the domain has %d KiB, want 160 MiB", x.Memory.Value)
	}
}
