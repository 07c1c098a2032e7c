package virttest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
)

// consoleKinds are the remote console kinds virt.RemoteConsoler knows.
var consoleKinds = []string{"vnc", "spice", "serial", "mks"}

// call is one method of an optional interface, bound to its arguments.
type call struct {
	name string
	fn   func(ctx context.Context, id string) error
}

// optional is one capability: whether Capabilities claims it, whether
// the driver implements its interface, and calls to every method of it.
type optional struct {
	name  string
	on    bool
	impl  bool
	calls []call
}

// optionals lists the driver's thirteen optional capabilities.
func (s *suite) optionals(t *testing.T, d virt.Driver) []optional {
	caps := d.Capabilities()
	var o []optional
	add := func(name string, on, impl bool, calls ...call) {
		o = append(o, optional{name: name, on: on, impl: impl, calls: calls})
	}
	p, ok := d.(virt.Pauser)
	add("Pause", caps.Pause, ok,
		call{"Pause", func(ctx context.Context, id string) error { return p.Pause(ctx, id) }},
		call{"Unpause", func(ctx context.Context, id string) error { return p.Unpause(ctx, id) }})
	su, ok := d.(virt.Suspender)
	add("Suspend", caps.Suspend, ok,
		call{"Suspend", func(ctx context.Context, id string) error { return su.Suspend(ctx, id) }},
		call{"Resume", func(ctx context.Context, id string) error { return su.Resume(ctx, id) }})
	rs, ok := d.(virt.Rescuer)
	add("Rescue", caps.Rescue, ok,
		call{"Rescue", func(ctx context.Context, id string) error { return rs.Rescue(ctx, id, virt.RescueSpec{}) }},
		call{"Unrescue", func(ctx context.Context, id string) error { return rs.Unrescue(ctx, id) }})
	rz, ok := d.(virt.Resizer)
	add("Resize", caps.Resize, ok,
		call{"Resize", func(ctx context.Context, id string) error { return rz.Resize(ctx, id, s.spec(t, id)) }})
	m, ok := d.(virt.DiskMover)
	add("Migrate", caps.Migrate, ok,
		call{"ExportDisks", func(ctx context.Context, id string) error {
			_, err := m.ExportDisks(ctx, id)
			return err
		}})
	lm, ok := d.(virt.LiveMigrator)
	add("LiveMigrate", caps.LiveMigrate, ok,
		call{"LiveMigrate", func(ctx context.Context, id string) error {
			return lm.LiveMigrate(ctx, id, "virttest-no-such-host")
		}})
	sn, ok := d.(virt.Snapshotter)
	add("Snapshot", caps.Snapshot, ok,
		call{"Snapshot", func(ctx context.Context, id string) error {
			_, err := sn.Snapshot(ctx, id, "virttest-snapshot")
			return err
		}})
	co, ok := d.(virt.ConsoleOutputer)
	add("ConsoleOutput", caps.ConsoleOutput, ok,
		call{"ConsoleOutput", func(ctx context.Context, id string) error {
			_, err := co.ConsoleOutput(ctx, id, 10)
			return err
		}})
	rc, ok := d.(virt.RemoteConsoler)
	add("RemoteConsole", caps.RemoteConsole, ok,
		// Every kind is tried: the first error that is not
		// ErrNotSupported (or a success) is what counts.
		call{"RemoteConsole", func(ctx context.Context, id string) error {
			var err error
			for _, kind := range consoleKinds {
				if _, err = rc.RemoteConsole(ctx, id, kind); !errors.Is(err, virt.ErrNotSupported) {
					return err
				}
			}
			return err
		}})
	va, ok := d.(virt.VolumeAttacher)
	add("AttachVolume", caps.AttachVolume, ok,
		call{"AttachVolume", func(ctx context.Context, id string) error {
			return va.AttachVolume(ctx, id, &virt.Volume{ID: "virttest-volume", Path: "/nonexistent/virttest-volume", Device: "vdb"})
		}},
		call{"DetachVolume", func(ctx context.Context, id string) error {
			return va.DetachVolume(ctx, id, "virttest-volume")
		}})
	ia, ok := d.(virt.InterfaceAttacher)
	add("AttachInterface", caps.AttachInterface, ok,
		call{"AttachInterface", func(ctx context.Context, id string) error {
			return ia.AttachInterface(ctx, id, &virt.NIC{PortID: "virttest-port", MAC: "fa:16:3e:00:7e:57", Bridge: "virttest-br"})
		}},
		call{"DetachInterface", func(ctx context.Context, id string) error {
			return ia.DetachInterface(ctx, id, "virttest-port")
		}})
	ps, ok := d.(virt.PasswordSetter)
	add("SetPassword", caps.SetPassword, ok,
		call{"SetAdminPassword", func(ctx context.Context, id string) error {
			err := ps.SetAdminPassword(ctx, id, "root", "virttest-password")
			if errors.Is(err, virt.ErrGuestAgentUnavailable) {
				return nil // a test guest has no agent: the driver tried
			}
			return err
		}})
	cd, ok := d.(virt.CrashDumper)
	add("CrashDump", caps.CrashDump, ok,
		call{"TriggerCrashDump", func(ctx context.Context, id string) error { return cd.TriggerCrashDump(ctx, id) }})
	return o
}

