package libvirt_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestGuestCalls drives the guest calls on a real QEMU domain: the
// domain has the QEMU guest agent's channel; an NMI goes into the
// running guest; a password change, with no agent in the guest, fails
// with virt.ErrGuestAgentUnavailable within a bounded time and without
// the password in its error; a stopped domain and an unknown instance
// are refused.
func TestGuestCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if !e.drv.Capabilities().SetPassword || !e.drv.Capabilities().CrashDump {
		t.Fatalf("Capabilities = %+v, want SetPassword and CrashDump", e.drv.Capabilities())
	}
	if _, err := e.drv.Spawn(ctx(t), tinySpec("g")); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("g")
	x := domainXML(t, e.raw, name, 0)
	found := false
	for _, c := range x.Devices.Channels {
		if c.Target != nil && c.Target.VirtIO != nil && c.Target.VirtIO.Name == libvirt.GuestAgentChannel {
			found = c.Source != nil && c.Source.UNIX != nil && c.Source.UNIX.Path != ""
		}
	}
	if !found {
		t.Fatalf("domain has no %s channel with a socket: %+v", libvirt.GuestAgentChannel, x.Devices.Channels)
	}

	if err := e.drv.TriggerCrashDump(ctx(t), "g"); err != nil {
		t.Fatalf("TriggerCrashDump: %v", err)
	}
	if st := domainState(t, e.raw, name); st != golibvirt.DomainRunning {
		t.Fatalf("domain state %v after the NMI, want running (a guest without kdump ignores it)", st)
	}

	const secret = "s3cr3t-never-logged"
	start := time.Now()
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	err := e.drv.SetAdminPassword(c, "g", "root", secret)
	took := time.Since(start)
	if !errors.Is(err, virt.ErrGuestAgentUnavailable) {
		t.Fatalf("SetAdminPassword without a guest agent = %v, want virt.ErrGuestAgentUnavailable", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error shows the password: %v", err)
	}
	t.Logf("SetAdminPassword without a guest agent failed in %v: %v", took, err)

	for what, err := range map[string]error{
		"TriggerCrashDump": e.drv.TriggerCrashDump(ctx(t), "nope"),
		"SetAdminPassword": e.drv.SetAdminPassword(ctx(t), "nope", "root", "x"),
	} {
		if !errors.Is(err, virt.ErrNotFound) {
			t.Errorf("%s of an unknown instance = %v, want virt.ErrNotFound", what, err)
		}
	}

	if err := e.drv.PowerOff(ctx(t), "g", 0); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"TriggerCrashDump": e.drv.TriggerCrashDump(ctx(t), "g"),
		"SetAdminPassword": e.drv.SetAdminPassword(ctx(t), "g", "root", "x"),
	} {
		if !errors.Is(err, virt.ErrInvalidState) {
			t.Errorf("%s of a stopped instance = %v, want virt.ErrInvalidState", what, err)
		}
	}

	up, err := e.drv.HostUptime(ctx(t))
	if err != nil || !strings.Contains(up, " up ") || !strings.Contains(up, "load average: ") {
		t.Fatalf("HostUptime = %q, %v", up, err)
	}
}
