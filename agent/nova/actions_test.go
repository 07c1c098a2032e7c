package nova

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// act posts one server action.
func act(h *harness, id, tok, version string, body any) *response {
	h.t.Helper()
	return h.req("POST", "/compute/v2.1/servers/"+id+"/action", tok, version, body)
}

func lastTask(h *harness) *structs.InstanceTaskRequest {
	a, _ := h.rpc.lastCall("Instance.Task").(*structs.InstanceTaskRequest)
	return a
}

func callCount(h *harness, method string) int {
	h.rpc.mu.Lock()
	defer h.rpc.mu.Unlock()
	n := 0
	for _, c := range h.rpc.calls {
		if c.method == method {
			n++
		}
	}
	return n
}

func (h *harness) inst(id string) *structs.Instance {
	h.rpc.mu.Lock()
	defer h.rpc.mu.Unlock()
	return h.rpc.instances[id].Copy()
}

func (h *harness) setInst(id string, fn func(*structs.Instance)) {
	h.rpc.mu.Lock()
	defer h.rpc.mu.Unlock()
	fn(h.rpc.instances[id])
}

func TestServerActionsAccepted(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, _ := addHostAndServers(h)
	id := mine.ID
	for _, step := range []struct {
		tok, version string
		body         string
		status       int
		op           string
		vmState      string
	}{
		{memberTok, "", `{"reboot": {"type": "SOFT"}}`, 202, structs.OpRebootSoft, "active"},
		{memberTok, "", `{"reboot": {"type": "hard"}}`, 202, structs.OpRebootHard, "active"},
		{memberTok, "", `{"os-stop": null}`, 202, structs.OpStop, "stopped"},
		{memberTok, "", `{"os-start": null}`, 202, structs.OpStart, "active"},
		{memberTok, "", `{"pause": null}`, 202, structs.OpPause, "paused"},
		{memberTok, "", `{"unpause": null}`, 202, structs.OpUnpause, "active"},
		{memberTok, "", `{"suspend": null}`, 202, structs.OpSuspend, "suspended"},
		{memberTok, "", `{"resume": null}`, 202, structs.OpResume, "active"},
		{memberTok, "", `{"rescue": null}`, 200, structs.OpRescue, "rescued"},
		{memberTok, "", `{"unrescue": null}`, 202, structs.OpUnrescue, "active"},
		{memberTok, "", `{"resize": {"flavorRef": "2", "OS-DCF:diskConfig": "AUTO"}}`, 202, structs.OpResize, "resized"},
		{memberTok, "", `{"confirmResize": null}`, 204, structs.OpConfirmResize, "active"},
		{memberTok, "", `{"resize": {"flavorRef": 3}}`, 202, structs.OpResize, "resized"},
		{memberTok, "", `{"revertResize": null}`, 202, structs.OpRevertResize, "active"},
		{adminTok, "", `{"migrate": null}`, 202, structs.OpMigrate, "resized"},
		{adminTok, "", `{"confirmResize": null}`, 204, structs.OpConfirmResize, "active"},
		{adminTok, "2.56", `{"migrate": {"host": "compute-1"}}`, 202, structs.OpMigrate, "resized"},
		{memberTok, "", `{"revertResize": null}`, 202, structs.OpRevertResize, "active"},
		{memberTok, "", `{"shelve": null}`, 202, structs.OpShelve, "shelved_offloaded"},
		{memberTok, "", `{"unshelve": null}`, 202, structs.OpUnshelve, "active"},
		{memberTok, "", `{"lock": null}`, 202, structs.OpLock, "active"},
		{memberTok, "", `{"unlock": null}`, 202, structs.OpUnlock, "active"},
		{adminTok, "2.1", `{"os-migrateLive": {"host": null, "block_migration": false, "disk_over_commit": "False"}}`, 202, structs.OpLiveMigrate, "active"},
	} {
		r := act(h, id, step.tok, step.version, step.body).expect(t, step.status)
		args := lastTask(h)
		if args == nil || args.Op != step.op || args.InstanceID != id {
			t.Fatalf("%s: task %+v", step.body, args)
		}
		if args.RequestID != r.header.Get("X-Openstack-Request-Id") || !strings.HasPrefix(args.RequestID, "req-") {
			t.Fatalf("%s: request id %q, header %q", step.body, args.RequestID, r.header.Get("X-Openstack-Request-Id"))
		}
		wantProject, wantUser, wantAdmin := "p-demo", "u-alice", false
		if step.tok == adminTok {
			wantProject, wantUser, wantAdmin = "p-admin", "u-admin", true
		}
		if args.ProjectID != wantProject || args.UserID != wantUser || args.Admin != wantAdmin {
			t.Fatalf("%s: caller %+v", step.body, args)
		}
		if got := h.inst(id).VMState; got != step.vmState {
			t.Fatalf("%s: vm_state %s, want %s", step.body, got, step.vmState)
		}
		if step.status == 204 && len(r.raw) != 0 {
			t.Fatalf("%s: body %s", step.body, r.raw)
		}
	}
	if args := lastTask(h); args.TargetHost != "" {
		t.Fatalf("live migration without a host: %+v", args)
	}

	// The resize carries the flavor; the view embeds the new one.
	h.setInst(id, func(i *structs.Instance) { i.TaskState = "" })
	act(h, id, memberTok, "", map[string]any{"resize": map[string]any{"flavorRef": h.srv.URL + "/compute/flavors/4"}}).expect(t, 202)
	if args := lastTask(h); args.FlavorID != "4" {
		t.Fatalf("resize args %+v", args)
	}
	s := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.47", nil).expect(t, 200).obj("server")
	if s["status"] != "VERIFY_RESIZE" || s["flavor"].(map[string]any)["original_name"] != "m1.large" {
		t.Fatalf("resized server %v", s)
	}
	act(h, id, memberTok, "", `{"confirmResize": null}`).expect(t, 204)

	// Rescue answers the password, generated or given (rescue images:
	// rescue_test.go).
	r := act(h, id, memberTok, "", `{"rescue": {"adminPass": "s3cret"}}`).expect(t, 200)
	sameShape(t, "rescue", r.body, sample(t, "os-rescue/server-rescue.json"))
	if r.body["adminPass"] != "s3cret" || lastTask(h).ImageID != "" {
		t.Fatalf("rescue %s %+v", r.raw, lastTask(h))
	}
	act(h, id, memberTok, "", `{"unrescue": null}`).expect(t, 202)
	h.setInst(id, func(i *structs.Instance) { i.VMState = "rescued" })
	act(h, id, memberTok, "", `{"unrescue": null}`).expect(t, 202)
	if r := act(h, id, memberTok, "", `{"rescue": {}}`).expect(t, 200); len(r.body["adminPass"].(string)) != 12 {
		t.Fatalf("generated rescue password %s", r.raw)
	}
	act(h, id, memberTok, "", `{"unrescue": null}`).expect(t, 202)

	// Shelve, offload (admin) and unshelve.
	h.setInst(id, func(i *structs.Instance) { i.VMState = "shelved" })
	act(h, id, adminTok, "", `{"shelveOffload": null}`).expect(t, 202)
	if got := h.inst(id).VMState; got != "shelved_offloaded" {
		t.Fatalf("offloaded: %s", got)
	}
	act(h, id, memberTok, "2.77", `{"unshelve": null}`).expect(t, 202)

	// Lock with a reason (2.73).
	act(h, id, memberTok, "2.73", `{"lock": {"locked_reason": "maintenance"}}`).expect(t, 202)
	if args := lastTask(h); args.Reason != "maintenance" {
		t.Fatalf("lock args %+v", args)
	}
	s = h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.73", nil).expect(t, 200).obj("server")
	if s["locked"] != true || s["locked_reason"] != "maintenance" {
		t.Fatalf("locked view %v", s)
	}
	if s := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.9", nil).obj("server"); s["locked"] != true {
		t.Fatalf("2.9 locked %v", s)
	} else if _, ok := s["locked_reason"]; ok {
		t.Fatal("locked_reason before 2.73")
	}
	act(h, id, memberTok, "", `{"unlock": null}`).expect(t, 202)
	s = h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.73", nil).expect(t, 200).obj("server")
	if s["locked"] != false || s["locked_reason"] != nil {
		t.Fatalf("unlocked view %v", s)
	}
	// Before 2.73 a lock's value is not looked at.
	act(h, id, memberTok, "2.72", `{"lock": {"locked_reason": "ignored"}}`).expect(t, 202)
	if args := lastTask(h); args.Reason != "" {
		t.Fatalf("2.72 lock args %+v", args)
	}
}