// testCapabilities checks Capabilities against the interfaces: a
// capability that is on needs its interface; one that is off needs the
// interface absent or every method of it failing with ErrNotSupported,
// which is checked on a real instance so ErrNotFound cannot mask it.
func (s *suite) testCapabilities(t *testing.T, d virt.Driver) {
	opts := s.optionals(t, d)
	var id string
	for _, o := range opts {
		switch {
		case o.on && !o.impl:
			t.Errorf("Capabilities.%s is true but the driver does not implement its interface", o.name)
		case !o.on && o.impl:
			if id == "" {
				id = instanceID(1)
				s.spawn(t, d, id)
			}
			for _, c := range o.calls {
				if err := c.fn(s.ctx(t), id); !errors.Is(err, virt.ErrNotSupported) {
					t.Errorf("Capabilities.%s is false but %s = %v, want an error wrapping virt.ErrNotSupported",
						o.name, c.name, err)
				}
			}
		}
	}
}

// unknownOptional checks every supported optional method fails with
// ErrNotFound on unknown instance id.
func (s *suite) unknownOptional(t *testing.T, d virt.Driver, id string) {
	t.Helper()
	for _, o := range s.optionals(t, d) {
		if !o.on || !o.impl {
			continue
		}
		for _, c := range o.calls {
			wantNotFound(t, c.name, c.fn(s.ctx(t), id))
		}
	}
}

// capable skips the test unless Capabilities has the capability, and
// fails it if the interface is then missing.
func capable[I any](t *testing.T, d virt.Driver, on bool, name string) I {
	t.Helper()
	if !on {
		t.Skipf("Capabilities.%s is false", name)
	}
	i, ok := d.(I)
	if !ok {
		t.Fatalf("Capabilities.%s is true but the driver does not implement its interface", name)
	}
	return i
}

func (s *suite) testPause(t *testing.T, d virt.Driver) {
	p := capable[virt.Pauser](t, d, d.Capabilities().Pause, "Pause")
	id := instanceID(1)
	s.spawn(t, d, id)
	if err := p.Pause(s.ctx(t), id); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	s.waitPower(t, d, id, virt.PowerPaused)
	if err := p.Unpause(s.ctx(t), id); err != nil {
		t.Fatalf("Unpause: %v", err)
	}
	s.waitPower(t, d, id, virt.PowerRunning)
}

func (s *suite) testSuspend(t *testing.T, d virt.Driver) {
	su := capable[virt.Suspender](t, d, d.Capabilities().Suspend, "Suspend")
	id := instanceID(1)
	s.spawn(t, d, id)
	if err := su.Suspend(s.ctx(t), id); err != nil {
		t.Fatalf("Suspend: %v", err)
	}
	s.waitPower(t, d, id, virt.PowerSuspend)
	if err := su.Resume(s.ctx(t), id); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	s.waitPower(t, d, id, virt.PowerRunning)
}

