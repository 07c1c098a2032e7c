package nova

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// sameItemKeys compares each item's keys with the sample item that has
// links exactly when it does (Nova links live migrations under way
// only).
func sameItemKeys(t *testing.T, what string, got []any, sampleItems []any) {
	t.Helper()
	for _, g := range got {
		gm := g.(map[string]any)
		_, hasLinks := gm["links"]
		found := false
		for _, w := range sampleItems {
			wm := w.(map[string]any)
			if _, ok := wm["links"]; ok == hasLinks {
				sameShape(t, what, gm, wm)
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("%s: no sample item like %v", what, gm)
		}
	}
}

func seedMigrations(h *harness, f *taskFake) (host2 *structs.Host, mine, theirs *structs.Instance, ms []*structs.Migration) {
	host, mine, theirs := addHostAndServers(h)
	host2 = h.rpc.addHost(&structs.Host{ID: "7b2d6c1f-4f30-4b9f-8c64-1f7e2d3c4b5a", Name: "compute-2", AZ: "az1",
		Status: structs.HostStatusUp, Enabled: true, HTTPAddr: "10.0.0.6:4646"})
	h.rpc.flavors["custom"] = &structs.Flavor{ID: "custom", Name: "custom", VCPUs: 1, MemoryMB: 64, IsPublic: true, CreateIndex: 42}
	t0 := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC).UnixNano()
	ms = []*structs.Migration{
		{ID: 7, UUID: "11111111-1111-4111-8111-111111111111", InstanceID: mine.ID, ProjectID: "p-demo", UserID: "u-alice",
			Type: structs.MigrationTypeResize, Status: structs.MigrationFinished, SourceHostID: host.ID, SourceHost: host.Name,
			DestHostID: host2.ID, DestHost: host2.Name, OldFlavorID: "1", NewFlavorID: "2", CreatedAt: t0, UpdatedAt: t0},
		{ID: 9, UUID: "22222222-2222-4222-8222-222222222222", InstanceID: mine.ID, ProjectID: "p-demo", UserID: "u-alice",
			Type: structs.MigrationTypeLive, Status: structs.MigrationMigrating, SourceHostID: host2.ID, SourceHost: host2.Name,
			DestHostID: host.ID, DestHost: host.Name, OldFlavorID: "2", NewFlavorID: "2", CreatedAt: t0 + int64(time.Hour),
			UpdatedAt: t0 + int64(time.Hour)},
		{ID: 11, UUID: "33333333-3333-4333-8333-333333333333", InstanceID: theirs.ID, ProjectID: "p-other", UserID: "u-bob",
			Type: structs.MigrationTypeLive, Status: structs.MigrationCompleted, SourceHostID: host.ID, SourceHost: host.Name,
			DestHostID: "gone", DestHost: "old-host", OldFlavorID: "custom", NewFlavorID: "deleted", CreatedAt: t0 + 2*int64(time.Hour),
			UpdatedAt: t0 + 2*int64(time.Hour)},
	}
	f.migrations = ms
	return host2, mine, theirs, ms
}

func migrationIDs(r *response) []float64 {
	var ids []float64
	for _, m := range r.list("migrations") {
		ids = append(ids, m.(map[string]any)["id"].(float64))
	}
	return ids
}

