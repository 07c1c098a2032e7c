// Package virttest is the conformance suite every virt.Driver must pass.
// A driver's own test calls Run with a Harness that makes fresh drivers
// and valid specs; the suite then checks, through the public virt API
// only, what the control plane relies on: host fingerprinting, spawn and
// its idempotency, power transitions, destroy, ErrNotFound for unknown
// instances, ErrInvalidState for an operation the power state refuses,
// rejection of invalid specs, independence of instances, that the
// optional interfaces work exactly when Capabilities says so, and the
// contracts of the optional operations the agent relies on (pause,
// suspend, rescue, live migration, consoles, snapshots).
//
// It owns no driver and must not reach into one: behaviour specific to a
// backend (failure injection, timings, real guests) belongs in that
// backend's own tests.
package virttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/virt"
)

// Harness gives the suite a fresh driver and what it may assume.
type Harness struct {
	// New returns a fresh driver on a clean host; called once per
	// subtest. Register cleanup with t.Cleanup.
	New func(t *testing.T) virt.Driver
	// Spec returns a valid spec for a small instance with the given id
	// (drivers may need an image path etc.).
	Spec func(t *testing.T, id string) *virt.InstanceSpec
	// Timeout bounds each operation (libvirt under TCG is slow);
	// default 2 minutes.
	Timeout time.Duration
	// MigrationDestination is the address the LiveMigrate subtest sends
	// an instance to: a host the driver can really live-migrate to. Empty
	// skips that subtest (the capability checks still run).
	MigrationDestination string
}

// DefaultTimeout is the Timeout used when Harness.Timeout is zero.
const DefaultTimeout = 2 * time.Minute

// suite carries the harness through the subtests.
type suite struct{ h Harness }

// Run runs the conformance suite, one subtest per property, each on a
// fresh driver from h.New. Instances the suite spawns are destroyed in
// cleanup even when a subtest fails.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil || h.Spec == nil {
		t.Fatal("virttest: Harness.New and Harness.Spec are required")
	}
	if h.Timeout <= 0 {
		h.Timeout = DefaultTimeout
	}
	s := &suite{h: h}
	tests := []struct {
		name string
		fn   func(*testing.T, virt.Driver)
	}{
		{"HostInfo", s.testHostInfo},
		{"Spawn", s.testSpawn},
		{"SpawnIdempotent", s.testSpawnIdempotent},
		{"PowerOffOn", s.testPowerOffOn},
		{"Reboot", s.testReboot},
		{"Destroy", s.testDestroy},
		{"UnknownID", s.testUnknownID},
		{"Independent", s.testIndependent},
		{"InvalidSpec", s.testInvalidSpec},
		{"Capabilities", s.testCapabilities},
		{"PauseUnpause", s.testPause},
		{"SuspendResume", s.testSuspend},
		{"WrongPowerState", s.testWrongPowerState},
		{"RescueUnrescue", s.testRescue},
		{"LiveMigrate", s.testLiveMigrate},
		{"ConsoleOutput", s.testConsoleOutput},
		{"RemoteConsole", s.testRemoteConsole},
		{"Snapshot", s.testSnapshot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := h.New(t)
			if d == nil {
				t.Fatal("virttest: Harness.New returned nil")
			}
			tc.fn(t, d)
		})
	}
}

// instanceID returns the n-th test instance id: UUID-shaped, because
// backends may use it as a domain UUID, and recognisable (00000000-7e57…)
// should one ever be left behind.
func instanceID(n int) string {
	return fmt.Sprintf("00000000-7e57-4000-8000-%012x", n)
}

// ctx returns a context bounding one operation by the harness timeout.
func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), s.h.Timeout)
	t.Cleanup(cancel)
	return ctx
}

// spec asks the harness for a spec and checks it carries id.
func (s *suite) spec(t *testing.T, id string) *virt.InstanceSpec {
	t.Helper()
	spec := s.h.Spec(t, id)
	if spec == nil || spec.ID != id {
		t.Fatalf("virttest: Harness.Spec(%q) returned %+v, want a spec with that ID", id, spec)
	}
	return spec
}

// spawn creates instance id, destroys it again at cleanup, and waits
// until it is RUNNING.
func (s *suite) spawn(t *testing.T, d virt.Driver, id string) *virt.InstanceInfo {
	t.Helper()
	info, err := d.Spawn(s.ctx(t), s.spec(t, id))
	s.destroyAtCleanup(t, d, id)
	if err != nil {
		t.Fatalf("Spawn(%q): %v", id, err)
	}
	if info == nil || info.ID != id {
		t.Fatalf("Spawn(%q) returned info %+v, want ID %q", id, info, id)
	}
	s.waitPower(t, d, id, virt.PowerRunning)
	return info
}