func TestServerActionValidation(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, _ := addHostAndServers(h)
	for _, tc := range []struct {
		version, body, msg string
	}{
		{"", `{"reboot": {"type": "GENTLE"}}`, "Invalid input for field/attribute type. Value: GENTLE. 'GENTLE' is not one of"},
		{"", `{"reboot": {}}`, "'type' is a required property"},
		{"", `{"reboot": null}`, "None is not of type 'object'"},
		{"2.73", `{"lock": {"locked_reason": ""}}`, "'' is too short"},
		{"2.73", `{"lock": {"locked_reason": "` + strings.Repeat("x", 256) + `"}}`, "is too long"},
		{"2.73", `{"lock": {"reason": "x"}}`, "'reason' was unexpected"},
		{"2.73", `{"lock": "now"}`, "'now' is not of type 'object', 'null'"},
		{"", `{"rescue": {"foo": 1}}`, "'foo' was unexpected"},
		{"", `{"rescue": {"adminPass": 1}}`, "1 is not of type 'string'"},
		{"", `{"rebuild": {}}`, "'imageRef' is a required property"},
		{"", `{"rebuild": {"imageRef": "cirros", "description": "x"}}`, "'description' was unexpected"},
		{"2.53", `{"rebuild": {"imageRef": "cirros", "key_name": null}}`, "'key_name' was unexpected"},
		{"2.56", `{"rebuild": {"imageRef": "cirros", "user_data": null}}`, "'user_data' was unexpected"},
		{"2.57", `{"rebuild": {"imageRef": "cirros", "personality": []}}`, "'personality' was unexpected"},
		{"2.62", `{"rebuild": {"imageRef": "cirros", "trusted_image_certificates": null}}`, "'trusted_image_certificates' was unexpected"},
		{"", `{"rebuild": {"imageRef": "cirros", "name": ""}}`, "'' is too short"},
		{"", `{"rebuild": {"imageRef": "cirros", "metadata": {"k": 1}}}`, "1 is not of type 'string'"},
		{"", `{"rebuild": {"imageRef": "cirros", "preserve_ephemeral": "maybe"}}`, "'maybe' is not one of"},
		{"", `{"resize": {}}`, "'flavorRef' is a required property"},
		{"", `{"resize": {"flavorRef": ""}}`, "'' is too short"},
		{"", `{"resize": {"flavorRef": "2", "OS-DCF:diskConfig": "BAD"}}`, "'BAD' is not one of ['AUTO', 'MANUAL']"},
		{"", `{"resize": {"flavorRef": "2", "extra": 1}}`, "'extra' was unexpected"},
		{"", `{"resize": {"flavorRef": "99"}}`, "Unable to locate requested flavor."},
		{"2.56", `{"migrate": {"host": "bad host"}}`, "does not match"},
		{"2.56", `{"migrate": {"foo": 1}}`, "'foo' was unexpected"},
		{"", `{"os-migrateLive": {"host": null, "block_migration": false}}`, "'disk_over_commit' is a required property"},
		{"", `{"os-migrateLive": {"host": null, "block_migration": "auto", "disk_over_commit": false}}`, "'auto' is not one of"},
		{"2.25", `{"os-migrateLive": {"host": null, "block_migration": "auto", "disk_over_commit": false}}`, "'disk_over_commit' was unexpected"},
		{"2.25", `{"os-migrateLive": {"block_migration": "auto"}}`, "'host' is a required property"},
		{"2.25", `{"os-migrateLive": {"host": null, "block_migration": "auto", "force": true}}`, "'force' was unexpected"},
		{"2.68", `{"os-migrateLive": {"host": null, "block_migration": "auto", "force": true}}`, "'force' was unexpected"},
		{"", `{"evacuate": {}}`, "'onSharedStorage' is a required property"},
		{"2.14", `{"evacuate": {"onSharedStorage": false}}`, "'onSharedStorage' was unexpected"},
		{"2.14", `{"evacuate": {"host": ""}}`, "'' is too short"},
		{"2.68", `{"evacuate": {"force": true}}`, "'force' was unexpected"},
		{"2.77", `{"unshelve": {}}`, "'availability_zone' is a required property"},
		{"2.77", `{"unshelve": {"availability_zone": "az1", "host": "compute-1"}}`, "'host' was unexpected"},
		{"2.91", `{"unshelve": {}}`, "{} is not valid under any of the given schemas"},
		{"2.91", `{"unshelve": {"foo": "x"}}`, "'foo' was unexpected"},
		{"2.91", `{"unshelve": {"host": 1}}`, "1 is not of type 'string'"},
	} {
		act(h, mine.ID, adminTok, tc.version, tc.body).fault(t, 400, "badRequest", tc.msg)
	}
	if n := callCount(h, "Instance.Task"); n != 0 {
		t.Fatalf("%d tasks started by invalid requests", n)
	}
	act(h, mine.ID, adminTok, "", `{"resize": {"flavorRef": "1"}}`).fault(t, 400, "badRequest", "Resize requires a flavor change.")
	// Bodies are validated before the server is looked up.
	act(h, "nope", memberTok, "", `{"reboot": {}}`).fault(t, 400, "badRequest", "'type' is a required property")
	act(h, "nope", memberTok, "", `{"reboot": {"type": "SOFT"}}`).fault(t, 404, "itemNotFound", "Instance nope could not be found.")
	// What a version does not look at passes.
	act(h, mine.ID, adminTok, "2.55", `{"migrate": {"foo": 1}}`).expect(t, 202)
	act(h, mine.ID, adminTok, "", `{"confirmResize": null}`).expect(t, 204)
	act(h, mine.ID, adminTok, "2.30", `{"os-migrateLive": {"host": "compute-1", "block_migration": "auto", "force": "yes"}}`).expect(t, 202)
	if args := lastTask(h); args.TargetHost != "compute-1" || args.Op != structs.OpLiveMigrate {
		t.Fatalf("live migration args %+v", args)
	}
	h.setInst(mine.ID, func(i *structs.Instance) { i.TaskState = "" })
	act(h, mine.ID, adminTok, "2.76", `{"unshelve": {"whatever": 1}}`).fault(t, 409, "conflictingRequest", "Cannot 'unshelve' instance "+mine.ID+" while it is in vm_state active")
}

