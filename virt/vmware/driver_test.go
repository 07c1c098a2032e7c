package vmware_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/mo"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/virttest"
	"github.com/stratus-cloud/stratus/virt/vmware"
)

// vcsim is an in-process vCenter simulator (govmomi's VPX model: one
// datacenter, a cluster of three ESXi hosts, one datastore) on a random
// port of 127.0.0.1.
type vcsim struct {
	url string
	vc  *vim25.Client
}

func newVCSim(t *testing.T) *vcsim {
	t.Helper()
	model := simulator.VPX()
	if err := model.Create(); err != nil {
		t.Fatalf("vcsim: %v", err)
	}
	srv := model.Service.NewServer()
	t.Cleanup(func() {
		srv.Close()
		model.Remove()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vc, err := vim25.NewClient(ctx, soap.NewClient(srv.URL, true))
	if err != nil {
		t.Fatalf("vcsim client: %v", err)
	}
	if err := session.NewManager(vc).Login(ctx, srv.URL.User); err != nil {
		t.Fatalf("vcsim login: %v", err)
	}
	return &vcsim{url: srv.URL.String(), vc: vc}
}

func newDriver(t *testing.T, sim *vcsim, mutate ...func(*vmware.Config)) *vmware.Driver {
	t.Helper()
	cfg := vmware.Config{URL: sim.url, Insecure: true}
	for _, m := range mutate {
		m(&cfg)
	}
	d, err := vmware.New(cfg)
	if err != nil {
		t.Fatalf("vmware.New: %v", err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func spec(id string) *virt.InstanceSpec {
	return &virt.InstanceSpec{ID: id, Name: "vm-" + id[len(id)-4:], VCPUs: 1, MemoryMB: 128, RootGB: 1, ImageID: "img-1"}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// TestConformance runs the virt conformance suite against vcsim: one
// simulated vCenter, a fresh driver (session) per subtest; the suite
// destroys what each subtest spawned, so each starts on a clean cluster.
func TestConformance(t *testing.T) {
	sim := newVCSim(t)
	virttest.Run(t, virttest.Harness{
		New:     func(t *testing.T) virt.Driver { return newDriver(t, sim) },
		Spec:    func(t *testing.T, id string) *virt.InstanceSpec { return spec(id) },
		Timeout: 2 * time.Minute,
	})
}

// vmOf reads an instance's VM from the simulator directly.
func vmOf(t *testing.T, sim *vcsim, id string) mo.VirtualMachine {
	t.Helper()
	yes := true
	f := find.NewFinder(sim.vc, true)
	dc, err := f.DefaultDatacenter(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := object.NewSearchIndex(sim.vc).FindByUuid(ctx(t), dc, id, true, &yes)
	if err != nil || ref == nil {
		t.Fatalf("VM of %s not found: %v", id, err)
	}
	var vm mo.VirtualMachine
	if err := object.NewVirtualMachine(sim.vc, ref.Reference()).Properties(ctx(t), ref.Reference(), nil, &vm); err != nil {
		t.Fatal(err)
	}
	return vm
}

// TestSpawnIdempotentAcrossDrivers checks a second driver (an agent
// restarted) finds the VM by its instance uuid instead of making another.
func TestSpawnIdempotentAcrossDrivers(t *testing.T) {
	sim := newVCSim(t)
	id := "00000000-0000-4000-8000-0000000000a1"
	d1 := newDriver(t, sim)
	info1, err := d1.Spawn(ctx(t), spec(id))
	if err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	t.Cleanup(func() { _ = d1.Destroy(context.Background(), id) })
	d2 := newDriver(t, sim)
	info2, err := d2.Spawn(ctx(t), spec(id))
	if err != nil {
		t.Fatalf("second driver's Spawn: %v", err)
	}
	if info1.DriverRef != info2.DriverRef || info2.PowerState != virt.PowerRunning {
		t.Errorf("spawns returned %+v and %+v, want the same running VM", info1, info2)
	}
	ids, err := d2.ListInstances(ctx(t))
	if err != nil || !slices.Equal(ids, []string{id}) {
		t.Errorf("ListInstances = %v, %v; want [%s]", ids, err, id)
	}
	vm := vmOf(t, sim, id)
	if vm.Config.InstanceUuid != id || vm.Config.Hardware.NumCPU != 1 || vm.Config.Hardware.MemoryMB != 128 {
		t.Errorf("VM instanceUuid %s cpus %d memory %d", vm.Config.InstanceUuid, vm.Config.Hardware.NumCPU, vm.Config.Hardware.MemoryMB)
	}
}

// TestResizeReconfigures checks Resize changes the VM's vCPUs, memory
// and root disk, and leaves it running.
func TestResizeReconfigures(t *testing.T) {
	sim := newVCSim(t)
	d := newDriver(t, sim)
	id := "00000000-0000-4000-8000-0000000000a2"
	if _, err := d.Spawn(ctx(t), spec(id)); err != nil {
		t.Fatalf("Spawn: %v", err)
	}
	t.Cleanup(func() { _ = d.Destroy(context.Background(), id) })
	bigger := spec(id)
	bigger.VCPUs, bigger.MemoryMB, bigger.RootGB = 4, 2048, 3
	if err := d.Resize(ctx(t), id, bigger); err != nil {
		t.Fatalf("Resize: %v", err)
	}
	vm := vmOf(t, sim, id)
	if vm.Config.Hardware.NumCPU != 4 || vm.Config.Hardware.MemoryMB != 2048 {
		t.Errorf("after resize: cpus %d memory %d, want 4 and 2048", vm.Config.Hardware.NumCPU, vm.Config.Hardware.MemoryMB)
	}
	disks := object.VirtualDeviceList(vm.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil))
	if len(disks) == 0 || disks[0].(*types.VirtualDisk).CapacityInKB != 3<<20 {
		t.Errorf("root disk after resize: %v, want 3 GiB", disks)
	}
	if info, err := d.GetInfo(ctx(t), id); err != nil || info.PowerState != virt.PowerRunning {
		t.Errorf("GetInfo after resize = %+v, %v; want RUNNING", info, err)
	}
}

// TestHostInfoIsTheCluster checks the fingerprint sums the cluster's
// hosts (VPX: three ESXi hosts in DC0_C0).
func TestHostInfoIsTheCluster(t *testing.T) {
	sim := newVCSim(t)
	d := newDriver(t, sim)
	hi, err := d.HostInfo(ctx(t))
	if err != nil {
		t.Fatalf("HostInfo: %v", err)
	}
	var hosts []mo.HostSystem
	f := find.NewFinder(sim.vc, true)
	dc, _ := f.DefaultDatacenter(ctx(t))
	f.SetDatacenter(dc)
	list, err := f.HostSystemList(ctx(t), "DC0_C0/*")
	if err != nil || len(list) != 3 {
		t.Fatalf("cluster hosts = %v, %v", list, err)
	}
	var refs []types.ManagedObjectReference
	for _, h := range list {
		refs = append(refs, h.Reference())
	}
	for _, r := range refs {
		var h mo.HostSystem
		if err := object.NewHostSystem(sim.vc, r).Properties(ctx(t), r, []string{"summary.hardware"}, &h); err != nil {
			t.Fatal(err)
		}
		hosts = append(hosts, h)
	}
	var cpus, mem int64
	for _, h := range hosts {
		cpus += int64(h.Summary.Hardware.NumCpuThreads)
		mem += h.Summary.Hardware.MemorySize >> 20
	}
	if hi.Hostname != "DC0_C0" || hi.VCPUs != cpus || hi.MemoryMB != mem || hi.DiskGB <= 0 {
		t.Errorf("HostInfo = %+v, want DC0_C0 with %d vCPUs and %d MiB", hi, cpus, mem)
	}
	if hi.HypervisorType != "VMware vCenter Server" || hi.HypervisorVersion == "" {
		t.Errorf("hypervisor %q %q", hi.HypervisorType, hi.HypervisorVersion)
	}
}

// TestSpawnFromImageFileAndTemplate boots one instance from a raw image
// file uploaded to the datastore and one cloned from a template VM.
func TestSpawnFromImageFileAndTemplate(t *testing.T) {
	sim := newVCSim(t)
	d := newDriver(t, sim)
	img := filepath.Join(t.TempDir(), "disk.raw")
	data := bytes.Repeat([]byte("stratus!"), 3<<17)
	if err := os.WriteFile(img, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile := spec("00000000-0000-4000-8000-0000000000a3")
	fromFile.ImagePath = img
	fromFile.ConfigDrive = []byte("an ISO 9660 image")
	if _, err := d.Spawn(ctx(t), fromFile); err != nil {
		t.Fatalf("Spawn from image file: %v", err)
	}
	t.Cleanup(func() { _ = d.Destroy(context.Background(), fromFile.ID) })
	vm := vmOf(t, sim, fromFile.ID)
	cdroms := object.VirtualDeviceList(vm.Config.Hardware.Device).SelectByType((*types.VirtualCdrom)(nil))
	if len(cdroms) != 1 {
		t.Errorf("VM with a config drive has %d CD-ROMs, want 1", len(cdroms))
	} else if iso, ok := cdroms[0].(*types.VirtualCdrom).Backing.(*types.VirtualCdromIsoBackingInfo); !ok || filepath.Base(iso.FileName) != "configdrive.iso" {
		t.Errorf("CD-ROM backing %#v, want the config drive", cdroms[0].(*types.VirtualCdrom).Backing)
	}
	disks := object.VirtualDeviceList(vm.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil))
	if len(disks) == 0 {
		t.Fatal("VM from image has no disk")
	}
	back := disks[0].(*types.VirtualDisk).Backing.(*types.VirtualDiskFlatVer2BackingInfo)
	if want := fromFile.ID + "-root.vmdk"; filepath.Base(back.FileName) != want {
		t.Errorf("root disk %s, want the image copy %s", back.FileName, want)
	}
	// The copy's flat extent holds the image's bytes.
	f := find.NewFinder(sim.vc, true)
	dc, _ := f.DefaultDatacenter(ctx(t))
	f.SetDatacenter(dc)
	ds, err := f.DefaultDatastore(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := ds.Download(ctx(t), fromFile.ID+"/"+fromFile.ID+"-root-flat.vmdk", &soap.DefaultDownload)
	if err != nil {
		t.Fatalf("download the root disk's extent: %v", err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("root disk extent: %d bytes (%v), want the image's %d", len(got), err, len(data))
	}

	fromTemplate := spec("00000000-0000-4000-8000-0000000000a4")
	fromTemplate.ImageProperties = map[string]string{vmware.TemplateProperty: "DC0_C0_RP0_VM0"}
	if _, err := d.Spawn(ctx(t), fromTemplate); err != nil {
		t.Fatalf("Spawn from template: %v", err)
	}
	t.Cleanup(func() { _ = d.Destroy(context.Background(), fromTemplate.ID) })
	if vm := vmOf(t, sim, fromTemplate.ID); vm.Config.Hardware.NumCPU != 1 || vm.Config.Hardware.MemoryMB != 128 {
		t.Errorf("clone has %d cpus %d MiB, want the flavor's", vm.Config.Hardware.NumCPU, vm.Config.Hardware.MemoryMB)
	}
	ids, _ := d.ListInstances(ctx(t))
	if !slices.Equal(ids, []string{fromFile.ID, fromTemplate.ID}) {
		t.Errorf("ListInstances = %v", ids)
	}
	c1, err1 := d.RemoteConsole(ctx(t), fromFile.ID, "vnc")
	c2, err2 := d.RemoteConsole(ctx(t), fromTemplate.ID, "vnc")
	if err1 != nil || err2 != nil || c1.Port == c2.Port {
		t.Errorf("consoles %+v %v and %+v %v, want two VNC ports", c1, err1, c2, err2)
	}
}

// TestSpawnRefusesSparseVMDK checks an image the driver cannot upload
// as raw is refused with a clear error and leaves nothing behind.
func TestSpawnRefusesSparseVMDK(t *testing.T) {
	sim := newVCSim(t)
	d := newDriver(t, sim)
	img := filepath.Join(t.TempDir(), "disk.vmdk")
	if err := os.WriteFile(img, append([]byte("KDMV"), make([]byte, 508)...), 0o644); err != nil {
		t.Fatal(err)
	}
	sp := spec("00000000-0000-4000-8000-0000000000a5")
	sp.ImagePath = img
	_, err := d.Spawn(ctx(t), sp)
	if err == nil || !strings.Contains(err.Error(), "is a vmdk image") {
		t.Fatalf("Spawn of a sparse VMDK = %v, want a clear refusal", err)
	}
	if ids, err := d.ListInstances(ctx(t)); err != nil || len(ids) != 0 {
		t.Errorf("ListInstances = %v, %v; want none", ids, err)
	}
}

// TestSpawnConvertsQcow2 boots from a qcow2 image (Glance's usual
// format), converted to raw with qemu-img before the upload, with a root
// disk extended to the flavor's root_gb.
func TestSpawnConvertsQcow2(t *testing.T) {
	qemuImg, err := exec.LookPath("qemu-img")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("qemu-img is missing (scripts/libvirt-setup.sh installs qemu-utils): %v", err)
		}
		t.Skipf("qemu-img is missing: %v", err)
	}
	sim := newVCSim(t)
	d := newDriver(t, sim)
	img := filepath.Join(t.TempDir(), "disk.qcow2")
	if out, err := exec.Command(qemuImg, "create", "-q", "-f", "qcow2", img, "5M").CombinedOutput(); err != nil {
		t.Fatalf("qemu-img create: %v: %s", err, out)
	}
	sp := spec("00000000-0000-4000-8000-0000000000a6")
	sp.ImagePath, sp.ImageID, sp.RootGB = img, "img-qcow2", 2
	if _, err := d.Spawn(ctx(t), sp); err != nil {
		t.Fatalf("Spawn from qcow2: %v", err)
	}
	t.Cleanup(func() { _ = d.Destroy(context.Background(), sp.ID) })
	vm := vmOf(t, sim, sp.ID)
	disks := object.VirtualDeviceList(vm.Config.Hardware.Device).SelectByType((*types.VirtualDisk)(nil))
	if len(disks) == 0 || disks[0].(*types.VirtualDisk).CapacityInKB != 2<<20 {
		t.Errorf("root disk %v, want 2 GiB", disks)
	}
	// The cached image is the raw 5 MiB conversion.
	f := find.NewFinder(sim.vc, true)
	dc, _ := f.DefaultDatacenter(ctx(t))
	f.SetDatacenter(dc)
	ds, err := f.DefaultDatastore(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := ds.Stat(ctx(t), "stratus-images/img-qcow2/img-qcow2-flat.vmdk")
	if err != nil || fi.GetFileInfo().FileSize != 5<<20 {
		t.Errorf("cached flat extent: %+v, %v; want 5 MiB of raw data", fi, err)
	}
}