// destroyAtCleanup removes id when the test ends, with a context of its
// own because t.Context is cancelled by then.
func (s *suite) destroyAtCleanup(t *testing.T, d virt.Driver, id string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.h.Timeout)
		defer cancel()
		if err := d.Destroy(ctx, id); err != nil {
			t.Errorf("cleanup: Destroy(%q): %v", id, err)
		}
	})
}

// waitPower polls GetInfo until instance id is in state, failing the test
// if that takes longer than the harness timeout: real hypervisors may
// report a transition a moment after the call returns.
func (s *suite) waitPower(t *testing.T, d virt.Driver, id string, state int) {
	t.Helper()
	last := -1
	ok := s.poll(func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), s.h.Timeout)
		defer cancel()
		info, err := d.GetInfo(ctx, id)
		if err != nil {
			t.Fatalf("GetInfo(%q) waiting for %s: %v", id, virt.PowerStateName(state), err)
		}
		if info == nil || info.ID != id {
			t.Fatalf("GetInfo(%q) returned %+v, want ID %q", id, info, id)
		}
		last = info.PowerState
		return last == state
	})
	if !ok {
		t.Fatalf("instance %q is %s after %v, want %s", id, virt.PowerStateName(last), s.h.Timeout, virt.PowerStateName(state))
	}
}

// poll calls cond until it is true, backing off from 5ms to 500ms; it
// reports false if cond is still false after the harness timeout.
func (s *suite) poll(cond func() bool) bool {
	deadline := time.Now().Add(s.h.Timeout)
	delay := 5 * time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(delay)
		delay = min(2*delay, 500*time.Millisecond)
	}
	return true
}

// list returns ListInstances, failing the test on error.
func (s *suite) list(t *testing.T, d virt.Driver) []string {
	t.Helper()
	ids, err := d.ListInstances(s.ctx(t))
	if err != nil {
		t.Fatalf("ListInstances: %v", err)
	}
	return ids
}

// wantNotFound checks err wraps virt.ErrNotFound.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("%s = %v, want an error wrapping virt.ErrNotFound", what, err)
	}
}

func (s *suite) testHostInfo(t *testing.T, d virt.Driver) {
	if d.Name() == "" {
		t.Error("Name() is empty")
	}
	hi, err := d.HostInfo(s.ctx(t))
	if err != nil {
		t.Fatalf("HostInfo: %v", err)
	}
	if hi == nil {
		t.Fatal("HostInfo returned nil")
	}
	if hi.VCPUs <= 0 || hi.MemoryMB <= 0 {
		t.Errorf("HostInfo VCPUs=%d MemoryMB=%d, want both > 0", hi.VCPUs, hi.MemoryMB)
	}
	if hi.DiskGB < 0 {
		t.Errorf("HostInfo DiskGB=%d, want >= 0", hi.DiskGB)
	}
	if hi.Arch == "" || hi.HypervisorType == "" {
		t.Errorf("HostInfo Arch=%q HypervisorType=%q, want both non-empty", hi.Arch, hi.HypervisorType)
	}
	for name, n := range hi.CustomResources {
		if !strings.HasPrefix(name, "CUSTOM_") || name == "CUSTOM_" {
			t.Errorf("custom resource %q: name must start with CUSTOM_", name)
		}
		if n < 0 {
			t.Errorf("custom resource %q: count %d < 0", name, n)
		}
	}
}

func (s *suite) testSpawn(t *testing.T, d virt.Driver) {
	id := instanceID(1)
	s.spawn(t, d, id)
	if ids := s.list(t, d); !slices.Contains(ids, id) {
		t.Errorf("ListInstances = %v, want it to contain %q", ids, id)
	}
}

func (s *suite) testSpawnIdempotent(t *testing.T, d virt.Driver) {
	id := instanceID(1)
	s.spawn(t, d, id)
	info, err := d.Spawn(s.ctx(t), s.spec(t, id))
	if err != nil {
		t.Fatalf("second Spawn(%q): %v, want its info and no error", id, err)
	}
	if info == nil || info.ID != id {
		t.Errorf("second Spawn(%q) returned %+v, want ID %q", id, info, id)
	}
	if ids := s.list(t, d); !slices.Equal(ids, []string{id}) {
		t.Errorf("ListInstances after two Spawns = %v, want exactly [%s]", ids, id)
	}
	s.waitPower(t, d, id, virt.PowerRunning)
}