func TestServerActionConflictsAndLocks(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, _ := addHostAndServers(h)
	id := mine.ID
	act(h, id, memberTok, "", `{"os-start": null}`).
		fault(t, 409, "conflictingRequest", "Cannot 'start' instance "+id+" while it is in vm_state active")
	act(h, id, memberTok, "", `{"unpause": null}`).fault(t, 409, "conflictingRequest", "Cannot 'unpause' instance")
	act(h, id, memberTok, "", `{"restore": null}`).fault(t, 409, "conflictingRequest", "Cannot 'restore' instance "+id+" while it is in vm_state active")
	act(h, id, memberTok, "", `{"confirmResize": null}`).
		fault(t, 409, "conflictingRequest", "Cannot 'confirmResize' instance "+id+" while it is in vm_state active")
	act(h, id, memberTok, "", `{"revertResize": null}`).fault(t, 409, "conflictingRequest", "Cannot 'revertResize' instance")
	act(h, id, memberTok, "", `{"shelveOffload": null}`).fault(t, 403, "forbidden", "os_compute_api:os-shelve:shelve_offload")
	act(h, id, adminTok, "", `{"shelveOffload": null}`).fault(t, 409, "conflictingRequest", "Cannot 'shelveOffload' instance")
	// The servers' operation names are Nova's action names in messages.
	h.setInst(id, func(i *structs.Instance) { i.VMState = "suspended" })
	act(h, id, adminTok, "2.25", `{"os-migrateLive": {"host": null, "block_migration": "auto"}}`).
		fault(t, 409, "conflictingRequest", "Cannot 'os-migrateLive' instance "+id+" while it is in vm_state suspended")
	act(h, id, memberTok, "", `{"reboot": {"type": "SOFT"}}`).fault(t, 409, "conflictingRequest", "Cannot 'reboot' instance")
	h.setInst(id, func(i *structs.Instance) { i.VMState, i.TaskState = "active", structs.TaskRebooting })
	act(h, id, memberTok, "", `{"os-stop": null}`).fault(t, 409, "conflictingRequest", "while it is in task_state rebooting")
	h.setInst(id, func(i *structs.Instance) { i.TaskState = "" })

	// A member's lock keeps the project's members out, not admins.
	act(h, id, memberTok, "", `{"lock": null}`).expect(t, 202)
	if i := h.inst(id); !i.Locked || i.LockedBy != "owner" {
		t.Fatalf("owner lock %+v", i)
	}
	act(h, id, memberTok, "", `{"os-stop": null}`).fault(t, 409, "conflictingRequest", "Instance "+id+" is locked")
	h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).fault(t, 409, "conflictingRequest", "Instance "+id+" is locked")
	act(h, id, memberTok, "", `{"forceDelete": null}`).fault(t, 409, "conflictingRequest", "is locked")
	act(h, id, adminTok, "", `{"os-stop": null}`).expect(t, 202)
	act(h, id, memberTok, "", `{"unlock": null}`).expect(t, 202)
	// An admin of another project takes the lock over; then only an
	// admin unlocks, and the owner's lock changes nothing.
	act(h, id, adminTok, "", `{"lock": null}`).expect(t, 202)
	if i := h.inst(id); i.LockedBy != "admin" {
		t.Fatalf("admin lock %+v", i)
	}
	act(h, id, memberTok, "", `{"unlock": null}`).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:os-lock-server:unlock:unlock_override to be performed.")
	tasks := callCount(h, "Instance.Task")
	act(h, id, memberTok, "2.73", `{"lock": {"locked_reason": "mine"}}`).expect(t, 202)
	if i := h.inst(id); i.LockedBy != "admin" || callCount(h, "Instance.Task") != tasks {
		t.Fatalf("owner re-lock changed the lock %+v", i)
	}
	act(h, id, adminTok, "", `{"unlock": null}`).expect(t, 202)
	if i := h.inst(id); i.Locked {
		t.Fatalf("still locked %+v", i)
	}
}

