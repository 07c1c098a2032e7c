package nova

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/agent/guest"
	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// bareDriver hides every optional interface of the driver it wraps: a
// host whose driver cannot tell its uptime, as a remote hypervisor's.
type bareDriver struct{ virt.Driver }

// Capabilities claims nothing optional.
func (bareDriver) Capabilities() virt.Capabilities { return virt.Capabilities{} }

// newGuestHarness is a real server with two fake hypervisor agents: hv-g,
// whose driver does everything, and hv-bare, whose driver does nothing
// optional; the API's guest service runs both locally.
func newGuestHarness(t *testing.T) (*harness, *fake.Driver) {
	t.Helper()
	h, s := newRealHarness(t)
	drv := fake.New(fake.Config{HostName: "hv-g"})
	local := map[string]virt.Driver{}
	for name, d := range map[string]virt.Driver{"hv-g": drv, "hv-bare": bareDriver{fake.New(fake.Config{HostName: "hv-bare"})}} {
		c := runFakeAgent(t, s, client.Config{NodeName: name, Driver: d}, nil)
		local[c.HostID()] = d
	}
	waitFor(t, "hv-g and hv-bare up", func() error {
		r := h.req("GET", "/compute/v2.1/os-hypervisors", adminTok, "2.53", nil)
		up := 0
		for _, v := range r.list("hypervisors") {
			if m := v.(map[string]any); m["state"] == "up" && (m["hypervisor_hostname"] == "hv-g" || m["hypervisor_hostname"] == "hv-bare") {
				up++
			}
		}
		if up != 2 {
			return fmt.Errorf("%d of 2 hosts up: %s", up, r.raw)
		}
		return nil
	})
	svc := guest.New(guest.Config{RPC: s, Local: func(hostID string) virt.Driver { return local[hostID] }})
	h.api.SetGuests(svc)
	return h, drv
}