// testWrongPowerState checks the error contract the agent maps to
// Nova's 409: pausing or suspending a stopped instance fails with an
// error that is virt.ErrInvalidState, whatever the backend's own words.
func (s *suite) testWrongPowerState(t *testing.T, d virt.Driver) {
	caps := d.Capabilities()
	p, pauses := d.(virt.Pauser)
	su, suspends := d.(virt.Suspender)
	pauses, suspends = pauses && caps.Pause, suspends && caps.Suspend
	if !pauses && !suspends {
		t.Skip("Capabilities.Pause and Capabilities.Suspend are false: no operation refuses a power state")
	}
	id := instanceID(1)
	s.spawn(t, d, id)
	if err := d.PowerOff(s.ctx(t), id, s.h.Timeout/4); err != nil {
		t.Fatalf("PowerOff: %v", err)
	}
	s.waitPower(t, d, id, virt.PowerShutdown)
	if pauses {
		wantInvalidState(t, "Pause of a stopped instance", p.Pause(s.ctx(t), id))
	}
	if suspends {
		wantInvalidState(t, "Suspend of a stopped instance", su.Suspend(s.ctx(t), id))
	}
}

// wantInvalidState checks err wraps virt.ErrInvalidState.
func wantInvalidState(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("%s = %v, want an error wrapping virt.ErrInvalidState", what, err)
	}
}

// testRescue checks a rescue boots the instance whatever its power
// (running or stopped) and an unrescue leaves it RUNNING: the agent
// rescues stopped instances and relies on both ending RUNNING.
func (s *suite) testRescue(t *testing.T, d virt.Driver) {
	rs := capable[virt.Rescuer](t, d, d.Capabilities().Rescue, "Rescue")
	id := instanceID(1)
	s.spawn(t, d, id)
	for _, stopFirst := range []bool{false, true} {
		if stopFirst {
			if err := d.PowerOff(s.ctx(t), id, s.h.Timeout/4); err != nil {
				t.Fatalf("PowerOff: %v", err)
			}
			s.waitPower(t, d, id, virt.PowerShutdown)
		}
		// The legacy layout from a running guest, stable rescue's (the
		// rescue disk added as a CD-ROM) from a stopped one.
		spec := virt.RescueSpec{}
		if stopFirst {
			spec = virt.RescueSpec{Device: "cdrom"}
		}
		if err := rs.Rescue(s.ctx(t), id, spec); err != nil {
			t.Fatalf("Rescue (stopped first: %v): %v", stopFirst, err)
		}
		s.waitPower(t, d, id, virt.PowerRunning)
		if err := rs.Unrescue(s.ctx(t), id); err != nil {
			t.Fatalf("Unrescue (stopped first: %v): %v", stopFirst, err)
		}
		s.waitPower(t, d, id, virt.PowerRunning)
	}
}

// testLiveMigrate checks the contract the agent builds on: a live
// migration that succeeds leaves nothing of the instance here, one that
// fails leaves it as it was. A stopped instance may go either way.
func (s *suite) testLiveMigrate(t *testing.T, d virt.Driver) {
	lm := capable[virt.LiveMigrator](t, d, d.Capabilities().LiveMigrate, "LiveMigrate")
	dest := s.h.MigrationDestination
	if dest == "" {
		t.Skip("Harness.MigrationDestination is empty")
	}
	a, b := instanceID(1), instanceID(2)
	s.spawn(t, d, a)
	s.spawn(t, d, b)
	if err := d.PowerOff(s.ctx(t), b, s.h.Timeout/4); err != nil {
		t.Fatalf("PowerOff: %v", err)
	}
	s.waitPower(t, d, b, virt.PowerShutdown)
	if err := lm.LiveMigrate(s.ctx(t), b, dest); err != nil {
		// Still here, still stopped.
		s.waitPower(t, d, b, virt.PowerShutdown)
	} else {
		s.waitGone(t, d, b)
	}
	if err := lm.LiveMigrate(s.ctx(t), a, dest); err != nil {
		t.Fatalf("LiveMigrate of a running instance to %q: %v", dest, err)
	}
	s.waitGone(t, d, a)
}