func TestServerActionPolicy(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, theirs := addHostAndServers(h)
	for _, tc := range []struct{ version, body, rule string }{
		{"", `{"migrate": null}`, "os_compute_api:os-migrate-server:migrate"},
		{"2.56", `{"migrate": {"host": "compute-1"}}`, "os_compute_api:os-migrate-server:migrate:host"},
		{"", `{"os-migrateLive": {"host": null, "block_migration": false, "disk_over_commit": false}}`, "os_compute_api:os-migrate-server:migrate_live"},
		{"2.14", `{"evacuate": {}}`, "os_compute_api:os-evacuate"},
		{"", `{"shelveOffload": null}`, "os_compute_api:os-shelve:shelve_offload"},
		{"2.91", `{"unshelve": {"host": "compute-1"}}`, "os_compute_api:os-shelve:unshelve_to_host"},
	} {
		act(h, mine.ID, memberTok, tc.version, tc.body).fault(t, 403, "forbidden", "Policy doesn't allow "+tc.rule+" to be performed.")
		// Another project's server is not found, whatever the policy.
		act(h, theirs.ID, memberTok, tc.version, tc.body).fault(t, 404, "itemNotFound", "Instance "+theirs.ID+" could not be found.")
	}
	for body, rule := range map[string]string{
		`{"pause": null}`:                "os_compute_api:os-pause-server:pause",
		`{"suspend": null}`:              "os_compute_api:os-suspend-server:suspend",
		`{"lock": null}`:                 "os_compute_api:os-lock-server:lock",
		`{"rescue": null}`:               "os_compute_api:os-rescue",
		`{"resize": {"flavorRef": "2"}}`: "os_compute_api:servers:resize",
		`{"rebuild": {"imageRef": "x"}}`: "os_compute_api:servers:rebuild",
		`{"shelve": null}`:               "os_compute_api:os-shelve:shelve",
		`{"forceDelete": null}`:          "os_compute_api:os-deferred-delete:force",
		`{"restore": null}`:              "os_compute_api:os-deferred-delete:restore",
		`{"confirmResize": null}`:        "os_compute_api:servers:confirm_resize",
	} {
		act(h, mine.ID, readerTok, "", body).fault(t, 403, "forbidden", rule)
		act(h, theirs.ID, memberTok, "", body).fault(t, 404, "itemNotFound", "could not be found")
	}
	if n := callCount(h, "Instance.Task"); n != 0 {
		t.Fatalf("%d tasks started by refused requests", n)
	}
	act(h, mine.ID, memberTok, "", `{"fly": null}`).fault(t, 400, "badRequest", "There is no such action: fly")
	// No guest service: Nova's answer for a driver that cannot.
	act(h, mine.ID, memberTok, "", `{"changePassword": {"adminPass": "x"}}`).fault(t, 501, "notImplemented", msgPasswordNotSupported)
	act(h, mine.ID, memberTok, "", `{"os-getConsoleOutput": {}}`).fault(t, 501, "notImplemented", msgNotSupported)
	act(h, theirs.ID, memberTok, "", `{"changePassword": {"adminPass": "x"}}`).fault(t, 404, "itemNotFound", "could not be found")
	act(h, mine.ID, memberTok, "", `{"os-stop": null, "os-start": null}`).fault(t, 400, "badRequest", "Malformed request body")
	act(h, mine.ID, memberTok, "", `{}`).fault(t, 400, "badRequest", "Malformed request body")
	// Admins act on any project's servers.
	act(h, theirs.ID, adminTok, "", `{"lock": null}`).expect(t, 202)
}

