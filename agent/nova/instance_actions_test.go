package nova

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

func TestInstanceActionsListAndShow(t *testing.T) {
	h, f := newActionHarness(t)
	host, mine, theirs := addHostAndServers(h)
	t0 := time.Date(2026, 11, 29, 21, 0, 0, 0, time.UTC).UnixNano()
	f.addAction(mine, "req-create", "create", "u-alice", host.ID, t0, "")
	f.addAction(mine, "req-stop", "stop", "u-alice", host.ID, t0+int64(time.Minute), "the guest would not stop")
	f.addAction(theirs, "req-theirs", "create", "u-bob", "", t0, "")
	base := "/compute/v2.1/servers/" + mine.ID + "/os-instance-actions"

	r := h.req("GET", base, memberTok, "", nil).expect(t, 200)
	sameShape(t, "2.1 list", r.body, sample(t, "os-instance-actions/instance-actions-list-resp.json"))
	l := r.list("instanceActions")
	first, second := l[0].(map[string]any), l[1].(map[string]any)
	if len(l) != 2 || first["request_id"] != "req-stop" || second["request_id"] != "req-create" {
		t.Fatalf("newest first: %v", l)
	}
	if first["message"] != "Error" || second["message"] != nil || first["action"] != "stop" || first["instance_uuid"] != mine.ID ||
		first["project_id"] != "p-demo" || first["user_id"] != "u-alice" || second["start_time"] != "2026-11-29T21:00:00.000000" {
		t.Fatalf("actions %v", l)
	}
	if _, ok := first["updated_at"]; ok {
		t.Fatal("updated_at before 2.58")
	}
	if _, ok := r.body["links"]; ok {
		t.Fatal("links before 2.58")
	}
	// Unknown parameters are fine before 2.58, refused from it.
	h.req("GET", base+"?foo=1", memberTok, "2.57", nil).expect(t, 200)
	h.req("GET", base+"?foo=1", memberTok, "2.58", nil).fault(t, 400, "badRequest", "Additional properties are not allowed ('foo' was unexpected)")

	for _, v := range []string{"2.58", "2.62", "2.84"} {
		r = h.req("GET", base, memberTok, v, nil).expect(t, 200)
		sameShape(t, v+" list", r.body, sample(t, "os-instance-actions/v"+v+"/instance-actions-list-resp.json"))
	}
	if u := r.list("instanceActions")[0].(map[string]any)["updated_at"]; u != "2026-11-29T21:01:01.000000" {
		t.Fatalf("updated_at %v", u)
	}
	r = h.req("GET", base+"?limit=1", memberTok, "2.58", nil).expect(t, 200)
	sameShape(t, "2.58 limit", r.body, sample(t, "os-instance-actions/v2.58/instance-actions-list-with-limit-resp.json"))
	next := r.body["links"].([]any)[0].(map[string]any)["href"].(string)
	if !strings.HasPrefix(next, h.srv.URL+base+"?") || !strings.Contains(next, "marker=req-stop") || !strings.Contains(next, "limit=1") {
		t.Fatalf("next link %s", next)
	}
	r = h.req("GET", base+"?marker=req-stop", memberTok, "2.58", nil).expect(t, 200)
	if l := r.list("instanceActions"); len(l) != 1 || l[0].(map[string]any)["request_id"] != "req-create" {
		t.Fatalf("after marker %v", l)
	}
	if _, ok := r.body["links"]; ok {
		t.Fatalf("a page that is not full has a next link: %s", r.raw)
	}
	h.req("GET", base+"?marker=req-nope", memberTok, "2.58", nil).fault(t, 400, "badRequest", "Marker req-nope could not be found.")
	h.req("GET", base+"?limit=-1", memberTok, "2.58", nil).fault(t, 400, "badRequest", "Invalid input for query parameters limit")
	since := url.QueryEscape("2026-11-29T21:00:30Z")
	r = h.req("GET", base+"?changes-since="+since, memberTok, "2.58", nil).expect(t, 200)
	if l := r.list("instanceActions"); len(l) != 1 || l[0].(map[string]any)["request_id"] != "req-stop" {
		t.Fatalf("changes-since %v", l)
	}
	h.req("GET", base+"?changes-since=yesterday", memberTok, "2.58", nil).fault(t, 400, "badRequest", "is not a 'date-time'")
	h.req("GET", base+"?changes-before="+since, memberTok, "2.65", nil).fault(t, 400, "badRequest", "'changes-before' was unexpected")
	r = h.req("GET", base+"?changes-before="+since, memberTok, "2.66", nil).expect(t, 200)
	if l := r.list("instanceActions"); len(l) != 1 || l[0].(map[string]any)["request_id"] != "req-create" {
		t.Fatalf("changes-before %v", l)
	}
	h.req("GET", base+"?changes-before=2026-11-29T20:00:00Z&changes-since="+since, memberTok, "2.66", nil).
		fault(t, 400, "badRequest", "The value of changes-since must be less than or equal to changes-before.")

	// Show: events for admins; for members from 2.51, without traceback.
	show := base + "/req-stop"
	r = h.req("GET", show, adminTok, "", nil).expect(t, 200)
	sameShape(t, "2.1 admin show", r.body, sample(t, "os-instance-actions/instance-action-get-resp.json"))
	ev := r.obj("instanceAction")["events"].([]any)[0].(map[string]any)
	if ev["event"] != "compute_stop" || ev["result"] != "Error" || ev["start_time"] != "2026-11-29T21:01:00.000000" ||
		ev["finish_time"] != "2026-11-29T21:01:01.000000" {
		t.Fatalf("event %v", ev)
	}
	r = h.req("GET", show, memberTok, "2.50", nil).expect(t, 200)
	if _, ok := r.obj("instanceAction")["events"]; ok {
		t.Fatalf("member sees events before 2.51: %s", r.raw)
	}
	for _, tc := range []struct{ version, tok, file string }{
		{"2.51", memberTok, "v2.51/instance-action-get-non-admin-resp.json"},
		{"2.51", adminTok, "v2.51/instance-action-get-resp.json"},
		{"2.58", memberTok, "v2.58/instance-action-get-non-admin-resp.json"},
		{"2.58", adminTok, "v2.58/instance-action-get-resp.json"},
		{"2.62", memberTok, "v2.62/instance-action-get-non-admin-resp.json"},
		{"2.62", adminTok, "v2.62/instance-action-get-resp.json"},
		{"2.84", memberTok, "v2.84/instance-action-get-non-admin-resp.json"},
		{"2.84", adminTok, "v2.84/instance-action-get-resp.json"},
	} {
		r = h.req("GET", show, tc.tok, tc.version, nil).expect(t, 200)
		sameShape(t, tc.version+" show "+tc.file, r.body, sample(t, "os-instance-actions/"+tc.file))
	}
	ev = r.obj("instanceAction")["events"].([]any)[0].(map[string]any)
	if ev["host"] != "compute-1" || ev["hostId"] != generateHostID("p-demo", "compute-1") || ev["details"] != "the guest would not stop" {
		t.Fatalf("2.84 admin event %v", ev)
	}
	h.req("GET", base+"/req-nope", memberTok, "", nil).fault(t, 404, "itemNotFound", "Action req-nope not found")

	// Another project's server is not found; admins see it.
	other := "/compute/v2.1/servers/" + theirs.ID + "/os-instance-actions"
	h.req("GET", other, memberTok, "", nil).fault(t, 404, "itemNotFound", "Instance "+theirs.ID+" could not be found.")
	h.req("GET", other+"/req-theirs", memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("GET", other, adminTok, "", nil).expect(t, 200)
	h.req("GET", base, noRoleTok, "", nil).fault(t, 403, "forbidden", "os_compute_api:os-instance-actions:list")

	// A deleted server's actions stay readable from 2.21, to its project
	// and admins.
	h.req("DELETE", "/compute/v2.1/servers/"+mine.ID, memberTok, "", nil).expect(t, 204)
	h.req("GET", base, memberTok, "2.20", nil).fault(t, 404, "itemNotFound", "could not be found")
	if l := h.req("GET", base, memberTok, "2.21", nil).expect(t, 200).list("instanceActions"); len(l) != 2 {
		t.Fatalf("deleted server's actions %v", l)
	}
	h.req("GET", show, memberTok, "2.21", nil).expect(t, 200)
	h.req("GET", base+"/req-nope", memberTok, "2.21", nil).fault(t, 404, "itemNotFound", "Action req-nope not found")
	h.req("GET", base, otherTok, "2.21", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("GET", show, adminTok, "2.21", nil).expect(t, 200)
	h.req("GET", "/compute/v2.1/servers/nope/os-instance-actions", adminTok, "2.21", nil).fault(t, 404, "itemNotFound", "Instance nope could not be found.")
}

func TestInstanceActionsRecordRequestIDs(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, _ := addHostAndServers(h)
	r := act(h, mine.ID, memberTok, "", `{"pause": null}`).expect(t, 202)
	rid := r.header.Get("X-Openstack-Request-Id")
	l := h.req("GET", "/compute/v2.1/servers/"+mine.ID+"/os-instance-actions", memberTok, "", nil).expect(t, 200).list("instanceActions")
	if len(l) != 1 || l[0].(map[string]any)["request_id"] != rid || l[0].(map[string]any)["action"] != structs.OpPause {
		t.Fatalf("actions %v, want request id %s", l, rid)
	}
	h.req("GET", "/compute/v2.1/servers/"+mine.ID+"/os-instance-actions/"+rid, memberTok, "2.51", nil).expect(t, 200)
}
