package fake_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestGuestCalls checks the fake's guest calls: passwords and crash
// dumps are recorded on running instances only, injected failures pass
// through, and the host's uptime is uptime(1)'s line.
func TestGuestCalls(t *testing.T) {
	ctx := context.Background()
	d := fake.New(fake.Config{})
	if _, err := d.Spawn(ctx, smallSpec("a")); err != nil {
		t.Fatal(err)
	}
	if err := d.SetAdminPassword(ctx, "a", "root", "pw1"); err != nil {
		t.Fatal(err)
	}
	if err := d.SetAdminPassword(ctx, "a", "Administrator", "pw2"); err != nil {
		t.Fatal(err)
	}
	if p, ok := d.AdminPassword("a", "root"); !ok || p != "pw1" {
		t.Fatalf("AdminPassword = %q, %v", p, ok)
	}
	if got := d.AdminPasswords("a"); len(got) != 2 || got["Administrator"] != "pw2" {
		t.Fatalf("AdminPasswords = %v", got)
	}
	if err := d.TriggerCrashDump(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if n := d.CrashDumps("a"); n != 1 {
		t.Fatalf("CrashDumps = %d", n)
	}
	if info, err := d.GetInfo(ctx, "a"); err != nil || info.PowerState != virt.PowerRunning {
		t.Fatalf("after the crash dump: %+v, %v", info, err)
	}

	d.FailNext("SetAdminPassword", virt.ErrGuestAgentUnavailable)
	if err := d.SetAdminPassword(ctx, "a", "root", "pw3"); !errors.Is(err, virt.ErrGuestAgentUnavailable) {
		t.Fatalf("injected failure = %v", err)
	}
	if p, _ := d.AdminPassword("a", "root"); p != "pw1" {
		t.Fatalf("a failed SetAdminPassword changed the password to %q", p)
	}
	for what, err := range map[string]error{
		"SetAdminPassword": d.SetAdminPassword(ctx, "nope", "root", "x"),
		"TriggerCrashDump": d.TriggerCrashDump(ctx, "nope"),
	} {
		if !errors.Is(err, virt.ErrNotFound) {
			t.Errorf("%s of an unknown instance = %v", what, err)
		}
	}
	if err := d.PowerOff(ctx, "a", 0); err != nil {
		t.Fatal(err)
	}
	for what, err := range map[string]error{
		"SetAdminPassword": d.SetAdminPassword(ctx, "a", "root", "x"),
		"TriggerCrashDump": d.TriggerCrashDump(ctx, "a"),
	} {
		if !errors.Is(err, virt.ErrInvalidState) {
			t.Errorf("%s of a stopped instance = %v", what, err)
		}
	}
	up, err := d.HostUptime(ctx)
	if err != nil || !strings.HasPrefix(up, " ") || !strings.Contains(up, "load average: ") {
		t.Fatalf("HostUptime = %q, %v", up, err)
	}
}