func TestServerRebuild(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, _ := addHostAndServers(h)
	path := "/compute/v2.1/servers/" + mine.ID
	// Samples up to 2.75 were taken as an admin, later ones as a member;
	// a server without ports has no security_groups in Nova.
	for _, tc := range []struct{ version, file, tok string }{
		{"2.1", "servers/server-action-rebuild-resp.json", memberTok},
		{"2.19", "servers/v2.19/server-action-rebuild-resp.json", memberTok},
		{"2.26", "servers/v2.26/server-action-rebuild-resp.json", memberTok},
		{"2.47", "servers/v2.47/server-action-rebuild-resp.json", memberTok},
		{"2.54", "servers/v2.54/server-action-rebuild-resp.json", memberTok},
		{"2.57", "servers/v2.57/server-action-rebuild-resp.json", memberTok},
		{"2.63", "servers/v2.63/server-action-rebuild-resp.json", memberTok},
		{"2.71", "servers/v2.71/server-action-rebuild-resp.json", memberTok},
		{"2.73", "servers/v2.73/server-action-rebuild-resp.json", memberTok},
		{"2.75", "servers/v2.75/server-action-rebuild-resp.json", adminTok},
		{"2.90", "servers/v2.90/server-action-rebuild-resp.json", memberTok},
		{"2.94", "servers/v2.94/server-action-rebuild-resp.json", memberTok},
		{"2.96", "servers/v2.96/server-action-rebuild-resp.json", memberTok},
		{"2.98", "servers/v2.98/server-action-rebuild-resp.json", memberTok},
		{"2.100", "servers/v2.100/server-action-rebuild-resp.json", memberTok},
	} {
		r := act(h, mine.ID, tc.tok, tc.version, map[string]any{"rebuild": map[string]any{"imageRef": "ubuntu", "adminPass": "seekr3t"}}).expect(t, 202)
		want := sample(t, tc.file)
		delete(want["server"].(map[string]any), "security_groups")
		// The sample's server was rebuilt with certificates.
		if _, ok := want["server"].(map[string]any)["trusted_image_certificates"]; ok {
			want["server"].(map[string]any)["trusted_image_certificates"] = nil
		}
		sameShape(t, tc.version+" rebuild", r.body, want)
		if loc := r.header.Get("Location"); loc != h.srv.URL+path {
			t.Fatalf("%s: Location %q", tc.version, loc)
		}
		if s := r.obj("server"); s["adminPass"] != "seekr3t" || s["image"].(map[string]any)["id"] != "ubuntu" {
			t.Fatalf("%s: rebuild answer %v", tc.version, s)
		}
		if args := lastTask(h); args.Op != structs.OpRebuild || args.ImageID != "ubuntu" {
			t.Fatalf("rebuild args %+v", args)
		}
	}
	// Name, description and metadata change with the rebuild.
	r := act(h, mine.ID, memberTok, "2.19", map[string]any{"rebuild": map[string]any{"imageRef": h.srv.URL + "/compute/images/debian",
		"name": "renamed", "description": "rebuilt", "metadata": map[string]any{"a": "b"}, "preserve_ephemeral": true,
		"OS-DCF:diskConfig": "AUTO"}}).expect(t, 202)
	if s := r.obj("server"); s["name"] != "renamed" || s["description"] != "rebuilt" || s["metadata"].(map[string]any)["a"] != "b" ||
		len(s["adminPass"].(string)) != 12 {
		t.Fatalf("rebuilt %v", s)
	}
	if i := h.inst(mine.ID); i.ImageID != "debian" || i.Name != "renamed" || len(i.Metadata) != 1 {
		t.Fatalf("rebuilt instance %+v", i)
	}
	// Access IPs are recorded (access_ips.go), and so is a key pair (2.54).
	h.rpc.keypairs["u-alice/other"] = &structs.KeyPair{Name: "other", UserID: "u-alice"}
	act(h, mine.ID, memberTok, "2.54", map[string]any{"rebuild": map[string]any{"imageRef": "x", "accessIPv4": "1.2.3.4"}}).expect(t, 202)
	if i := h.inst(mine.ID); i.AccessIPv4 != "1.2.3.4" {
		t.Fatalf("rebuild with accessIPv4: %q", i.AccessIPv4)
	}
	act(h, mine.ID, memberTok, "2.54", map[string]any{"rebuild": map[string]any{"imageRef": "x", "key_name": "missing"}}).
		fault(t, 400, "badRequest", "Invalid key_name provided.")
	act(h, mine.ID, memberTok, "2.54", map[string]any{"rebuild": map[string]any{"imageRef": "x", "key_name": "other"}}).expect(t, 202)
	if i := h.inst(mine.ID); i.KeyName != "other" {
		t.Fatalf("rebuild with key_name other: key %q", i.KeyName)
	}
	act(h, mine.ID, memberTok, "2.54", map[string]any{"rebuild": map[string]any{"imageRef": "x", "key_name": nil}}).expect(t, 202)
	if i := h.inst(mine.ID); i.KeyName != "" {
		t.Fatalf("rebuild with key_name null: key %q", i.KeyName)
	}
	r = act(h, mine.ID, memberTok, "2.90", map[string]any{"rebuild": map[string]any{"imageRef": "x", "hostname": "new"}}).expect(t, 202)
	if s := r.obj("server"); s["OS-EXT-SRV-ATTR:hostname"] != "new" || h.inst(mine.ID).Hostname != "new" {
		t.Fatalf("rebuild with a hostname: %v", s["OS-EXT-SRV-ATTR:hostname"])
	}
	act(h, mine.ID, memberTok, "", map[string]any{"rebuild": map[string]any{"imageRef": " "}}).fault(t, 400, "badRequest", "Missing imageRef attribute")
	// A refused rebuild changes nothing.
	h.setInst(mine.ID, func(i *structs.Instance) { i.VMState = structs.VMStatePaused })
	act(h, mine.ID, memberTok, "", map[string]any{"rebuild": map[string]any{"imageRef": "x", "name": "never"}}).
		fault(t, 409, "conflictingRequest", "Cannot 'rebuild' instance "+mine.ID+" while it is in vm_state paused")
	if i := h.inst(mine.ID); i.Name != "renamed" {
		t.Fatalf("a refused rebuild renamed the server: %+v", i)
	}
}

