package libvirt

import (
	"context"
	"fmt"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/virt"
)

// GuestAgentChannel is the virtio-serial channel every domain has for
// the QEMU guest agent (qemu-ga), which SetAdminPassword talks to.
const GuestAgentChannel = "org.qemu.guest_agent.0"

// guestAgentTimeout bounds one guest agent command: an agent that is
// connected but does not answer fails the call instead of hanging it.
const guestAgentTimeout = 10 * time.Second

var (
	_ virt.PasswordSetter = (*Driver)(nil)
	_ virt.CrashDumper    = (*Driver)(nil)
	_ virt.HostUptimer    = (*Driver)(nil)
)

// SetAdminPassword sets user's password in a running guest through the
// QEMU guest agent (virDomainSetUserPassword), as Nova's libvirt driver
// does. A guest whose agent is not connected or does not answer fails
// with virt.ErrGuestAgentUnavailable within guestAgentTimeout; a guest
// that is not running with virt.ErrInvalidState.
func (d *Driver) SetAdminPassword(ctx context.Context, id, user, password string) error {
	if user == "" {
		user = "root"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*guestAgentTimeout)
	defer cancel()
	return d.withDomain(ctx, "SetAdminPassword", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if s.power != virt.PowerRunning {
			return invalid("set the password of", s.power)
		}
		// Best effort: older libvirtd lack the call, and the default
		// (blocking) timeout then applies, bounded by ctx.
		_, _ = lv.DomainAgentSetResponseTimeout(dom, int32(guestAgentTimeout/time.Second), 0)
		err := lv.DomainSetUserPassword(dom, golibvirt.OptString{user}, golibvirt.OptString{password}, 0)
		switch {
		case err == nil:
			return nil
		case isLibvirtError(err, golibvirt.ErrAgentUnresponsive), isLibvirtError(err, golibvirt.ErrAgentCommandTimeout),
			isLibvirtError(err, golibvirt.ErrOperationTimeout), isLibvirtError(err, golibvirt.ErrArgumentUnsupported):
			return fmt.Errorf("domain %s: %w", dom.Name, virt.ErrGuestAgentUnavailable)
		case isLibvirtError(err, golibvirt.ErrNoDomain):
			return virt.ErrNotFound
		}
		// libvirt's message names the user, never the password.
		return fmt.Errorf("domain %s: set the password of user %q: %w", dom.Name, user, err)
	})
}

// TriggerCrashDump injects a non-maskable interrupt into a running guest
// (virDomainInjectNMI): a guest kernel set up for kdump dumps its memory
// and reboots. A guest that is not running fails with virt.ErrInvalidState.
func (d *Driver) TriggerCrashDump(ctx context.Context, id string) error {
	return d.withDomain(ctx, "TriggerCrashDump", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if s.power != virt.PowerRunning {
			return invalid("trigger a crash dump of", s.power)
		}
		if err := lv.DomainInjectNmi(dom, 0); err != nil {
			if isLibvirtError(err, golibvirt.ErrNoDomain) {
				return virt.ErrNotFound
			}
			return fmt.Errorf("domain %s: inject an NMI: %w", dom.Name, err)
		}
		return nil
	})
}

// HostUptime is uptime(1)'s line for the machine the agent runs on,
// which runs libvirtd (Nova's libvirt driver runs `uptime` there).
func (d *Driver) HostUptime(ctx context.Context) (string, error) {
	return virt.LocalUptime()
}
