package fake_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestRescue checks the rescued flag, the rescue image (the instance's
// own when none is given) and that a rescue and an unrescue each boot.
func TestRescue(t *testing.T) {
	ctx := context.Background()
	d := fake.New(fake.Config{})
	spec := smallSpec("a")
	spec.ImageID = "cirros"
	if _, err := d.Spawn(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if rescued, img, err := d.Rescued("a"); err != nil || rescued || img != "" {
		t.Fatalf("fresh instance: rescued %v from %q, %v", rescued, img, err)
	}
	if err := d.Rescue(ctx, "a", virt.RescueSpec{}); err != nil {
		t.Fatal(err)
	}
	if rescued, img, _ := d.Rescued("a"); !rescued || img != "cirros" {
		t.Fatalf("after Rescue(\"\"): rescued %v from %q, want the instance's own image", rescued, img)
	}
	if p := power(t, d, "a"); p != virt.PowerRunning {
		t.Fatalf("rescued instance's power %d, want RUNNING", p)
	}
	out, _ := d.ConsoleOutput(ctx, "a", 0)
	if !strings.Contains(out, "(boot 2)") || !strings.Contains(out, "Booting rescue image cirros") {
		t.Errorf("console of a rescued instance:\n%s", out)
	}
	// A second rescue is a harmless retry: same image, no boot.
	if err := d.Rescue(ctx, "a", virt.RescueSpec{Image: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, img, _ := d.Rescued("a"); img != "cirros" {
		t.Errorf("a retried rescue changed the image to %q", img)
	}
	if err := d.Unrescue(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if rescued, _, _ := d.Rescued("a"); rescued || power(t, d, "a") != virt.PowerRunning {
		t.Fatalf("after Unrescue: rescued %v, power %d", rescued, power(t, d, "a"))
	}
	if out, _ := d.ConsoleOutput(ctx, "a", 0); !strings.Contains(out, "(boot 3)") || strings.Contains(out, "rescue image") {
		t.Errorf("console after unrescue:\n%s", out)
	}

	// A rescued guest that crashed comes back RUNNING on unrescue.
	if err := d.Rescue(ctx, "a", virt.RescueSpec{Image: "rescue-img"}); err != nil {
		t.Fatal(err)
	}
	if _, img, _ := d.Rescued("a"); img != "rescue-img" {
		t.Errorf("rescue image %q, want rescue-img", img)
	}
	if err := d.SetPowerState("a", virt.PowerCrashed); err != nil {
		t.Fatal(err)
	}
	if err := d.Unrescue(ctx, "a"); err != nil || power(t, d, "a") != virt.PowerRunning {
		t.Fatalf("Unrescue of a crashed rescued guest: %v, power %d", err, power(t, d, "a"))
	}

	if err := d.Rescue(ctx, "missing", virt.RescueSpec{}); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("Rescue(missing) = %v, want ErrNotFound", err)
	}
	if _, _, err := d.Rescued("missing"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("Rescued(missing) = %v, want ErrNotFound", err)
	}
	if n := d.Calls("Rescue"); n != 4 {
		t.Errorf("Calls(Rescue) = %d, want 4", n)
	}
}

// TestLiveMigrate checks what may leave (RUNNING and PAUSED instances)
// and that every failure leaves the instance as it was.
func TestLiveMigrate(t *testing.T) {
	ctx := context.Background()
	d := spawned(t, fake.Config{}, "run", "paused", "stopped", "kept")
	if err := d.Pause(ctx, "paused"); err != nil {
		t.Fatal(err)
	}
	if err := d.PowerOff(ctx, "stopped", 0); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"run", "paused"} {
		if err := d.LiveMigrate(ctx, id, "hv-2:8776"); err != nil {
			t.Fatalf("LiveMigrate(%s): %v", id, err)
		}
		if _, err := d.GetInfo(ctx, id); !errors.Is(err, virt.ErrNotFound) {
			t.Errorf("%s still here after migrating: %v", id, err)
		}
		if got := d.MigratedTo(id); got != "hv-2:8776" {
			t.Errorf("MigratedTo(%s) = %q", id, got)
		}
	}

	if err := d.LiveMigrate(ctx, "stopped", "hv-2"); !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("LiveMigrate of a stopped instance = %v, want virt.ErrInvalidState", err)
	}
	if err := d.LiveMigrate(ctx, "kept", ""); err == nil {
		t.Error("LiveMigrate to an empty destination succeeded")
	}
	d.FailNext("LiveMigrate", errors.New("connection refused"))
	if err := d.LiveMigrate(ctx, "kept", "hv-2"); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("injected failure: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := d.LiveMigrate(cancelled, "kept", "hv-2"); !errors.Is(err, context.Canceled) {
		t.Errorf("LiveMigrate with a cancelled context = %v", err)
	}
	if ids := list(t, d); len(ids) != 2 || ids[0] != "kept" || ids[1] != "stopped" {
		t.Fatalf("instances after failed migrations: %v, want [kept stopped]", ids)
	}
	if power(t, d, "kept") != virt.PowerRunning || d.MigratedTo("kept") != "" {
		t.Error("a failed migration changed the instance")
	}
	if err := d.LiveMigrate(ctx, "missing", "hv-2"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("LiveMigrate(missing) = %v, want ErrNotFound", err)
	}
}

// TestMigrateLatency: LiveMigrate waits MigrateLatency and, cancelled
// meanwhile, leaves the instance in place. The latency is an hour: a
// wait that ignored its context would never return, whatever the
// machine's load, and the test says so instead of timing the call.
func TestMigrateLatency(t *testing.T) {
	d := spawned(t, fake.Config{MigrateLatency: time.Hour}, "a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.LiveMigrate(ctx, "a", "hv-2") }()
	// The call is counted, and its context checked, under the driver's
	// lock before it waits: once counted, cancelling interrupts the wait.
	for d.Calls("LiveMigrate") == 0 {
		runtime.Gosched()
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("LiveMigrate = %v, want the cancellation", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a cancelled LiveMigrate is still waiting out its hour of latency")
	}
	if power(t, d, "a") != virt.PowerRunning {
		t.Error("the interrupted migration changed the instance")
	}
}