func TestServerEvacuate(t *testing.T) {
	h, _ := newActionHarness(t)
	host, mine, _ := addHostAndServers(h)
	h.rpc.addHost(&structs.Host{ID: "7b2d6c1f-4f30-4b9f-8c64-1f7e2d3c4b5a", Name: "compute-2", AZ: "az1", Status: structs.HostStatusUp,
		Enabled: true, HTTPAddr: "10.0.0.6:4646"})
	act(h, mine.ID, adminTok, "", `{"evacuate": {"onSharedStorage": false}}`).
		fault(t, 400, "badRequest", "Compute service of compute-1 is still in use.")
	h.rpc.mu.Lock()
	h.rpc.hosts[host.ID].Status = structs.HostStatusDown
	h.rpc.mu.Unlock()
	act(h, mine.ID, adminTok, "", `{"evacuate": {"onSharedStorage": true, "adminPass": "x"}}`).
		fault(t, 400, "badRequest", "admin password can't be changed on existing disk")
	r := act(h, mine.ID, adminTok, "", `{"evacuate": {"onSharedStorage": "False", "host": "compute-2"}}`).expect(t, 200)
	sameShape(t, "evacuate", r.body, sample(t, "os-evacuate/server-evacuate-resp.json"))
	if pw, _ := r.body["adminPass"].(string); len(pw) != 12 {
		t.Fatalf("evacuate password %s", r.raw)
	}
	if args := lastTask(h); args.Op != structs.OpEvacuate || args.TargetHost != "compute-2" || !args.Admin ||
		args.OnSharedStorage == nil || *args.OnSharedStorage {
		t.Fatalf("evacuate args %+v", args)
	}
	r = act(h, mine.ID, adminTok, "", `{"evacuate": {"onSharedStorage": true}}`).expect(t, 200)
	if r.body["adminPass"] != nil {
		t.Fatalf("shared storage evacuate %s", r.raw)
	}
	if args := lastTask(h); args.OnSharedStorage == nil || !*args.OnSharedStorage {
		t.Fatalf("shared storage evacuate args %+v", args)
	}
	act(h, mine.ID, adminTok, "2.14", `{"evacuate": {"host": "nope"}}`).fault(t, 404, "itemNotFound", "Compute host nope not found.")
	act(h, mine.ID, adminTok, "2.14", `{"evacuate": {"host": "compute-1"}}`).fault(t, 400, "badRequest", "The target host can't be the same one.")
	r = act(h, mine.ID, adminTok, "2.14", `{"evacuate": {"adminPass": "p"}}`).expect(t, 200)
	if len(r.raw) != 0 {
		t.Fatalf("2.14 evacuate body %s", r.raw)
	}
	if args := lastTask(h); args.OnSharedStorage != nil {
		t.Fatalf("2.14 evacuate says where the disk is (the destination finds out): %+v", args)
	}
	act(h, mine.ID, adminTok, "2.29", `{"evacuate": {"force": true}}`).expect(t, 200)
}