// waitGone polls until instance id is unknown here (a backend may
// undefine the source a moment after the migration returns).
func (s *suite) waitGone(t *testing.T, d virt.Driver, id string) {
	t.Helper()
	ok := s.poll(func() bool {
		ctx, cancel := context.WithTimeout(t.Context(), s.h.Timeout)
		defer cancel()
		_, err := d.GetInfo(ctx, id)
		return errors.Is(err, virt.ErrNotFound)
	})
	if !ok {
		t.Fatalf("instance %q still here %v after it migrated away, want GetInfo to fail with virt.ErrNotFound", id, s.h.Timeout)
	}
	if ids := s.list(t, d); slices.Contains(ids, id) {
		t.Errorf("ListInstances = %v, still contains %q after it migrated away", ids, id)
	}
}

func (s *suite) testConsoleOutput(t *testing.T, d virt.Driver) {
	co := capable[virt.ConsoleOutputer](t, d, d.Capabilities().ConsoleOutput, "ConsoleOutput")
	id := instanceID(1)
	s.spawn(t, d, id)
	// A real guest writes its first console line a moment after boot.
	ok := s.poll(func() bool {
		out, err := co.ConsoleOutput(s.ctx(t), id, 0)
		if err != nil {
			t.Fatalf("ConsoleOutput: %v", err)
		}
		return out != ""
	})
	if !ok {
		t.Fatalf("ConsoleOutput still empty after %v", s.h.Timeout)
	}
	out, err := co.ConsoleOutput(s.ctx(t), id, 1)
	if err != nil {
		t.Fatalf("ConsoleOutput(tailLines=1): %v", err)
	}
	if n := strings.Count(strings.TrimSuffix(out, "\n"), "\n") + 1; out == "" || n > 1 {
		t.Errorf("ConsoleOutput(tailLines=1) = %q, want exactly one line", out)
	}
}

func (s *suite) testRemoteConsole(t *testing.T, d virt.Driver) {
	rc := capable[virt.RemoteConsoler](t, d, d.Capabilities().RemoteConsole, "RemoteConsole")
	id := instanceID(1)
	s.spawn(t, d, id)
	var offered []string
	for _, kind := range consoleKinds {
		c, err := rc.RemoteConsole(s.ctx(t), id, kind)
		switch {
		case errors.Is(err, virt.ErrNotSupported):
			continue
		case err != nil:
			t.Errorf("RemoteConsole(%q) = %v, want a console or virt.ErrNotSupported", kind, err)
		case c == nil || c.Kind != kind || !consoleReachable(c):
			t.Errorf("RemoteConsole(%q) = %+v, want that kind with a host and a port in 1-65535, or a local path", kind, c)
		default:
			offered = append(offered, kind)
		}
	}
	if len(offered) == 0 {
		t.Errorf("Capabilities.RemoteConsole is true but no kind of %v works", consoleKinds)
	}
}

func (s *suite) testSnapshot(t *testing.T, d virt.Driver) {
	sn := capable[virt.Snapshotter](t, d, d.Capabilities().Snapshot, "Snapshot")
	id := instanceID(1)
	s.spawn(t, d, id)
	path, err := sn.Snapshot(s.ctx(t), id, "virttest-snapshot")
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if path == "" {
		t.Error("Snapshot returned an empty image path")
	}
	// A snapshot may stop the guest for a moment; it must not leave it so.
	s.waitPower(t, d, id, virt.PowerRunning)
}

// consoleReachable reports whether a console names where to connect: a
// host and port, or (for a local device such as a serial pty) a path.
func consoleReachable(c *virt.Console) bool {
	if c.Path != "" {
		return c.Host == "" && c.Port == 0
	}
	return c.Host != "" && c.Port > 0 && c.Port <= 65535
}
