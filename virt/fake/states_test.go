package fake_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestTransitions walks the power-state rules from every starting state.
func TestTransitions(t *testing.T) {
	const ok, bad = true, false
	type op struct {
		name string
		do   func(*fake.Driver) error
	}
	ctx := context.Background()
	var (
		on     = op{"PowerOn", func(d *fake.Driver) error { return d.PowerOn(ctx, "a") }}
		off    = op{"PowerOff", func(d *fake.Driver) error { return d.PowerOff(ctx, "a", 0) }}
		soft   = op{"Reboot(soft)", func(d *fake.Driver) error { return d.Reboot(ctx, "a", false) }}
		hard   = op{"Reboot(hard)", func(d *fake.Driver) error { return d.Reboot(ctx, "a", true) }}
		pause  = op{"Pause", func(d *fake.Driver) error { return d.Pause(ctx, "a") }}
		unp    = op{"Unpause", func(d *fake.Driver) error { return d.Unpause(ctx, "a") }}
		susp   = op{"Suspend", func(d *fake.Driver) error { return d.Suspend(ctx, "a") }}
		resume = op{"Resume", func(d *fake.Driver) error { return d.Resume(ctx, "a") }}
		rescue = op{"Rescue", func(d *fake.Driver) error { return d.Rescue(ctx, "a", virt.RescueSpec{}) }}
		unres  = op{"Unrescue", func(d *fake.Driver) error { return d.Unrescue(ctx, "a") }}
	)
	R, P, S, X, C := virt.PowerRunning, virt.PowerPaused, virt.PowerShutdown, virt.PowerSuspend, virt.PowerCrashed
	cases := []struct {
		from int
		op   op
		ok   bool
		to   int
	}{
		{R, on, ok, R}, {S, on, ok, R}, {C, on, ok, R}, {P, on, ok, R}, {X, on, ok, R},
		{R, off, ok, S}, {S, off, ok, S}, {P, off, ok, S}, {X, off, ok, S}, {C, off, ok, S},
		{R, soft, ok, R}, {S, soft, bad, S}, {C, soft, bad, C}, {P, soft, bad, P}, {X, soft, bad, X},
		{R, hard, ok, R}, {S, hard, ok, R}, {C, hard, ok, R}, {P, hard, ok, R}, {X, hard, ok, R},
		{R, pause, ok, P}, {P, pause, ok, P}, {S, pause, bad, S}, {X, pause, bad, X},
		{P, unp, ok, R}, {R, unp, ok, R}, {S, unp, bad, S}, {X, unp, bad, X},
		{R, susp, ok, X}, {X, susp, ok, X}, {S, susp, bad, S}, {P, susp, bad, P},
		{X, resume, ok, R}, {R, resume, ok, R}, {S, resume, bad, S}, {P, resume, bad, P},
		{R, rescue, ok, R}, {S, rescue, ok, R}, {C, rescue, ok, R}, {P, rescue, bad, P}, {X, rescue, bad, X},
		// Unrescuing an instance that is not rescued changes nothing.
		{R, unres, ok, R}, {S, unres, ok, S}, {P, unres, ok, P},
	}
	for _, c := range cases {
		d := spawned(t, fake.Config{}, "a")
		if err := d.SetPowerState("a", c.from); err != nil {
			t.Fatal(err)
		}
		err := c.op.do(d)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s from %d: %v, want success", c.op.name, c.from, err)
		case !c.ok && !errors.Is(err, virt.ErrInvalidState):
			t.Errorf("%s from %d: %v, want virt.ErrInvalidState", c.op.name, c.from, err)
		}
		if got := power(t, d, "a"); got != c.to {
			t.Errorf("%s from %d: state %d, want %d", c.op.name, c.from, got, c.to)
		}
	}
}

func TestSpawnReturnsExistingAndListIsSorted(t *testing.T) {
	ctx := context.Background()
	d := spawned(t, fake.Config{}, "c", "a", "b")
	if err := d.PowerOff(ctx, "b", 0); err != nil {
		t.Fatal(err)
	}
	first, _ := d.GetInfo(ctx, "b")
	again, err := d.Spawn(ctx, smallSpec("b"))
	if err != nil || *again != *first {
		t.Fatalf("re-Spawn = %+v, %v; want the existing %+v", again, err, first)
	}
	if ids := list(t, d); !slices.Equal(ids, []string{"a", "b", "c"}) {
		t.Fatalf("ListInstances = %v, want [a b c]", ids)
	}
	if _, err := d.Spawn(ctx, nil); err == nil {
		t.Error("Spawn(nil) succeeded")
	}
}