func TestServerUnshelve(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, _ := addHostAndServers(h)
	h.rpc.addHost(&structs.Host{ID: "7b2d6c1f-4f30-4b9f-8c64-1f7e2d3c4b5a", Name: "compute-2", AZ: "az2", Status: structs.HostStatusUp, Enabled: true})
	h.setInst(mine.ID, func(i *structs.Instance) { i.VMState = structs.VMStateShelved })
	act(h, mine.ID, memberTok, "2.77", `{"unshelve": {"availability_zone": "az1"}}`).
		fault(t, 409, "conflictingRequest", "The server status must be SHELVED_OFFLOADED.")
	offload := func() {
		h.setInst(mine.ID, func(i *structs.Instance) { i.VMState, i.HostID = structs.VMStateShelvedOffloaded, "" })
	}
	offload()
	act(h, mine.ID, memberTok, "2.77", `{"unshelve": {"availability_zone": "nope"}}`).
		fault(t, 400, "badRequest", "The requested availability zone is not available")
	act(h, mine.ID, memberTok, "2.77", `{"unshelve": {"availability_zone": "az2"}}`).fault(t, 501, "notImplemented", msgNotSupported)
	act(h, mine.ID, memberTok, "2.77", `{"unshelve": {"availability_zone": "az1"}}`).expect(t, 202)
	offload()
	act(h, mine.ID, memberTok, "2.91", `{"unshelve": {"availability_zone": null}}`).expect(t, 202)
	offload()
	act(h, mine.ID, adminTok, "2.91", `{"unshelve": {"host": "nope"}}`).fault(t, 400, "badRequest", "Compute host nope could not be found.")
	act(h, mine.ID, adminTok, "2.91", `{"unshelve": {"availability_zone": "az1", "host": "compute-2"}}`).
		fault(t, 409, "conflictingRequest", `Host "compute-2" is not in the availability zone "az1".`)
	act(h, mine.ID, adminTok, "2.91", `{"unshelve": {"availability_zone": "az2", "host": "compute-2"}}`).expect(t, 202)
	if args := lastTask(h); args.Op != structs.OpUnshelve || args.TargetHost != "compute-2" {
		t.Fatalf("unshelve args %+v", args)
	}
}

