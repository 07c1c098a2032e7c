package fake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratus-cloud/stratus/virt"
)

// Pause freezes a RUNNING instance (→ PAUSED). Pausing a PAUSED instance
// is a no-op; any other state fails with virt.ErrInvalidState.
func (d *Driver) Pause(ctx context.Context, id string) error {
	return d.transition(ctx, "Pause", id, move(virt.PowerRunning, virt.PowerPaused, "pause"))
}

// Unpause thaws a PAUSED instance (→ RUNNING). Unpausing a RUNNING
// instance is a no-op; any other state fails with virt.ErrInvalidState.
func (d *Driver) Unpause(ctx context.Context, id string) error {
	return d.transition(ctx, "Unpause", id, move(virt.PowerPaused, virt.PowerRunning, "unpause"))
}

// Suspend saves a RUNNING instance to disk (→ SUSPEND). Suspending a
// suspended instance is a no-op; any other state fails with
// virt.ErrInvalidState.
func (d *Driver) Suspend(ctx context.Context, id string) error {
	return d.transition(ctx, "Suspend", id, move(virt.PowerRunning, virt.PowerSuspend, "suspend"))
}

// Resume restores a suspended instance (→ RUNNING). Resuming a RUNNING
// instance is a no-op; any other state fails with virt.ErrInvalidState.
func (d *Driver) Resume(ctx context.Context, id string) error {
	return d.transition(ctx, "Resume", id, move(virt.PowerSuspend, virt.PowerRunning, "resume"))
}

// move is a transition allowed only from one state to another; being in
// the target state already is success, so retries are harmless.
func move(from, to int, what string) func(*instance) error {
	return func(in *instance) error {
		switch in.power {
		case to:
			return nil
		case from:
			in.power = to
			return nil
		}
		return invalid(in, what)
	}
}

// Rescue reboots an instance from r's image (its own image when empty)
// with its disk attached: second (legacy), or in place with the rescue
// disk added as r's device on r's bus (stable rescue). A RUNNING or
// stopped instance ends RUNNING and rescued, as Nova rescues ACTIVE and
// SHUTOFF instances; a PAUSED or suspended one fails with
// virt.ErrInvalidState. Rescuing a rescued instance is a no-op, so
// retries are harmless. GetInfo reports a rescued instance's power
// state as usual; Rescued and RescueLayout say how it is rescued.
func (d *Driver) Rescue(ctx context.Context, id string, r virt.RescueSpec) error {
	return d.transition(ctx, "Rescue", id, func(in *instance) error {
		switch {
		case in.rescued:
			return nil
		case in.power != virt.PowerRunning && !stopped(in.power):
			return invalid(in, "rescue")
		}
		imageID := r.Image
		if imageID == "" {
			imageID = in.spec.ImageID
		}
		in.rescued, in.rescueImage = true, imageID
		in.rescueDevice, in.rescueBus = r.Device, r.Bus
		in.power = virt.PowerRunning
		in.boots++
		return nil
	})
}

// Unrescue reboots a rescued instance from its own disk, whatever its
// power state; it ends RUNNING. Unrescuing an instance that is not
// rescued is a no-op, so retries are harmless.
func (d *Driver) Unrescue(ctx context.Context, id string) error {
	return d.transition(ctx, "Unrescue", id, func(in *instance) error {
		if !in.rescued {
			return nil
		}
		in.rescued, in.rescueImage = false, ""
		in.rescueDevice, in.rescueBus = "", ""
		in.power = virt.PowerRunning
		in.boots++
		return nil
	})
}

// Rescued reports whether instance id is rescued and from which image,
// or returns an error wrapping virt.ErrNotFound. It is a test hook, like
// Spec: neither counted nor failed by injection.
func (d *Driver) Rescued(id string) (rescued bool, imageID string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return false, "", wrap("Rescued", id, virt.ErrNotFound)
	}
	return in.rescued, in.rescueImage, nil
}

// RescueLayout returns a rescued instance's stable-rescue device and
// bus, both "" for the legacy layout or an instance not rescued. It is a
// test hook, like Rescued.
func (d *Driver) RescueLayout(id string) (device, bus string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return "", "", wrap("RescueLayout", id, virt.ErrNotFound)
	}
	return in.rescueDevice, in.rescueBus, nil
}

