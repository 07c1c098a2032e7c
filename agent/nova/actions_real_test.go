package nova

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/diskxfer/diskxfertest"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// newRealHarness serves the API over a real single server with fake
// hypervisor agents on the named hosts, all in-process: the actions
// really happen. Deletes are soft (reclaim after an hour), so restore
// and forceDelete can be driven too.
func newRealHarness(t *testing.T, hosts ...string) (*harness, *server.Server) {
	t.Helper()
	return newRealHarnessWith(t, nil, hosts...)
}

// newRealHarnessWith is newRealHarness with the server's configuration
// changed by tweak first (nil for none).
func newRealHarnessWith(t *testing.T, tweak func(*server.Config), hosts ...string) (*harness, *server.Server) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a server and hypervisor agents")
	}
	cfg := &server.Config{
		NodeName: "nova-actions", NodeID: "00000000-0000-0000-0000-00000000a001", DataDir: t.TempDir(),
		BindAddr: "127.0.0.1", BootstrapExpect: 1, GossipFast: true, HeartbeatTTL: 2 * time.Second,
		ReclaimInstanceInterval: time.Hour, Logger: hclog.NewNullLogger(),
	}
	if tweak != nil {
		tweak(cfg)
	}
	s, err := server.NewServer(cfg)
	if err != nil {
		t.Fatalf("start server: %v", err)
	}
	t.Cleanup(func() { _ = s.Shutdown() })
	waitFor(t, "a leader", func() error {
		if !s.IsLeader() {
			return fmt.Errorf("not the leader yet")
		}
		return nil
	})
	if err := s.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range hosts {
		const latency = 100 * time.Millisecond
		drv := fake.New(fake.Config{HostName: name, SpawnLatency: latency, DestroyLatency: latency / 2, PowerLatency: latency,
			MigrateLatency: latency})
		export := diskxfertest.Serve(t)
		a, err := client.New(client.Config{DataDir: t.TempDir(), NodeName: name, Driver: drv, RPC: s,
			Logger: hclog.NewNullLogger(), ReportInterval: 20 * time.Millisecond, PowerSyncInterval: 500 * time.Millisecond,
			DiskExportURL: export.URL, ImageUploader: uploaderTo(s)})
		if err != nil {
			t.Fatal(err)
		}
		export.Set(a)
		go func() { _ = a.Start() }()
		t.Cleanup(func() { _ = a.Shutdown() })
	}
	waitFor(t, "hosts up", func() error {
		var out structs.HostListResponse
		if err := s.RPC("Host.List", &structs.HostListRequest{}, &out); err != nil {
			return err
		}
		up := 0
		for _, h := range out.Hosts {
			if h.Up() {
				up++
			}
		}
		if up != len(hosts) {
			return fmt.Errorf("%d of %d hosts up", up, len(hosts))
		}
		return nil
	})
	api := New(Config{RPC: s, Verifier: testTokens()})
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", api.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &harness{t: t, srv: srv, api: api}, s
}

func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// waitServer waits until the server shows status with no task, and
// returns its admin view at 2.73.
func waitServer(h *harness, id, status string) map[string]any {
	h.t.Helper()
	var s map[string]any
	waitFor(h.t, id+" "+status, func() error {
		r := h.req("GET", "/compute/v2.1/servers/"+id, adminTok, "2.73", nil)
		if r.status != 200 {
			return fmt.Errorf("GET: %d %s", r.status, r.raw)
		}
		s = r.obj("server")
		if s["status"] == "ERROR" && status != "ERROR" {
			return fmt.Errorf("ERROR: %v", s["fault"])
		}
		if s["status"] != status || s["OS-EXT-STS:task_state"] != nil {
			return fmt.Errorf("status %v task_state %v", s["status"], s["OS-EXT-STS:task_state"])
		}
		return nil
	})
	return s
}

// waitMigration waits until the server's newest migration has status.
func waitMigration(h *harness, id, status string) {
	h.t.Helper()
	waitFor(h.t, "migration "+status, func() error {
		r := h.req("GET", "/compute/v2.1/os-migrations?instance_uuid="+id, adminTok, "2.59", nil)
		l := r.list("migrations")
		if len(l) == 0 {
			return fmt.Errorf("no migrations: %s", r.raw)
		}
		if got := l[0].(map[string]any)["status"]; got != status {
			return fmt.Errorf("status %v", got)
		}
		return nil
	})
}

func TestServerActionsAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1", "hv-2")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	requestIDs := map[string]string{}
	do := func(tok, version, body string, status int, want string) *response {
		t.Helper()
		r := act(h, id, tok, version, body).expect(t, status)
		requestIDs[body] = r.header.Get("X-Openstack-Request-Id")
		if want != "" {
			waitServer(h, id, want)
		}
		return r
	}

	do(memberTok, "", `{"pause": null}`, 202, "PAUSED")
	act(h, id, memberTok, "", `{"pause": null}`).fault(t, 409, "conflictingRequest", "Cannot 'pause' instance "+id+" while it is in vm_state paused")
	do(memberTok, "", `{"unpause": null}`, 202, "ACTIVE")
	do(memberTok, "", `{"suspend": null}`, 202, "SUSPENDED")
	do(memberTok, "", `{"resume": null}`, 202, "ACTIVE")
	do(memberTok, "", `{"os-stop": null}`, 202, "SHUTOFF")
	do(memberTok, "", `{"os-start": null}`, 202, "ACTIVE")
	do(memberTok, "", `{"reboot": {"type": "HARD"}}`, 202, "ACTIVE")

	// A member's lock keeps members out; the owner unlocks.
	do(memberTok, "2.73", `{"lock": {"locked_reason": "testing"}}`, 202, "")
	if s := waitServer(h, id, "ACTIVE"); s["locked"] != true || s["locked_reason"] != "testing" {
		t.Fatalf("locked view %v", s)
	}
	act(h, id, memberTok, "", `{"os-stop": null}`).fault(t, 409, "conflictingRequest", "Instance "+id+" is locked")
	do(memberTok, "", `{"unlock": null}`, 202, "")
	if s := waitServer(h, id, "ACTIVE"); s["locked"] != false || s["locked_reason"] != nil {
		t.Fatalf("unlocked view %v", s)
	}

	r = do(memberTok, "", `{"rescue": null}`, 200, "RESCUE")
	if pw, _ := r.body["adminPass"].(string); pw == "" {
		t.Fatalf("rescue answer %s", r.raw)
	}
	do(memberTok, "", `{"unrescue": null}`, 202, "ACTIVE")

	// Resize then confirm: the new flavor stays.
	do(memberTok, "", `{"resize": {"flavorRef": "2"}}`, 202, "VERIFY_RESIZE")
	s := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.47", nil).expect(t, 200).obj("server")
	if s["flavor"].(map[string]any)["original_name"] != "m1.small" {
		t.Fatalf("resized flavor %v", s["flavor"])
	}
	do(memberTok, "", `{"confirmResize": null}`, 204, "ACTIVE")
	// A confirmed migration is "confirming" until the source's copy is
	// gone. (The servers only finish it when no other task runs on the
	// instance by then, so the test waits for it.)
	waitMigration(h, id, "confirmed")
	// Resize then revert: the old flavor comes back.
	do(memberTok, "", `{"resize": {"flavorRef": "3"}}`, 202, "VERIFY_RESIZE")
	do(memberTok, "", `{"revertResize": null}`, 202, "ACTIVE")
	s = h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.47", nil).expect(t, 200).obj("server")
	if s["flavor"].(map[string]any)["original_name"] != "m1.small" {
		t.Fatalf("reverted flavor %v", s["flavor"])
	}
	act(h, id, memberTok, "", `{"revertResize": null}`).fault(t, 409, "conflictingRequest", "Cannot 'revertResize' instance")
	// Disks never shrink: refused with Nova's words before anything starts.
	act(h, id, memberTok, "", `{"resize": {"flavorRef": "1"}}`).
		fault(t, 400, "badRequest", "Server disk was unable to be resized because: Unable to resize disk down.")
	waitServer(h, id, "ACTIVE")

	// Moves are for admins; the server changes host each time.
	act(h, id, memberTok, "", `{"migrate": null}`).fault(t, 403, "forbidden", "os_compute_api:os-migrate-server:migrate")
	act(h, id, memberTok, "2.25", `{"os-migrateLive": {"host": null, "block_migration": "auto"}}`).
		fault(t, 403, "forbidden", "os_compute_api:os-migrate-server:migrate_live")
	act(h, id, memberTok, "2.14", `{"evacuate": {}}`).fault(t, 403, "forbidden", "os_compute_api:os-evacuate")
	h.req("GET", "/compute/v2.1/os-migrations", memberTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-migrations:index")
	host := waitServer(h, id, "ACTIVE")["OS-EXT-SRV-ATTR:host"]
	act(h, id, adminTok, "2.14", `{"evacuate": {}}`).fault(t, 400, "badRequest", "is still in use")
	do(adminTok, "", `{"migrate": null}`, 202, "VERIFY_RESIZE")
	do(adminTok, "", `{"confirmResize": null}`, 204, "ACTIVE")
	waitMigration(h, id, "confirmed")
	moved := waitServer(h, id, "ACTIVE")["OS-EXT-SRV-ATTR:host"]
	if moved == host {
		t.Fatalf("migrate left the server on %v", host)
	}
	do(adminTok, "2.25", `{"os-migrateLive": {"host": null, "block_migration": "auto"}}`, 202, "ACTIVE")
	if back := waitServer(h, id, "ACTIVE")["OS-EXT-SRV-ATTR:host"]; back != host {
		t.Fatalf("live migration to %v, want %v", back, host)
	}
	r = h.req("GET", "/compute/v2.1/os-migrations?instance_uuid="+id, adminTok, "2.59", nil).expect(t, 200)
	var got []string
	for _, m := range r.list("migrations") {
		mm := m.(map[string]any)
		got = append(got, mm["migration_type"].(string)+"/"+mm["status"].(string))
	}
	want := []string{"live-migration/completed", "migration/confirmed", "resize/reverted", "resize/confirmed"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("migrations %v, want %v", got, want)
	}
	if l := h.req("GET", "/compute/v2.1/servers/"+id+"/migrations", adminTok, "2.23", nil).expect(t, 200).list("migrations"); len(l) != 0 {
		t.Fatalf("live migrations under way %v", l)
	}

	// Shelve (offloaded at once by default) and unshelve.
	do(memberTok, "", `{"shelve": null}`, 202, "SHELVED_OFFLOADED")
	do(memberTok, "", `{"unshelve": null}`, 202, "ACTIVE")

	r = do(memberTok, "", `{"rebuild": {"imageRef": "cirros-2", "name": "vm-2"}}`, 202, "")
	if sv := r.obj("server"); sv["name"] != "vm-2" || sv["adminPass"] == nil {
		t.Fatalf("rebuild answer %v", sv)
	}
	if s := waitServer(h, id, "ACTIVE"); s["image"].(map[string]any)["id"] != "cirros-2" || s["name"] != "vm-2" {
		t.Fatalf("rebuilt server %v", s)
	}

	// Every action is recorded under the request id that started it.
	r = h.req("GET", "/compute/v2.1/servers/"+id+"/os-instance-actions", memberTok, "2.58", nil).expect(t, 200)
	byRequest := map[string]string{}
	for _, a := range r.list("instanceActions") {
		am := a.(map[string]any)
		byRequest[am["request_id"].(string)] = am["action"].(string)
	}
	for body, rid := range requestIDs {
		if byRequest[rid] == "" {
			t.Errorf("no instance action for %s (%s): %v", body, rid, byRequest)
		}
	}
	if last := r.list("instanceActions")[0].(map[string]any); last["action"] != "rebuild" {
		t.Fatalf("newest action %v", last)
	}
	rid := requestIDs[`{"pause": null}`]
	r = h.req("GET", "/compute/v2.1/servers/"+id+"/os-instance-actions/"+rid, memberTok, "2.62", nil).expect(t, 200)
	a := r.obj("instanceAction")
	evs, _ := a["events"].([]any)
	if a["action"] != "pause" || len(evs) == 0 || evs[0].(map[string]any)["result"] != "Success" || evs[0].(map[string]any)["hostId"] == "" {
		t.Fatalf("pause action %s", r.raw)
	}

	// Soft delete, restore, and force delete.
	h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, 204)
	waitServer(h, id, "SOFT_DELETED")
	if l := h.req("GET", "/compute/v2.1/servers", memberTok, "", nil).expect(t, 200).list("servers"); len(l) != 0 {
		t.Fatalf("soft-deleted server listed: %v", l)
	}
	if l := h.req("GET", "/compute/v2.1/servers?status=SOFT_DELETED", memberTok, "", nil).expect(t, 200).list("servers"); len(l) != 1 {
		t.Fatalf("status=SOFT_DELETED: %v", l)
	}
	do(memberTok, "", `{"restore": null}`, 202, "ACTIVE")
	h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, 204)
	waitServer(h, id, "SOFT_DELETED")
	act(h, id, memberTok, "", `{"forceDelete": null}`).expect(t, 202)
	waitFor(t, "server gone", func() error {
		if r := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "", nil); r.status != 404 {
			return fmt.Errorf("status %d", r.status)
		}
		return nil
	})
	// Its actions outlive it (2.21).
	l := h.req("GET", "/compute/v2.1/servers/"+id+"/os-instance-actions", memberTok, "2.21", nil).expect(t, 200).list("instanceActions")
	if len(l) < len(requestIDs) {
		t.Fatalf("actions of the deleted server: %d", len(l))
	}
}