func TestCapabilitiesMatchInterfaces(t *testing.T) {
	var d virt.Driver = fake.New(fake.Config{})
	want := virt.Capabilities{Pause: true, Suspend: true, Rescue: true, Resize: true, Migrate: true, LiveMigrate: true,
		Snapshot: true, ConsoleOutput: true, RemoteConsole: true, AttachInterface: true, AttachVolume: true, SetPassword: true, CrashDump: true}
	if got := d.Capabilities(); got != want {
		t.Errorf("Capabilities = %+v, want %+v", got, want)
	}
	if _, ok := d.(virt.DiskMover); !ok {
		t.Error("claims Migrate but does not implement DiskMover")
	}
	if _, ok := d.(virt.VolumeAttacher); !ok {
		t.Error("claims AttachVolume but does not implement VolumeAttacher")
	}
	if _, ok := d.(virt.InterfaceAttacher); !ok {
		t.Error("claims AttachInterface but does not implement InterfaceAttacher")
	}
}

func TestHostInfo(t *testing.T) {
	ctx := context.Background()
	hi, err := fake.New(fake.Config{}).HostInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hi.Hostname != "fake-host" || hi.VCPUs != 16 || hi.MemoryMB != 32768 || hi.DiskGB != 500 ||
		hi.Arch != "x86_64" || hi.HypervisorType != "fake" || hi.HypervisorVersion != "1.0" {
		t.Errorf("defaults: %+v", hi)
	}
	custom := map[string]int64{"CUSTOM_FPGA": 2}
	cfg := fake.Config{
		HostName: "h1", VCPUs: 4, MemoryMB: 8192, DiskGB: 40, Arch: "aarch64",
		HypervisorType: "qemu", HypervisorVersion: "8.2", CustomResources: custom,
		Traits: []string{"HW_CPU_X86_AVX2"}, Attributes: map[string]string{"rack": "r1"},
	}
	d := fake.New(cfg)
	custom["CUSTOM_FPGA"] = 99 // New copied it
	hi, _ = d.HostInfo(ctx)
	if hi.Hostname != "h1" || hi.VCPUs != 4 || hi.MemoryMB != 8192 || hi.DiskGB != 40 || hi.Arch != "aarch64" ||
		hi.HypervisorType != "qemu" || hi.HypervisorVersion != "8.2" || hi.CustomResources["CUSTOM_FPGA"] != 2 ||
		!slices.Equal(hi.Traits, cfg.Traits) || !maps.Equal(hi.Attributes, cfg.Attributes) {
		t.Errorf("configured: %+v", hi)
	}
	hi.CustomResources["CUSTOM_FPGA"] = 7
	hi.Traits[0] = "changed"
	if again, _ := d.HostInfo(ctx); again.CustomResources["CUSTOM_FPGA"] != 2 || again.Traits[0] != "HW_CPU_X86_AVX2" {
		t.Errorf("HostInfo shares its maps with the caller: %+v", again)
	}
}

func TestConsoles(t *testing.T) {
	ctx := context.Background()
	d := spawned(t, fake.Config{}, "a", "b")
	out, err := d.ConsoleOutput(ctx, "a", 0)
	if err != nil || !strings.Contains(out, "instance a") || !strings.Contains(out, "vm-a login:") {
		t.Fatalf("ConsoleOutput = %q, %v; want boot lines naming the instance", out, err)
	}
	if again, _ := d.ConsoleOutput(ctx, "a", 0); again != out {
		t.Error("ConsoleOutput is not deterministic")
	}
	if tail, _ := d.ConsoleOutput(ctx, "a", 2); tail != "[    3.000000] systemd[1]: Reached target Multi-User System.\nvm-a login:\n" {
		t.Errorf("ConsoleOutput(tail 2) = %q", tail)
	}
	if err := d.Reboot(ctx, "a", false); err != nil {
		t.Fatal(err)
	}
	if out, _ := d.ConsoleOutput(ctx, "a", 0); !strings.Contains(out, "(boot 2)") {
		t.Errorf("after a reboot the log shows no second boot:\n%s", out)
	}
	for range 100 {
		_ = d.Reboot(ctx, "a", true)
	}
	if out, _ := d.ConsoleOutput(ctx, "a", 0); strings.Count(out, "login:") != 10 || !strings.Contains(out, "(boot 102)") {
		t.Errorf("the log should keep the last 10 boots, up to boot 102:\n%s", out)
	}

	ca, err := d.RemoteConsole(ctx, "a", "vnc")
	cb, _ := d.RemoteConsole(ctx, "b", "vnc")
	if err != nil || *ca != (virt.Console{Kind: "vnc", Host: "127.0.0.1", Port: 5900}) || cb.Port != 5901 {
		t.Errorf("RemoteConsole = %+v, %+v, %v; want vnc on 127.0.0.1:5900 and :5901", ca, cb, err)
	}
	if _, err := d.RemoteConsole(ctx, "a", "spice"); !errors.Is(err, virt.ErrNotSupported) {
		t.Errorf("RemoteConsole(spice) = %v, want ErrNotSupported", err)
	}
	_ = d.PowerOff(ctx, "a", 0)
	if _, err := d.RemoteConsole(ctx, "a", "vnc"); !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("RemoteConsole of a stopped instance = %v, want virt.ErrInvalidState", err)
	}
}

