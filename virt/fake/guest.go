package fake

import (
	"context"
	"maps"

	"github.com/stratus-cloud/stratus/virt"
)

var (
	_ virt.PasswordSetter = (*Driver)(nil)
	_ virt.CrashDumper    = (*Driver)(nil)
	_ virt.HostUptimer    = (*Driver)(nil)
)

func init() {
	ops["SetAdminPassword"] = true
	ops["TriggerCrashDump"] = true
	ops["HostUptime"] = true
}

// SetAdminPassword records user's new password in a RUNNING instance, as
// a guest agent would set it; AdminPassword reads it back. Any other
// power state fails with virt.ErrInvalidState. Inject
// virt.ErrGuestAgentUnavailable with FailNext to play a guest without an
// agent.
func (d *Driver) SetAdminPassword(ctx context.Context, id, user, password string) error {
	return d.withInstance(ctx, "SetAdminPassword", id, 0, func(in *instance) error {
		if in.power != virt.PowerRunning {
			return invalid(in, "set the password of")
		}
		if in.passwords == nil {
			in.passwords = map[string]string{}
		}
		in.passwords[user] = password
		return nil
	})
}

// TriggerCrashDump plays a guest kernel's crash dump on a RUNNING
// instance: the dump is counted (CrashDumps) and the guest reboots,
// ending RUNNING again. Any other power state fails with
// virt.ErrInvalidState.
func (d *Driver) TriggerCrashDump(ctx context.Context, id string) error {
	return d.withInstance(ctx, "TriggerCrashDump", id, 0, func(in *instance) error {
		if in.power != virt.PowerRunning {
			return invalid(in, "trigger a crash dump of")
		}
		in.crashDumps++
		in.boots++
		return nil
	})
}

// HostUptime is uptime(1)'s line for the machine the fake runs on.
func (d *Driver) HostUptime(ctx context.Context) (string, error) {
	if err := d.begin(ctx, "HostUptime", 0); err != nil {
		return "", err
	}
	return virt.LocalUptime()
}

// AdminPassword returns the password SetAdminPassword last set for user
// in the instance, and whether one was set.
func (d *Driver) AdminPassword(id, user string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return "", false
	}
	p, ok := in.passwords[user]
	return p, ok
}

// AdminPasswords returns every user's password SetAdminPassword set in
// the instance.
func (d *Driver) AdminPasswords(id string) map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if in, ok := d.instances[id]; ok {
		return maps.Clone(in.passwords)
	}
	return nil
}

// CrashDumps returns how many crash dumps TriggerCrashDump triggered in
// the instance.
func (d *Driver) CrashDumps(id string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if in, ok := d.instances[id]; ok {
		return in.crashDumps
	}
	return 0
}