func sameIDs(got []float64, want ...float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestMigrationsList(t *testing.T) {
	h, f := newActionHarness(t)
	_, mine, theirs, ms := seedMigrations(h, f)
	h.req("GET", "/compute/v2.1/os-migrations", memberTok, "", nil).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:os-migrations:index to be performed.")

	r := h.req("GET", "/compute/v2.1/os-migrations", adminTok, "", nil).expect(t, 200)
	sameShape(t, "2.1 migrations", r.body, sample(t, "os-migrations/migrations-get.json"))
	if ids := migrationIDs(r); !sameIDs(ids, 7, 9, 11) {
		t.Fatalf("2.1 order %v", ids)
	}
	m := r.list("migrations")[0].(map[string]any)
	for k, want := range map[string]any{
		"created_at": "2026-11-29T21:00:00.000000", "dest_compute": "compute-2", "dest_host": "10.0.0.6", "dest_node": "compute-2",
		"instance_uuid": mine.ID, "new_instance_type_id": 2.0, "old_instance_type_id": 1.0, "source_compute": "compute-1",
		"source_node": "compute-1", "status": "finished",
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	third := r.list("migrations")[2].(map[string]any)
	if third["old_instance_type_id"] != 42.0 || third["new_instance_type_id"] != nil || third["dest_host"] != nil {
		t.Fatalf("flavor and host references %v", third)
	}
	// Before 2.59 unknown parameters are ignored.
	h.req("GET", "/compute/v2.1/os-migrations?limit=1&foo=bar", adminTok, "", nil).expect(t, 200)

	r = h.req("GET", "/compute/v2.1/os-migrations", adminTok, "2.23", nil).expect(t, 200)
	sameItemKeys(t, "2.23 migrations", r.list("migrations"), sample(t, "os-migrations/v2.23/migrations-get.json")["migrations"].([]any))
	live := r.list("migrations")[1].(map[string]any)
	if live["status"] != "running" || live["migration_type"] != "live-migration" {
		t.Fatalf("live migration under way %v", live)
	}
	if href := live["links"].([]any)[0].(map[string]any)["href"]; href != h.srv.URL+"/compute/v2.1/servers/"+mine.ID+"/migrations/9" {
		t.Fatalf("link %v", href)
	}
	if _, ok := r.list("migrations")[2].(map[string]any)["links"]; ok {
		t.Fatal("a finished live migration has links")
	}

	for _, v := range []string{"2.59", "2.80"} {
		r = h.req("GET", "/compute/v2.1/os-migrations", adminTok, v, nil).expect(t, 200)
		sameItemKeys(t, v+" migrations", r.list("migrations"), sample(t, "os-migrations/v"+v+"/migrations-get.json")["migrations"].([]any))
		if ids := migrationIDs(r); !sameIDs(ids, 11, 9, 7) {
			t.Fatalf("%s order %v", v, ids)
		}
	}
	if m := r.list("migrations")[0].(map[string]any); m["user_id"] != "u-bob" || m["project_id"] != "p-other" || m["uuid"] != ms[2].UUID {
		t.Fatalf("2.80 fields %v", m)
	}
	r = h.req("GET", "/compute/v2.1/os-migrations?limit=1", adminTok, "2.80", nil).expect(t, 200)
	sameShape(t, "2.80 limit", r.body, sample(t, "os-migrations/v2.80/migrations-get-with-limit.json"))
	next := r.body["migrations_links"].([]any)[0].(map[string]any)["href"].(string)
	if !strings.HasPrefix(next, h.srv.URL+"/compute/v2.1/os-migrations?") || !strings.Contains(next, "marker="+ms[2].UUID) {
		t.Fatalf("next %s", next)
	}
	if ids := migrationIDs(h.req("GET", "/compute/v2.1/os-migrations?marker="+ms[2].UUID, adminTok, "2.59", nil).expect(t, 200)); !sameIDs(ids, 9, 7) {
		t.Fatalf("after marker %v", ids)
	}
	h.req("GET", "/compute/v2.1/os-migrations?marker=nope", adminTok, "2.59", nil).fault(t, 400, "badRequest", "Marker nope could not be found.")
	h.req("GET", "/compute/v2.1/os-migrations?foo=bar", adminTok, "2.59", nil).fault(t, 400, "badRequest", "'foo' was unexpected")
	h.req("GET", "/compute/v2.1/os-migrations?user_id=u-bob", adminTok, "2.79", nil).fault(t, 400, "badRequest", "'user_id' was unexpected")
	since := url.QueryEscape("2026-11-29T21:30:00Z")
	if ids := migrationIDs(h.req("GET", "/compute/v2.1/os-migrations?changes-since="+since, adminTok, "2.59", nil).expect(t, 200)); !sameIDs(ids, 11, 9) {
		t.Fatalf("changes-since %v", ids)
	}
	if ids := migrationIDs(h.req("GET", "/compute/v2.1/os-migrations?changes-before="+since, adminTok, "2.66", nil).expect(t, 200)); !sameIDs(ids, 7) {
		t.Fatalf("changes-before %v", ids)
	}
	for query, want := range map[string][]float64{
		"status=running":                 {9},
		"migration_type=resize":          {7},
		"host=compute-2":                 {7, 9},
		"source_compute=compute-1":       {7, 11},
		"instance_uuid=" + theirs.ID:     {11},
		"instance_uuid=" + mine.ID:       {7, 9},
		"status=finished&host=compute-1": {7},
		"hidden=0":                       {7, 9, 11},
	} {
		if ids := migrationIDs(h.req("GET", "/compute/v2.1/os-migrations?"+query, adminTok, "", nil).expect(t, 200)); !sameIDs(ids, want...) {
			t.Errorf("%s: %v, want %v", query, ids, want)
		}
	}
	if ids := migrationIDs(h.req("GET", "/compute/v2.1/os-migrations?user_id=u-bob", adminTok, "2.80", nil).expect(t, 200)); !sameIDs(ids, 11) {
		t.Fatalf("user_id %v", ids)
	}
	if ids := migrationIDs(h.req("GET", "/compute/v2.1/os-migrations?project_id=p-demo", adminTok, "2.80", nil).expect(t, 200)); !sameIDs(ids, 9, 7) {
		t.Fatalf("project_id %v", ids)
	}
}

func TestServerMigrations(t *testing.T) {
	h, f := newActionHarness(t)
	_, mine, theirs, _ := seedMigrations(h, f)
	base := "/compute/v2.1/servers/" + mine.ID + "/migrations"
	h.req("GET", base, adminTok, "2.22", nil).fault(t, 404, "itemNotFound", msgNotFound)
	h.req("GET", base, memberTok, "2.23", nil).fault(t, 403, "forbidden", "os_compute_api:servers:migrations:index")
	h.req("GET", "/compute/v2.1/servers/"+theirs.ID+"/migrations", memberTok, "2.23", nil).fault(t, 404, "itemNotFound", "could not be found")
	for _, v := range []string{"2.23", "2.59", "2.80"} {
		r := h.req("GET", base, adminTok, v, nil).expect(t, 200)
		sameShape(t, v+" server migrations", r.body, sample(t, "server-migrations/v"+v+"/migrations-index.json"))
		if ids := migrationIDs(r); !sameIDs(ids, 9) {
			t.Fatalf("%s: in-progress live migrations %v", v, ids)
		}
		r = h.req("GET", base+"/9", adminTok, v, nil).expect(t, 200)
		sameShape(t, v+" server migration", r.body, sample(t, "server-migrations/v"+v+"/migrations-get.json"))
		if m := r.obj("migration"); m["server_uuid"] != mine.ID || m["status"] != "running" || m["dest_compute"] != "compute-1" {
			t.Fatalf("%s: migration %v", v, m)
		}
	}
	h.req("GET", base+"/9", memberTok, "2.23", nil).fault(t, 403, "forbidden", "os_compute_api:servers:migrations:show")
	h.req("GET", base+"/7", adminTok, "2.23", nil).fault(t, 404, "itemNotFound", "Migration 7 for server "+mine.ID+" is not live-migration.")
	h.req("GET", base+"/11", adminTok, "2.23", nil).fault(t, 404, "itemNotFound", "In-progress live migration 11 is not found for server "+mine.ID+".")
	h.req("GET", base+"/x", adminTok, "2.23", nil).fault(t, 404, "itemNotFound", "In-progress live migration x is not found")
	f.migrations[1].Status = structs.MigrationCompleted
	h.req("GET", base+"/9", adminTok, "2.23", nil).fault(t, 404, "itemNotFound", "Live migration 9 for server "+mine.ID+" is not in progress.")
	if l := h.req("GET", base, adminTok, "2.23", nil).expect(t, 200).list("migrations"); len(l) != 0 {
		t.Fatalf("finished live migration listed: %v", l)
	}
	f.migrations[1].Status = structs.MigrationMigrating

	// Aborting and forcing are not supported: Nova's checks, then 409.
	// Before 2.24 there is no abort (the router answers 405 while GET
	// exists at that version, where Nova answers 404).
	if r := h.req("DELETE", base+"/9", adminTok, "2.23", nil); r.status != 404 && r.status != 405 {
		t.Fatalf("abort at 2.23: %d %s", r.status, r.raw)
	}
	h.req("DELETE", base+"/9", adminTok, "2.24", nil).
		fault(t, 409, "conflictingRequest", "Cannot 'abort live migration' instance "+mine.ID+" while it is in task_state None")
	h.setInst(mine.ID, func(i *structs.Instance) { i.TaskState = structs.TaskMigrating })
	h.req("DELETE", base+"/9", memberTok, "2.24", nil).fault(t, 403, "forbidden", "os_compute_api:servers:migrations:delete")
	h.req("DELETE", base+"/9", adminTok, "2.24", nil).fault(t, 409, "conflictingRequest", "Aborting live migration 9 of server "+mine.ID+" is not supported.")
	h.req("DELETE", base+"/7", adminTok, "2.24", nil).
		fault(t, 400, "badRequest", "Migration 7 state of instance "+mine.ID+" is finished. Cannot abort live migration while the migration is in this state.")
	h.req("DELETE", base+"/99", adminTok, "2.24", nil).fault(t, 404, "itemNotFound", "Migration 99 not found for instance "+mine.ID)

	h.req("POST", base+"/9/action", adminTok, "2.21", `{"force_complete": null}`).fault(t, 404, "itemNotFound", msgNotFound)
	h.req("POST", base+"/9/action", adminTok, "2.22", `{"force_complete": {}}`).fault(t, 400, "badRequest", "is not of type 'null'")
	h.req("POST", base+"/9/action", adminTok, "2.22", `{"finish": null}`).fault(t, 400, "badRequest", "There is no such action: finish")
	h.req("POST", base+"/9/action", memberTok, "2.22", `{"force_complete": null}`).fault(t, 403, "forbidden", "os_compute_api:servers:migrations:force_complete")
	h.req("POST", base+"/9/action", adminTok, "2.22", `{"force_complete": null}`).
		fault(t, 409, "conflictingRequest", "Forcing live migration 9 of server "+mine.ID+" to complete is not supported.")
	h.req("POST", base+"/7/action", adminTok, "2.22", `{"force_complete": null}`).fault(t, 400, "badRequest", "Cannot force complete")
	h.req("POST", base+"/99/action", adminTok, "2.22", `{"force_complete": null}`).fault(t, 400, "badRequest", "Migration 99 not found")
}
