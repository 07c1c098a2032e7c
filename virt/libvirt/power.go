package libvirt

import (
	"context"
	"fmt"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/virt"
)

// withDomain runs fn on instance id's domain and record; ErrNotFound if
// it has none.
func (d *Driver) withDomain(ctx context.Context, op, id string,
	fn func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error) error {
	return d.run(ctx, op, id, func(ctx context.Context, lv *golibvirt.Libvirt) error {
		dom, err := d.lookup(lv, id)
		if err != nil {
			return err
		}
		m, err := d.meta(lv, dom)
		if err != nil {
			return fmt.Errorf("domain %s: %w", dom.Name, err)
		}
		s, err := d.state(lv, dom)
		if err != nil {
			return err
		}
		return fn(ctx, lv, dom, m, s)
	})
}

// PowerOn starts an instance from any state: a stopped one boots, a
// suspended one is restored from its managed save, a paused one resumes.
// It is a no-op on a RUNNING one.
func (d *Driver) PowerOn(ctx context.Context, id string) error {
	return d.withDomain(ctx, "PowerOn", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		return d.powerOn(ctx, lv, dom, s)
	})
}

func (d *Driver) powerOn(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, s domState) error {
	switch s.state {
	case golibvirt.DomainRunning, golibvirt.DomainBlocked:
		return nil
	case golibvirt.DomainPaused:
		return lv.DomainResume(dom)
	case golibvirt.DomainPmsuspended:
		return lv.DomainPmWakeup(dom, 0)
	case golibvirt.DomainShutdown:
		// Going down: let it, then boot it again.
		if err := d.stop(ctx, lv, dom, false, 5*time.Second); err != nil {
			return err
		}
	}
	return lv.DomainCreate(dom)
}

// PowerOff stops an instance from any state: it asks the guest to shut
// down (ACPI) and waits up to timeout, then pulls the plug. A guest
// without an operating system (no image) cannot answer and is stopped at
// once, as is a paused one; a suspended one loses its saved memory. It is
// a no-op on a stopped instance.
func (d *Driver) PowerOff(ctx context.Context, id string, timeout time.Duration) error {
	return d.withDomain(ctx, "PowerOff", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if s.managedSave {
			return lv.DomainManagedSaveRemove(dom, 0)
		}
		if !s.active() {
			return nil
		}
		graceful := m.hasOS() && s.state != golibvirt.DomainPaused && s.state != golibvirt.DomainPmsuspended
		return d.stop(ctx, lv, dom, graceful, timeout)
	})
}

// stop shuts a running domain down: through ACPI within timeout when
// graceful, then by destroying it.
func (d *Driver) stop(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, graceful bool, timeout time.Duration) error {
	if graceful && timeout > 0 {
		err := lv.DomainShutdownFlags(dom, golibvirt.DomainShutdownAcpiPowerBtn)
		if err == nil {
			off, err := d.waitOff(ctx, lv, dom, timeout)
			if err != nil || off {
				return err
			}
			d.cfg.Logger.Info("guest did not shut down in time; forcing it off", "domain", dom.Name, "timeout", timeout)
		} else if isLibvirtError(err, golibvirt.ErrOperationInvalid) {
			return nil // not running any more
		} else if connLost(lv, err) {
			return err
		}
	}
	if err := d.destroyDomain(lv, dom); err != nil {
		return fmt.Errorf("stop domain: %w", err)
	}
	return nil
}

// destroyDomain pulls the plug on a domain. QEMU may take longer to exit
// than libvirt waits on a loaded host ("Failed to terminate process …:
// Device or resource busy"), so a failure is retried while the domain
// still runs, as Nova does. A domain that is not running is not an error.
func (d *Driver) destroyDomain(lv *golibvirt.Libvirt, dom golibvirt.Domain) error {
	var err error
	for try := 1; try <= 3; try++ {
		err = ignoreNotRunning(lv.DomainDestroy(dom))
		if err == nil || connLost(lv, err) || isLibvirtError(err, golibvirt.ErrNoDomain) {
			return err
		}
		if st, _, serr := lv.DomainGetState(dom, 0); serr == nil && golibvirt.DomainState(st) == golibvirt.DomainShutoff {
			return nil
		}
		d.cfg.Logger.Warn("destroying a domain failed; retrying", "domain", dom.Name, "try", try, "error", err)
		time.Sleep(time.Duration(try) * time.Second)
	}
	return err
}

// waitOff polls until the domain is shut off, for at most timeout.
func (d *Driver) waitOff(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		st, _, err := lv.DomainGetState(dom, 0)
		if err != nil {
			return false, err
		}
		if golibvirt.DomainState(st) == golibvirt.DomainShutoff {
			return true, nil
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Reboot restarts an instance. A hard reboot stops the domain if it runs
// (dropping a managed save) and boots it again from any state. A soft
// reboot needs a RUNNING instance (virt.ErrInvalidState otherwise): it shuts
// the guest down through ACPI and boots it again, falling back to a hard
// reboot after Config.SoftRebootTimeout, as Nova does. A guest without an
// operating system (no image) cannot answer ACPI: its soft reboot is a
// reset of the virtual machine.
func (d *Driver) Reboot(ctx context.Context, id string, hard bool) error {
	return d.withDomain(ctx, "Reboot", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if hard {
			if s.managedSave {
				if err := lv.DomainManagedSaveRemove(dom, 0); err != nil {
					return err
				}
			}
			if s.active() {
				if err := d.stop(ctx, lv, dom, false, 0); err != nil {
					return err
				}
			}
			return lv.DomainCreate(dom)
		}
		if s.power != virt.PowerRunning {
			return invalid("soft reboot", s.power)
		}
		if !m.hasOS() {
			return lv.DomainReset(dom, 0)
		}
		if err := d.stop(ctx, lv, dom, true, d.cfg.SoftRebootTimeout); err != nil {
			return err
		}
		return lv.DomainCreate(dom)
	})
}