func (s *suite) testPowerOffOn(t *testing.T, d virt.Driver) {
	id := instanceID(1)
	s.spawn(t, d, id)
	graceful := s.h.Timeout / 4
	for i := range 2 { // the second call must be a harmless retry
		if err := d.PowerOff(s.ctx(t), id, graceful); err != nil {
			t.Fatalf("PowerOff #%d: %v", i+1, err)
		}
		s.waitPower(t, d, id, virt.PowerShutdown)
	}
	for i := range 2 {
		if err := d.PowerOn(s.ctx(t), id); err != nil {
			t.Fatalf("PowerOn #%d: %v", i+1, err)
		}
		s.waitPower(t, d, id, virt.PowerRunning)
	}
}

func (s *suite) testReboot(t *testing.T, d virt.Driver) {
	id := instanceID(1)
	s.spawn(t, d, id)
	for _, hard := range []bool{false, true} {
		t.Run(map[bool]string{false: "soft", true: "hard"}[hard], func(t *testing.T) {
			if err := d.Reboot(s.ctx(t), id, hard); err != nil {
				t.Fatalf("Reboot(hard=%v): %v", hard, err)
			}
			s.waitPower(t, d, id, virt.PowerRunning)
		})
	}
}

func (s *suite) testDestroy(t *testing.T, d virt.Driver) {
	id := instanceID(1)
	s.spawn(t, d, id)
	if err := d.Destroy(s.ctx(t), id); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	_, err := d.GetInfo(s.ctx(t), id)
	wantNotFound(t, "GetInfo after Destroy", err)
	if ids := s.list(t, d); slices.Contains(ids, id) {
		t.Errorf("ListInstances after Destroy = %v, still contains %q", ids, id)
	}
	if err := d.Destroy(s.ctx(t), id); err != nil {
		t.Errorf("second Destroy = %v, want nil", err)
	}
}

func (s *suite) testUnknownID(t *testing.T, d virt.Driver) {
	id := instanceID(0xdead)
	ctx := s.ctx(t)
	_, err := d.GetInfo(ctx, id)
	wantNotFound(t, "GetInfo", err)
	wantNotFound(t, "PowerOn", d.PowerOn(ctx, id))
	wantNotFound(t, "PowerOff", d.PowerOff(ctx, id, time.Second))
	wantNotFound(t, "Reboot(soft)", d.Reboot(ctx, id, false))
	wantNotFound(t, "Reboot(hard)", d.Reboot(ctx, id, true))
	if err := d.Destroy(ctx, id); err != nil {
		t.Errorf("Destroy of unknown id = %v, want nil", err)
	}
	s.unknownOptional(t, d, id)
	if ids := s.list(t, d); len(ids) != 0 {
		t.Errorf("ListInstances = %v, want none: operations on unknown ids must create nothing", ids)
	}
}

func (s *suite) testIndependent(t *testing.T, d virt.Driver) {
	a, b := instanceID(1), instanceID(2)
	s.spawn(t, d, a)
	s.spawn(t, d, b)
	if err := d.PowerOff(s.ctx(t), a, s.h.Timeout/4); err != nil {
		t.Fatalf("PowerOff(a): %v", err)
	}
	s.waitPower(t, d, a, virt.PowerShutdown)
	s.waitPower(t, d, b, virt.PowerRunning)
	if err := d.Destroy(s.ctx(t), a); err != nil {
		t.Fatalf("Destroy(a): %v", err)
	}
	s.waitPower(t, d, b, virt.PowerRunning)
	if ids := s.list(t, d); !slices.Equal(ids, []string{b}) {
		t.Errorf("ListInstances after destroying a = %v, want exactly [%s]", ids, b)
	}
}

func (s *suite) testInvalidSpec(t *testing.T, d virt.Driver) {
	id := instanceID(1)
	bad := []struct {
		name   string
		mutate func(*virt.InstanceSpec)
	}{
		{"empty ID", func(sp *virt.InstanceSpec) { sp.ID = "" }},
		{"zero VCPUs", func(sp *virt.InstanceSpec) { sp.VCPUs = 0 }},
		{"negative VCPUs", func(sp *virt.InstanceSpec) { sp.VCPUs = -1 }},
		{"zero MemoryMB", func(sp *virt.InstanceSpec) { sp.MemoryMB = 0 }},
	}
	for _, tc := range bad {
		spec := s.spec(t, id)
		tc.mutate(spec)
		if _, err := d.Spawn(s.ctx(t), spec); err == nil {
			s.destroyAtCleanup(t, d, spec.ID)
			t.Errorf("Spawn with %s succeeded, want an error", tc.name)
		}
	}
	if ids := s.list(t, d); len(ids) != 0 {
		t.Errorf("ListInstances after rejected Spawns = %v, want none", ids)
	}
	_, err := d.GetInfo(s.ctx(t), id)
	wantNotFound(t, "GetInfo after rejected Spawns", err)
}
