package virt

import (
	"context"
	"errors"
)

// ErrGuestAgentUnavailable means the instance's guest agent (the QEMU
// guest agent for libvirt) did not answer: it is not configured, not
// installed in the guest, or not running yet. Nova answers a password
// change that fails this way as not implemented for the instance.
var ErrGuestAgentUnavailable = errors.New("the guest agent is not responding")

// PasswordSetter can set the password of a user inside a running guest
// (Nova's set_admin_password), through an agent in the guest.
type PasswordSetter interface {
	// SetAdminPassword sets user's password in the guest. It fails with
	// ErrNotFound for an unknown instance and ErrGuestAgentUnavailable
	// when the guest agent does not answer within a bounded time. The
	// password never appears in the returned error.
	SetAdminPassword(ctx context.Context, id, user, password string) error
}

// CrashDumper can make a guest's kernel dump its memory and reboot
// (Nova's trigger_crash_dump): a non-maskable interrupt on x86.
type CrashDumper interface {
	// TriggerCrashDump injects the interrupt into a running guest. It
	// fails with ErrNotFound for an unknown instance.
	TriggerCrashDump(ctx context.Context, id string) error
}

// HostUptimer reports how long the hypervisor host has been up, in the
// words of uptime(1): " 08:32:11 up 93 days, 18:25, 12 users,  load
// average: 0.20, 0.12, 0.14" (Nova's get_host_uptime). Drivers whose
// hypervisor is the machine the agent runs on implement it with
// LocalUptime; drivers of a remote hypervisor do not.
type HostUptimer interface {
	HostUptime(ctx context.Context) (string, error)
}