func TestSnapshotAndResize(t *testing.T) {
	ctx := context.Background()
	d := spawned(t, fake.Config{HostName: "h1"}, "a")
	path, err := d.Snapshot(ctx, "a", "img")
	if err != nil || path != "/var/lib/stratus/fake/h1/snapshots/a/img.qcow2" {
		t.Errorf("Snapshot = %q, %v", path, err)
	}
	if _, err := d.Snapshot(ctx, "a", "../x"); err == nil {
		t.Error("Snapshot accepted an image name with a slash")
	}

	big := &virt.InstanceSpec{VCPUs: 4, MemoryMB: 4096, RootGB: 20, ExtraSpecs: map[string]string{"hw:cpu_policy": "dedicated"}}
	if err := d.Resize(ctx, "a", big); err != nil {
		t.Fatal(err)
	}
	big.ExtraSpecs["hw:cpu_policy"] = "shared" // the fake keeps its own copy
	got, err := d.Spec("a")
	if err != nil || got.ID != "a" || got.Name != "vm-a" || got.VCPUs != 4 || got.MemoryMB != 4096 ||
		got.RootGB != 20 || got.ExtraSpecs["hw:cpu_policy"] != "dedicated" {
		t.Errorf("Spec after Resize = %+v, %v", got, err)
	}
	if err := d.Resize(ctx, "a", &virt.InstanceSpec{VCPUs: 0, MemoryMB: 1}); err == nil {
		t.Error("Resize to zero VCPUs succeeded")
	}
	if err := d.Resize(ctx, "a", smallSpec("b")); err == nil {
		t.Error("Resize with another instance's ID succeeded")
	}
	// Disks only grow, as on libvirt.
	small := &virt.InstanceSpec{VCPUs: 1, MemoryMB: 512, RootGB: 10}
	if err := d.Resize(ctx, "a", small); !errors.Is(err, virt.ErrDiskShrink) {
		t.Errorf("Resize to a smaller root disk = %v, want ErrDiskShrink", err)
	}
	if got, _ := d.Spec("a"); got.RootGB != 20 || got.VCPUs != 4 {
		t.Errorf("a refused Resize changed the instance: %+v", got)
	}
	if _, err := d.Spec("missing"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("Spec(missing) = %v, want ErrNotFound", err)
	}
}

// TestConcurrentUse hammers one driver from many goroutines; run with
// -race it proves the locking.
func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	d := fake.New(fake.Config{})
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			id := fmt.Sprintf("i-%d", g%4) // goroutines share ids on purpose
			for range 200 {
				_, _ = d.Spawn(ctx, smallSpec(id))
				_ = d.PowerOff(ctx, id, 0)
				_ = d.PowerOn(ctx, id)
				_ = d.Pause(ctx, id)
				_, _ = d.ConsoleOutput(ctx, id, 3)
				_, _ = d.ListInstances(ctx)
				d.FailNext("GetInfo", nil)
				_, _ = d.GetInfo(ctx, id)
				_ = d.SetPowerState(id, virt.PowerRunning)
				_ = d.Destroy(ctx, id)
			}
		})
	}
	wg.Wait()
	if n := d.Calls("Spawn"); n != 16*200 {
		t.Errorf("Calls(Spawn) = %d, want %d", n, 16*200)
	}
}