// bootOn boots a server of tok's project on a host (the other host is
// disabled meanwhile) and waits for ACTIVE.
func bootOn(h *harness, tok, host string) string {
	h.t.Helper()
	other := "hv-bare"
	if host == other {
		other = "hv-g"
	}
	setService(h, other, "disabled")
	defer setService(h, other, "enabled")
	r := h.req("POST", "/compute/v2.1/servers", tok, "", map[string]any{"server": map[string]any{
		"name": "g-" + host, "imageRef": "cirros", "flavorRef": "1"}}).expect(h.t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	if got := hostOf(h, id); got != host {
		h.t.Fatalf("server on %s, want %s", got, host)
	}
	return id
}

// setService enables or disables a host's compute service.
func setService(h *harness, host, status string) {
	h.t.Helper()
	n := 0
	for _, v := range h.req("GET", "/compute/v2.1/os-services?binary=nova-compute&host="+host, adminTok, "2.53", nil).expect(h.t, 200).list("services") {
		id := v.(map[string]any)["id"].(string)
		h.req("PUT", "/compute/v2.1/os-services/"+id, adminTok, "2.53", map[string]any{"status": status}).expect(h.t, 200)
		n++
	}
	if n != 1 {
		h.t.Fatalf("%d compute services on %s", n, host)
	}
}

// TestChangePassword drives changePassword: Nova's sample body sets the
// password in the guest (root's, through the fake's guest agent) and
// nowhere else; bad bodies, other projects, readers, states, locks and
// failing guest agents are refused as Nova refuses them.
func TestChangePassword(t *testing.T) {
	h, drv := newGuestHarness(t)
	body := sample(t, "os-admin-password/admin-password-change-password.json")
	// A driver that cannot set passwords is Nova's 501.
	bare := bootOn(h, memberTok, "hv-bare")
	act(h, bare, memberTok, "", body).fault(t, 501, "notImplemented", msgPasswordNotSupported)
	id := bootOn(h, memberTok, "hv-g")
	r := act(h, id, memberTok, "", body).expect(t, 202)
	if len(r.raw) != 0 {
		t.Fatalf("changePassword answered a body: %s", r.raw)
	}
	// Recorded as Nova records it, under the request's id.
	reqID := r.header.Get("X-Openstack-Request-Id")
	a := h.req("GET", "/compute/v2.1/servers/"+id+"/os-instance-actions/"+reqID, memberTok, "2.51", nil).expect(t, 200).obj("instanceAction")
	evs, _ := a["events"].([]any)
	if a["action"] != "changePassword" || len(evs) != 1 || evs[0].(map[string]any)["event"] != "compute_set_admin_password" ||
		evs[0].(map[string]any)["result"] != "Success" {
		t.Fatalf("instance action %v", a)
	}
	if got, _ := drv.AdminPassword(id, "root"); got != "foo" {
		t.Fatalf("guest password %q, want foo", got)
	}
	// Any string is a password, as in Nova.
	act(h, id, adminTok, "2.96", map[string]any{"changePassword": map[string]any{"adminPass": "ünïcode & spaces "}}).expect(t, 202)
	if got, _ := drv.AdminPassword(id, "root"); got != "ünïcode & spaces " {
		t.Fatalf("guest password %q", got)
	}
	if show := h.req("GET", "/compute/v2.1/servers/"+id, adminTok, "2.96", nil).expect(t, 200); strings.Contains(string(show.raw), "ünïcode") {
		t.Fatalf("the password shows in the server: %s", show.raw)
	}

	for _, bad := range []any{
		`{"changePassword": {}}`,
		`{"changePassword": {"adminPass": 1}}`,
		`{"changePassword": {"adminPass": null}}`,
		`{"changePassword": {"adminPass": "x", "user": "root"}}`,
		`{"changePassword": "x"}`,
	} {
		act(h, id, memberTok, "", bad).fault(t, 400, "badRequest", "Invalid input")
	}
	act(h, id, otherTok, "", body).fault(t, 404, "itemNotFound", "could not be found")
	act(h, id, readerTok, "", body).fault(t, 403, "forbidden", adminPasswordRule)
	act(h, "00000000-0000-0000-0000-000000000000", memberTok, "", body).fault(t, 404, "itemNotFound", "could not be found")

	// A guest agent that does not answer is Nova's 501; any other
	// failure its 409, which says nothing of the password.
	drv.FailNext("SetAdminPassword", fmt.Errorf("domain x: %w", virt.ErrGuestAgentUnavailable))
	act(h, id, memberTok, "", body).fault(t, 501, "notImplemented", msgPasswordNotSupported)
	drv.FailNext("SetAdminPassword", errors.New("qemu-ga: chpasswd failed"))
	failed := act(h, id, memberTok, "", map[string]any{"changePassword": map[string]any{"adminPass": "secret-1"}})
	failed.fault(t, 409, "conflictingRequest", "Failed to set admin password on "+id+" because error setting admin password")
	a = h.req("GET", "/compute/v2.1/servers/"+id+"/os-instance-actions/"+failed.header.Get("X-Openstack-Request-Id"), adminTok, "2.51", nil).
		expect(t, 200).obj("instanceAction")
	if a["message"] != "Error" || strings.Contains(fmt.Sprint(a), "secret-1") {
		t.Fatalf("failed instance action %v", a)
	}

	// Locked: members are refused, admins are not.
	act(h, id, adminTok, "", map[string]any{"lock": nil}).expect(t, 202)
	act(h, id, memberTok, "", body).fault(t, 409, "conflictingRequest", "Instance "+id+" is locked")
	act(h, id, adminTok, "", map[string]any{"changePassword": map[string]any{"adminPass": "by-admin"}}).expect(t, 202)
	act(h, id, adminTok, "", map[string]any{"unlock": nil}).expect(t, 202)

	// Only ACTIVE servers.
	act(h, id, memberTok, "", map[string]any{"os-stop": nil}).expect(t, 202)
	waitServer(h, id, "SHUTOFF")
	act(h, id, memberTok, "", body).fault(t, 409, "conflictingRequest", "Cannot 'changePassword' instance "+id+" while it is in vm_state stopped")
	if got, _ := drv.AdminPassword(id, "root"); got != "by-admin" {
		t.Fatalf("guest password %q, want by-admin", got)
	}
}

// hostOf is the host a server runs on, from its admin view.
func hostOf(h *harness, id string) string {
	h.t.Helper()
	s := h.req("GET", "/compute/v2.1/servers/"+id, adminTok, "2.73", nil).expect(h.t, 200).obj("server")
	host, _ := s["OS-EXT-SRV-ATTR:host"].(string)
	return host
}

// TestTriggerCrashDump drives trigger_crash_dump from 2.17: the guest
// gets its interrupt, the instance action is recorded, and the
// microversion, body, policy, state and driver are checked as Nova does.
func TestTriggerCrashDump(t *testing.T) {
	h, drv := newGuestHarness(t)
	id := bootOn(h, memberTok, "hv-g")
	body := sample(t, "servers/v2.17/server-action-trigger-crash-dump.json")
	r := act(h, id, memberTok, "2.17", body).expect(t, 202)
	if len(r.raw) != 0 {
		t.Fatalf("trigger_crash_dump answered a body: %s", r.raw)
	}
	waitFor(t, "the crash dump", func() error {
		if n := drv.CrashDumps(id); n != 1 {
			return fmt.Errorf("%d crash dumps", n)
		}
		return nil
	})
	waitServer(h, id, "ACTIVE")
	acts := h.req("GET", "/compute/v2.1/servers/"+id+"/os-instance-actions", adminTok, "2.17", nil).expect(t, 200).list("instanceActions")
	found := false
	for _, a := range acts {
		if a.(map[string]any)["action"] == "trigger_crash_dump" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no trigger_crash_dump instance action in %v", acts)
	}

	// Before 2.17 the action does not exist; its value must be null.
	act(h, id, adminTok, "2.16", body).fault(t, 404, "itemNotFound", "could not be found")
	act(h, id, adminTok, "", body).fault(t, 404, "itemNotFound", "could not be found")
	act(h, id, adminTok, "2.17", `{"trigger_crash_dump": {}}`).fault(t, 400, "badRequest", "Invalid input")
	act(h, id, otherTok, "2.17", body).fault(t, 404, "itemNotFound", "could not be found")
	act(h, id, readerTok, "2.17", body).fault(t, 403, "forbidden", crashDumpRule)

	// A driver without crash dumps is a 400.
	bare := bootOn(h, memberTok, "hv-bare")
	act(h, bare, adminTok, "2.17", body).fault(t, 400, "badRequest", "Triggering crash dump is not supported")

	// Only ACTIVE servers.
	act(h, id, adminTok, "", map[string]any{"os-stop": nil}).expect(t, 202)
	waitServer(h, id, "SHUTOFF")
	act(h, id, adminTok, "2.17", body).fault(t, 409, "conflictingRequest", "Cannot 'trigger_crash_dump' instance "+id+" while it is in vm_state stopped")
	if n := drv.CrashDumps(id); n != 1 {
		t.Fatalf("%d crash dumps, want 1", n)
	}
}

// uptimeLine is uptime(1)'s line as Nova's sample has it.
var uptimeLine = regexp.MustCompile(`^ \d\d:\d\d:\d\d up (\d+ days?, )?(( ?\d+:\d\d)|(\d+ min)), +\d+ users?,  load average: \d+\.\d\d, \d+\.\d\d, \d+\.\d\d$`)

// hypervisorIDs maps hypervisor names to their ids at a microversion.
func hypervisorIDs(h *harness, version string) map[string]string {
	h.t.Helper()
	out := map[string]string{}
	for _, v := range h.req("GET", "/compute/v2.1/os-hypervisors", adminTok, version, nil).expect(h.t, 200).list("hypervisors") {
		m := v.(map[string]any)
		out[m["hypervisor_hostname"].(string)] = fmt.Sprint(m["id"])
	}
	return out
}

// TestHypervisorUptime checks the uptime API against Nova's samples (2.1
// and 2.53 ids), its end at 2.88 (where show carries the uptime), the
// admin-only policy, and a driver that cannot tell (501).
func TestHypervisorUptime(t *testing.T) {
	h, _ := newGuestHarness(t)
	for _, c := range []struct{ version, sample string }{
		{"", "os-hypervisors/hypervisors-uptime-resp.json"},
		{"2.53", "os-hypervisors/v2.53/hypervisors-uptime-resp.json"},
		{"2.87", "os-hypervisors/v2.53/hypervisors-uptime-resp.json"},
	} {
		id := hypervisorIDs(h, c.version)["hv-g"]
		r := h.req("GET", "/compute/v2.1/os-hypervisors/"+id+"/uptime", adminTok, c.version, nil).expect(t, 200)
		sameShape(t, "uptime "+c.version, r.body, sample(t, c.sample))
		hv := r.obj("hypervisor")
		if hv["hypervisor_hostname"] != "hv-g" || fmt.Sprint(hv["id"]) != id || hv["state"] != "up" || hv["status"] != "enabled" {
			t.Fatalf("uptime %s: %v", c.version, hv)
		}
		if up := hv["uptime"].(string); !uptimeLine.MatchString(up) {
			t.Fatalf("uptime %q is not uptime(1)'s line", up)
		}
		bare := hypervisorIDs(h, c.version)["hv-bare"]
		h.req("GET", "/compute/v2.1/os-hypervisors/"+bare+"/uptime", adminTok, c.version, nil).
			fault(t, 501, "notImplemented", "not supported")
		h.req("GET", "/compute/v2.1/os-hypervisors/"+id+"/uptime", memberTok, c.version, nil).
			fault(t, 403, "forbidden", "os_compute_api:os-hypervisors:uptime")
	}
	h.req("GET", "/compute/v2.1/os-hypervisors/99999/uptime", adminTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")

	// 2.88 drops the API; show tells the uptime instead (null when the
	// driver cannot).
	ids := hypervisorIDs(h, "2.88")
	h.req("GET", "/compute/v2.1/os-hypervisors/"+ids["hv-g"]+"/uptime", adminTok, "2.88", nil).expect(t, 404)
	show := h.req("GET", "/compute/v2.1/os-hypervisors/"+ids["hv-g"], adminTok, "2.88", nil).expect(t, 200).obj("hypervisor")
	if up, _ := show["uptime"].(string); !uptimeLine.MatchString(up) {
		t.Fatalf("2.88 show uptime %v", show["uptime"])
	}
	show = h.req("GET", "/compute/v2.1/os-hypervisors/"+ids["hv-bare"], adminTok, "2.88", nil).expect(t, 200).obj("hypervisor")
	if v, ok := show["uptime"]; !ok || v != nil {
		t.Fatalf("2.88 show of a driver without uptime: %v", show)
	}
}