// LiveMigrate sends a RUNNING or PAUSED instance to destination. The fake
// cannot reach another host, so it only removes the instance here (the
// destination's agent spawns its own copy) and records destination for
// MigratedTo. Another power state fails with virt.ErrInvalidState and an
// empty destination with an error; a failed migration leaves the
// instance as it was, as the virt.LiveMigrator contract requires.
func (d *Driver) LiveMigrate(ctx context.Context, id string, destination string) error {
	return d.LiveMigrateTo(ctx, id, virt.LiveMigrationTarget{URI: destination})
}

// LiveMigrateTo is LiveMigrate to to.URI; it records to whole for
// MigrationTarget (virt.PreparedLiveMigrator).
func (d *Driver) LiveMigrateTo(ctx context.Context, id string, to virt.LiveMigrationTarget) error {
	destination := to.URI
	if err := d.begin(ctx, "LiveMigrate", d.cfg.MigrateLatency); err != nil {
		return wrap("LiveMigrate", id, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	switch {
	case !ok:
		return wrap("LiveMigrate", id, virt.ErrNotFound)
	case destination == "":
		return wrap("LiveMigrate", id, errors.New("empty destination"))
	case in.power != virt.PowerRunning && in.power != virt.PowerPaused:
		return wrap("LiveMigrate", id, invalid(in, "live-migrate"))
	}
	delete(d.instances, id)
	if err := d.saveLocked(); err != nil {
		d.instances[id] = in
		return wrap("LiveMigrate", id, err)
	}
	if d.migrated == nil {
		d.migrated = make(map[string]virt.LiveMigrationTarget)
	}
	d.migrated[id] = to
	return nil
}

// MigratedTo returns where the last successful LiveMigrate of instance id
// sent it, or "" if it never left. It is a test hook, like Spec.
func (d *Driver) MigratedTo(id string) string {
	return d.MigrationTarget(id).URI
}

// MigrationTarget returns the whole target of the last successful live
// migration of instance id, with what the destination prepared. It is a
// test hook, like Spec.
func (d *Driver) MigrationTarget(id string) virt.LiveMigrationTarget {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.migrated[id]
}

// Resize gives an instance spec's flavor (VCPUs, MemoryMB, RootGB,
// EphemeralGB, SwapMB and ExtraSpecs) in place, keeping its power state,
// as the libvirt driver does: a root or ephemeral disk smaller than the
// instance's fails with virt.ErrDiskShrink and changes nothing. spec
// must be valid and its ID empty or id.
func (d *Driver) Resize(ctx context.Context, id string, spec *virt.InstanceSpec) error {
	return d.withInstance(ctx, "Resize", id, 0, func(in *instance) error {
		if spec != nil && spec.ID == "" {
			s := *spec
			s.ID = id
			spec = &s
		}
		if err := validate(spec); err != nil {
			return err
		}
		if spec.ID != id {
			return fmt.Errorf("invalid spec: ID %q for instance %q", spec.ID, id)
		}
		if spec.RootGB < in.spec.RootGB || spec.EphemeralGB < in.spec.EphemeralGB {
			return fmt.Errorf("%w: root %d→%d GB, ephemeral %d→%d GB", virt.ErrDiskShrink,
				in.spec.RootGB, spec.RootGB, in.spec.EphemeralGB, spec.EphemeralGB)
		}
		c := cloneSpec(spec)
		in.spec.VCPUs, in.spec.MemoryMB = c.VCPUs, c.MemoryMB
		in.spec.RootGB, in.spec.EphemeralGB, in.spec.SwapMB = c.RootGB, c.EphemeralGB, c.SwapMB
		in.spec.ExtraSpecs = c.ExtraSpecs
		return nil
	})
}

// Snapshot writes the root disk's data (raw) to
// <SnapshotDir>/<host>/<id>/<imageName>.raw and returns that path, with
// Config.SnapshotDir and a root disk that holds something; otherwise it
// returns a made-up path, /var/lib/stratus/fake/<host>/snapshots/<id>/
// <imageName>.qcow2, and writes nothing. imageName must be non-empty and
// contain no slash.
func (d *Driver) Snapshot(ctx context.Context, id string, imageName string) (string, error) {
	var path string
	err := d.withInstance(ctx, "Snapshot", id, 0, func(in *instance) error {
		if imageName == "" || strings.ContainsAny(imageName, `/\`) {
			return fmt.Errorf("invalid image name %q", imageName)
		}
		data := in.disks[virt.DiskRoleRoot]
		if d.cfg.SnapshotDir == "" || len(data) == 0 {
			path = fmt.Sprintf("/var/lib/stratus/fake/%s/snapshots/%s/%s.qcow2", d.cfg.HostName, id, imageName)
			return nil
		}
		path = filepath.Join(d.cfg.SnapshotDir, d.cfg.HostName, id, imageName+".raw")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		return nil
	})
	return path, err
}

// maxLoggedBoots bounds the console log to the last few boots, so an
// instance rebooted a million times costs no more than one rebooted ten.
const maxLoggedBoots = 10

// ConsoleOutput returns a deterministic serial log: a Linux-like boot
// sequence naming the instance for each boot (the last ten at most), and
// a power-down line if it is stopped. tailLines > 0 keeps only the last
// tailLines lines.
func (d *Driver) ConsoleOutput(ctx context.Context, id string, tailLines int) (string, error) {
	var out string
	err := d.withInstance(ctx, "ConsoleOutput", id, 0, func(in *instance) error {
		out = consoleLog(in, d.cfg.HostName)
		return nil
	})
	if err != nil {
		return "", err
	}
	if tailLines > 0 {
		lines := strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) > tailLines {
			out = strings.Join(lines[len(lines)-tailLines:], "") + "\n"
		}
	}
	return out, nil
}

// consoleLog renders an instance's log; callers hold d.mu.
func consoleLog(in *instance, host string) string {
	name := in.spec.Name
	if name == "" {
		name = in.spec.ID
	}
	var b strings.Builder
	for boot := max(1, in.boots-maxLoggedBoots+1); boot <= in.boots; boot++ {
		fmt.Fprintf(&b, "[    0.000000] Linux version 6.1.0-fake (fake@%s) #%d SMP\n", host, boot)
		fmt.Fprintf(&b, "[    0.000000] Command line: root=/dev/vda1 console=ttyS0\n")
		switch {
		case in.rescued && boot == in.boots && in.rescueDevice != "":
			fmt.Fprintf(&b, "[    0.000000] Booting rescue image %s from a %s on %s, instance disk on /dev/vda\n", in.rescueImage, in.rescueDevice, in.rescueBus)
		case in.rescued && boot == in.boots:
			fmt.Fprintf(&b, "[    0.000000] Booting rescue image %s, instance disk on /dev/vdb\n", in.rescueImage)
		}
		fmt.Fprintf(&b, "[    0.000000] DMI: Stratus fake, BIOS 1.0, instance %s\n", in.spec.ID)
		fmt.Fprintf(&b, "[    0.000000] smpboot: Allowing %d CPUs\n", in.spec.VCPUs)
		fmt.Fprintf(&b, "[    0.000000] Memory: %dK available\n", in.spec.MemoryMB*1024)
		fmt.Fprintf(&b, "[    1.000000] EXT4-fs (vda1): mounted filesystem\n")
		fmt.Fprintf(&b, "[    2.000000] cloud-init[1]: Cloud-init v. fake running 'init' for instance %s (boot %d)\n", in.spec.ID, boot)
		fmt.Fprintf(&b, "[    3.000000] systemd[1]: Reached target Multi-User System.\n")
		fmt.Fprintf(&b, "%s login:\n", name)
	}
	if stopped(in.power) {
		fmt.Fprintf(&b, "[    9.000000] reboot: Power down\n")
	}
	return b.String()
}

// consoleBasePort is the port of the first instance's VNC console;
// ports wrap around below 65536 on a host that has spawned very many.
const consoleBasePort = 5900

// RemoteConsole returns a made-up VNC console at 127.0.0.1:5900+n, n
// being the instance's serial number on this driver (modulo the ports
// left above 5900, so it is always a valid port). Only kind "vnc"
// is offered (others fail with virt.ErrNotSupported), and only while the
// guest is RUNNING or PAUSED (else virt.ErrInvalidState).
func (d *Driver) RemoteConsole(ctx context.Context, id string, kind string) (*virt.Console, error) {
	var c *virt.Console
	err := d.withInstance(ctx, "RemoteConsole", id, 0, func(in *instance) error {
		if kind != "vnc" {
			return fmt.Errorf("console kind %q: %w", kind, virt.ErrNotSupported)
		}
		if in.power != virt.PowerRunning && in.power != virt.PowerPaused {
			return invalid(in, "open a console of")
		}
		c = &virt.Console{Kind: "vnc", Host: "127.0.0.1", Port: consoleBasePort + in.n%(65536-consoleBasePort)}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}