func TestServerDeleteForceDeleteRestore(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, theirs := addHostAndServers(h)
	r := h.req("DELETE", "/compute/v2.1/servers/"+mine.ID, memberTok, "", nil).expect(t, 204)
	args := h.rpc.lastCall("Instance.Delete").(*structs.InstanceDeleteRequest)
	if args.Force || args.ProjectID != "p-demo" || args.UserID != "u-alice" || args.Admin ||
		args.RequestID != r.header.Get("X-Openstack-Request-Id") || len(args.InstanceIDs) != 1 || args.InstanceIDs[0] != mine.ID {
		t.Fatalf("delete args %+v", args)
	}
	h.req("GET", "/compute/v2.1/servers/"+mine.ID, memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")

	// forceDelete (202) deletes for good; restore brings a soft-deleted
	// server back.
	soft := h.rpc.addInstance(&structs.Instance{Name: "soft", ProjectID: "p-demo", UserID: "u-alice", FlavorID: "1",
		Flavor: h.rpc.flavors["1"], ImageID: "cirros", VMState: structs.VMStateSoftDeleted, CreatedAt: 1, UpdatedAt: 2})
	s := h.req("GET", "/compute/v2.1/servers/"+soft.ID, memberTok, "", nil).expect(t, 200).obj("server")
	if s["status"] != "SOFT_DELETED" || s["OS-EXT-STS:vm_state"] != "soft-delete" {
		t.Fatalf("soft-deleted view %v", s)
	}
	act(h, soft.ID, memberTok, "", `{"restore": null}`).expect(t, 202)
	if args := lastTask(h); args.Op != structs.OpRestore {
		t.Fatalf("restore args %+v", args)
	}
	act(h, soft.ID, memberTok, "", `{"restore": null}`).fault(t, 409, "conflictingRequest", "Cannot 'restore' instance "+soft.ID+" while it is in vm_state active")
	r = act(h, soft.ID, memberTok, "", `{"forceDelete": ""}`).expect(t, 202)
	if args := h.rpc.lastCall("Instance.Delete").(*structs.InstanceDeleteRequest); !args.Force || args.RequestID != r.header.Get("X-Openstack-Request-Id") {
		t.Fatalf("forceDelete args %+v", args)
	}
	act(h, soft.ID, memberTok, "", `{"forceDelete": null}`).fault(t, 404, "itemNotFound", "could not be found")
	h.req("DELETE", "/compute/v2.1/servers/"+theirs.ID, memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("DELETE", "/compute/v2.1/servers/"+theirs.ID, adminTok, "", nil).expect(t, 204)
}

func TestServerListLocksAndSoftDeleted(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, _ := addHostAndServers(h)
	h.setInst(mine.ID, func(i *structs.Instance) { i.Locked, i.LockedBy, i.LockedReason = true, "admin", "audit" })
	soft := h.rpc.addInstance(&structs.Instance{Name: "soft", ProjectID: "p-demo", UserID: "u-alice", FlavorID: "1",
		Flavor: h.rpc.flavors["1"], ImageID: "cirros", VMState: structs.VMStateSoftDeleted, CreatedAt: 1, UpdatedAt: 2})
	ids := func(r *response) []string {
		var out []string
		for _, s := range r.list("servers") {
			out = append(out, s.(map[string]any)["id"].(string))
		}
		return out
	}
	if got := ids(h.req("GET", "/compute/v2.1/servers", memberTok, "", nil).expect(t, 200)); len(got) != 1 || got[0] != mine.ID {
		t.Fatalf("soft-deleted servers are listed: %v", got)
	}
	if got := ids(h.req("GET", "/compute/v2.1/servers?status=SOFT_DELETED", memberTok, "", nil).expect(t, 200)); len(got) != 1 || got[0] != soft.ID {
		t.Fatalf("status=SOFT_DELETED: %v", got)
	}
	if got := ids(h.req("GET", "/compute/v2.1/servers/detail?deleted=true&all_tenants=1", adminTok, "", nil).expect(t, 200)); !contains(got, soft.ID) {
		t.Fatalf("admin deleted=true: %v", got)
	}
	if got := ids(h.req("GET", "/compute/v2.1/servers/detail?locked=true", memberTok, "2.73", nil).expect(t, 200)); len(got) != 1 || got[0] != mine.ID {
		t.Fatalf("locked=true: %v", got)
	}
	if got := ids(h.req("GET", "/compute/v2.1/servers/detail?locked=false", memberTok, "2.73", nil).expect(t, 200)); len(got) != 0 {
		t.Fatalf("locked=false: %v", got)
	}
	if got := ids(h.req("GET", "/compute/v2.1/servers?locked_by=admin&all_tenants=1", adminTok, "", nil).expect(t, 200)); len(got) != 1 {
		t.Fatalf("locked_by=admin: %v", got)
	}
	r := h.req("GET", "/compute/v2.1/servers/detail", memberTok, "2.73", nil).expect(t, 200)
	if s := r.list("servers")[0].(map[string]any); s["locked"] != true || s["locked_reason"] != "audit" {
		t.Fatalf("detail %v", s)
	}
}
