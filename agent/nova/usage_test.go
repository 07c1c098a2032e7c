package nova

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// usageFake adds Instance.Usage to fakeRPC: its live instances and a
// list of deleted instances' usage records.
type usageFake struct {
	*fakeRPC
	deleted []*structs.InstanceUsage
}

func newUsageHarness(t *testing.T) (*harness, *usageFake) {
	t.Helper()
	f := &usageFake{fakeRPC: newFakeRPC()}
	api := New(Config{RPC: f, Verifier: testTokens()})
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", api.Handler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &harness{t: t, rpc: f.fakeRPC, srv: srv, api: api}, f
}

func (f *usageFake) RPC(method string, args, reply any) error {
	if method != "Instance.Usage" {
		return f.fakeRPC.RPC(method, args, reply)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{method, args})
	if err := f.fail[method]; err != nil {
		return err
	}
	req := args.(*structs.InstanceUsageRequest)
	out := reply.(*structs.InstanceUsageResponse)
	for _, inst := range f.instances {
		if req.ProjectID == "" || inst.ProjectID == req.ProjectID {
			out.Instances = append(out.Instances, inst.Copy())
		}
	}
	sort.Slice(out.Instances, func(i, j int) bool { return out.Instances[i].ID < out.Instances[j].ID })
	for _, d := range f.deleted {
		if req.ProjectID == "" || d.ProjectID == req.ProjectID {
			c := *d
			out.Deleted = append(out.Deleted, &c)
		}
	}
	return nil
}

// usageT0 is the start of the test's day; the test period is
// [02:00, 04:00].
var usageT0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

func at(h float64) int64 { return usageT0.Add(time.Duration(h * float64(time.Hour))).UnixNano() }

const (
	usageOldID    = "11111111-1111-4111-8111-111111111111" // p-demo, deleted at 03:00
	usageWebID    = "22222222-2222-4222-8222-222222222222" // p-demo, live since 01:00
	usageDBID     = "33333333-3333-4333-8333-333333333333" // p-other, live since 00:00
	usageGoneID   = "44444444-4444-4444-8444-444444444444" // p-demo, deleted before the period
	usageLaterID  = "55555555-5555-4555-8555-555555555555" // p-demo, created after it
	usagePeriodQS = "start=2025-03-01T02:00:00&end=2025-03-01T04:00:00"
)

func seedUsage(h *harness, f *usageFake) {
	tiny := h.rpc.flavors["1"].Copy()
	h.rpc.addInstance(&structs.Instance{ID: usageWebID, Name: "web", ProjectID: "p-demo", UserID: "u-alice", FlavorID: "1",
		Flavor: tiny, VMState: structs.VMStateActive, CreatedAt: at(1), UpdatedAt: at(1)})
	h.rpc.addInstance(&structs.Instance{ID: usageDBID, Name: "db", ProjectID: "p-other", UserID: "u-bob", FlavorID: "1",
		Flavor: tiny, VMState: structs.VMStateStopped, CreatedAt: at(0), UpdatedAt: at(0)})
	h.rpc.addInstance(&structs.Instance{ID: usageLaterID, Name: "later", ProjectID: "p-demo", UserID: "u-alice", FlavorID: "1",
		Flavor: tiny, VMState: structs.VMStateActive, CreatedAt: at(5), UpdatedAt: at(5)})
	f.deleted = []*structs.InstanceUsage{
		{InstanceID: usageOldID, Name: "old", ProjectID: "p-demo", UserID: "u-alice", FlavorName: "m1.small", VCPUs: 2,
			MemoryMB: 2048, LocalGB: 20, State: structs.VMStateActive, CreatedAt: at(0), DeletedAt: at(3)},
		{InstanceID: usageGoneID, Name: "gone", ProjectID: "p-demo", UserID: "u-alice", FlavorName: "m1.tiny", VCPUs: 1,
			MemoryMB: 512, LocalGB: 1, State: structs.VMStateStopped, CreatedAt: at(-10), DeletedAt: at(-5)},
	}
}

// usageServerIDs lists the instance ids of a response's server_usages,
// tenant by tenant.
func usageServerIDs(usages ...any) []string {
	var ids []string
	for _, u := range usages {
		su, _ := u.(map[string]any)["server_usages"].([]any)
		for _, s := range su {
			ids = append(ids, s.(map[string]any)["instance_id"].(string))
		}
	}
	return ids
}

func serverUsage(t *testing.T, usage any, id string) map[string]any {
	t.Helper()
	for _, s := range usage.(map[string]any)["server_usages"].([]any) {
		if m := s.(map[string]any); m["instance_id"] == id {
			return m
		}
	}
	t.Fatalf("no server usage of %s in %v", id, usage)
	return nil
}

func TestUsageListShapesAndTotals(t *testing.T) {
	h, f := newUsageHarness(t)
	seedUsage(h, f)

	// Summaries only without detailed=1.
	r := h.req("GET", "/compute/v2.1/os-simple-tenant-usage?"+usagePeriodQS, adminTok, "", nil).expect(t, 200)
	sameShape(t, "2.1 list", r.body, sample(t, "os-simple-tenant-usage/simple-tenant-usage-get.json"))
	if l := r.list("tenant_usages"); len(l) != 2 || l[0].(map[string]any)["tenant_id"] != "p-demo" || l[1].(map[string]any)["tenant_id"] != "p-other" {
		t.Fatalf("tenants %s", r.raw)
	}
	// Python's floats, as Nova writes them.
	for _, want := range []string{`"total_hours":3.0`, `"total_vcpus_usage":4.0`, `"total_memory_mb_usage":3072.0`,
		`"total_local_gb_usage":22.0`, `"start":"2025-03-01T02:00:00.000000"`, `"stop":"2025-03-01T04:00:00.000000"`} {
		if !strings.Contains(string(r.raw), want) {
			t.Errorf("no %s in %s", want, r.raw)
		}
	}

	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage?detailed=1&"+usagePeriodQS, adminTok, "", nil).expect(t, 200)
	sameShape(t, "2.1 detail", r.body, sample(t, "os-simple-tenant-usage/simple-tenant-usage-get-detail.json"))
	l := r.list("tenant_usages")
	if ids := usageServerIDs(l...); strings.Join(ids, ",") != usageOldID+","+usageWebID+","+usageDBID {
		t.Fatalf("servers in report order: %v", ids)
	}
	demo := l[0].(map[string]any)
	if demo["total_hours"] != 3.0 || demo["total_vcpus_usage"] != 4.0 || demo["total_memory_mb_usage"] != 3072.0 || demo["total_local_gb_usage"] != 22.0 {
		t.Fatalf("p-demo totals %v", demo)
	}
	// The deleted server: clipped to the period's start, ended at its
	// deletion, terminated, its uptime its whole life.
	old := serverUsage(t, demo, usageOldID)
	for k, want := range map[string]any{"name": "old", "tenant_id": "p-demo", "flavor": "m1.small", "vcpus": 2.0,
		"memory_mb": 2048.0, "local_gb": 20.0, "hours": 1.0, "started_at": "2025-03-01T00:00:00.000000",
		"ended_at": "2025-03-01T03:00:00.000000", "state": "terminated", "uptime": 10800.0} {
		if old[k] != want {
			t.Errorf("deleted server %s = %v, want %v", k, old[k], want)
		}
	}
	// The live one: created inside the period, charged up to its end,
	// its uptime until now.
	web := serverUsage(t, demo, usageWebID)
	if web["hours"] != 2.0 || web["ended_at"] != nil || web["state"] != "active" || web["flavor"] != "m1.tiny" ||
		web["started_at"] != "2025-03-01T01:00:00.000000" || web["local_gb"] != 1.0 || web["memory_mb"] != 512.0 {
		t.Fatalf("live server %v", web)
	}
	if up := web["uptime"].(float64); up < time.Since(usageT0.Add(time.Hour)).Seconds()-5 {
		t.Fatalf("uptime %v", up)
	}
	if db := serverUsage(t, l[1], usageDBID); db["state"] != "stopped" || db["hours"] != 2.0 {
		t.Fatalf("p-other's server %v", db)
	}

	// At 2.40 too, with every project's servers.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage?detailed=1&"+usagePeriodQS, adminTok, "2.40", nil).expect(t, 200)
	sameShape(t, "2.40 all", r.body, sample(t, "os-simple-tenant-usage/v2.40/simple-tenant-usage-get-all.json"))

	// Nothing in an empty period.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage?start=2025-02-01T00:00:00&end=2025-02-01T01:00:00", adminTok, "", nil).expect(t, 200)
	if string(r.raw) != `{"tenant_usages":[]}` {
		t.Fatalf("empty period %s", r.raw)
	}
}

func TestUsageShowShapesAndPolicy(t *testing.T) {
	h, f := newUsageHarness(t)
	seedUsage(h, f)
	path := "/compute/v2.1/os-simple-tenant-usage/p-demo?" + usagePeriodQS

	for _, tok := range []string{memberTok, readerTok, adminTok} {
		r := h.req("GET", path, tok, "", nil).expect(t, 200)
		sameShape(t, "2.1 show", r.body, sample(t, "os-simple-tenant-usage/simple-tenant-usage-get-specific.json"))
		u := r.obj("tenant_usage")
		if u["tenant_id"] != "p-demo" || u["total_hours"] != 3.0 {
			t.Fatalf("show %s", r.raw)
		}
		if ids := usageServerIDs(u); strings.Join(ids, ",") != usageOldID+","+usageWebID {
			t.Fatalf("servers %v", ids)
		}
		if old := serverUsage(t, u, usageOldID); old["ended_at"] != "2025-03-01T03:00:00.000000" || old["state"] != "terminated" {
			t.Fatalf("deleted server %v", old)
		}
	}
	r := h.req("GET", path, memberTok, "2.40", nil).expect(t, 200)
	sameShape(t, "2.40 show", r.body, sample(t, "os-simple-tenant-usage/simple-tenant-usage-get-specific.json"))

	// Another project's usage is an admin's business.
	const showRule = "Policy doesn't allow os_compute_api:os-simple-tenant-usage:show to be performed."
	h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-other", memberTok, "", nil).fault(t, 403, "forbidden", showRule)
	h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo", otherTok, "", nil).fault(t, 403, "forbidden", showRule)
	h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo", noRoleTok, "", nil).fault(t, 403, "forbidden", showRule)
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-other?"+usagePeriodQS, adminTok, "", nil).expect(t, 200)
	if u := r.obj("tenant_usage"); u["tenant_id"] != "p-other" || u["total_hours"] != 2.0 {
		t.Fatalf("admin's show of p-other %s", r.raw)
	}
	// Listing every project is for admins only.
	const listRule = "Policy doesn't allow os_compute_api:os-simple-tenant-usage:list to be performed."
	for _, tok := range []string{memberTok, readerTok, otherTok} {
		h.req("GET", "/compute/v2.1/os-simple-tenant-usage", tok, "", nil).fault(t, 403, "forbidden", listRule)
	}
	h.req("GET", "/compute/v2.1/os-simple-tenant-usage", "", "", nil).fault(t, 401, "unauthorized", "requires authentication")

	// A project with nothing in the period is {}.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-admin?"+usagePeriodQS, adminTok, "", nil).expect(t, 200)
	if string(r.raw) != `{"tenant_usage":{}}` {
		t.Fatalf("empty project %s", r.raw)
	}
	// The project id may be in the URL too.
	h.req("GET", "/compute/v2.1/p-demo/os-simple-tenant-usage/p-demo", memberTok, "", nil).expect(t, 200)
	if c, _ := h.rpc.lastCall("Instance.Usage").(*structs.InstanceUsageRequest); c == nil || c.ProjectID != "p-demo" {
		t.Fatalf("usage call %+v", c)
	}
}

func TestUsagePeriodClipping(t *testing.T) {
	h, f := newUsageHarness(t)
	seedUsage(h, f)
	hours := func(qs string) map[string]any {
		t.Helper()
		r := h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo?"+qs, memberTok, "", nil).expect(t, 200)
		out := map[string]any{}
		for _, s := range r.obj("tenant_usage")["server_usages"].([]any) {
			m := s.(map[string]any)
			out[m["name"].(string)] = m["hours"]
		}
		return out
	}
	for _, c := range []struct {
		qs   string
		want map[string]any
	}{
		// Inside the deleted server's life: the whole period.
		{"start=2025-03-01T00:30:00&end=2025-03-01T00:45:00", map[string]any{"old": 0.25}},
		// Its start: from creation on.
		{"start=2025-02-28T23:00:00&end=2025-03-01T00:30:00", map[string]any{"old": 0.5}},
		// Its deletion: until then; the live server from its creation.
		{"start=2025-03-01T02:30:00.000&end=2025-03-01T03:30:00", map[string]any{"old": 0.5, "web": 1.0}},
		// Fractions of seconds count.
		{"start=2025-03-01T02:59:59.1&end=2025-03-01T03:00:00", map[string]any{"old": 0.9 / 3600, "web": 0.9 / 3600}},
		// The space-separated form with a fraction, and a Z.
		{"start=2025-03-01+02:00:00.000000&end=2025-03-01T03:00:00Z", map[string]any{"old": 1.0, "web": 1.0}},
		// Deleted before the period: not there.
		{"start=2025-03-01T03:00:00&end=2025-03-01T04:00:00", map[string]any{"web": 1.0}},
	} {
		got := hours(c.qs)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: hours %v, want %v", c.qs, got, c.want)
		}
	}

	// An end in the future is now; without an end, the period ends now.
	for _, qs := range []string{"start=2025-03-01T02:00:00&end=2999-01-01T00:00:00", "start=2025-03-01T02:00:00"} {
		r := h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo?"+qs, memberTok, "", nil).expect(t, 200)
		u := r.obj("tenant_usage")
		stop, err := time.Parse("2006-01-02T15:04:05.000000", u["stop"].(string))
		if err != nil || time.Since(stop) < 0 || time.Since(stop) > time.Minute {
			t.Fatalf("%s: stop %v %v", qs, u["stop"], err)
		}
		web := serverUsage(t, u, usageWebID)["hours"].(float64)
		if want := stop.Sub(usageT0.Add(2 * time.Hour)).Hours(); web < want-0.001 || web > want+0.001 {
			t.Fatalf("%s: live server's hours %v, want %v", qs, web, want)
		}
		if ids := usageServerIDs(u); len(ids) != 3 || ids[2] != usageLaterID {
			t.Fatalf("%s: servers %v", qs, ids)
		}
	}

	// A period after now charges nothing.
	r := h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo?start=2999-01-01T00:00:00&end=3000-01-01T00:00:00", memberTok, "", nil).expect(t, 200)
	if u := r.obj("tenant_usage"); u["start"] != "2999-01-01T00:00:00.000000" || u["total_hours"] != 0.0 {
		t.Fatalf("future period %s", r.raw)
	}

	for _, c := range []struct{ qs, msg string }{
		{"start=yesterday", "Invalid datetime string: Datetime is in invalid format"},
		{"end=2025-03-01", "Invalid datetime string: Datetime is in invalid format"},
		{"start=2025-03-01+02:00:00", "Invalid datetime string: Datetime is in invalid format"},
		{"start=2025-02-30T00:00:00", "Invalid datetime string: Datetime is in invalid format"},
		{"start=2025-03-01T00:00:00.1234567", "Invalid datetime string: Datetime is in invalid format"},
		{"start=2025-03-01T04:00:00&end=2025-03-01T02:00:00", "Invalid start time. The start time cannot occur after the end time."},
		{"start=2025-03-01T04:00:00&end=2025-03-01T04:00:00", "Invalid start time. The start time cannot occur after the end time."},
		{"start=2999-01-01T00:00:00", "Invalid start time. The start time cannot occur after the end time."},
	} {
		h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo?"+c.qs, memberTok, "", nil).fault(t, 400, "badRequest", c.msg)
		h.req("GET", "/compute/v2.1/os-simple-tenant-usage?"+c.qs, adminTok, "2.40", nil).fault(t, 400, "badRequest", c.msg)
	}
	// No period at all is the instant of the request: the live servers,
	// charged nothing.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage", adminTok, "", nil).expect(t, 200)
	if l := r.list("tenant_usages"); len(l) != 2 || l[0].(map[string]any)["total_hours"] != 0.0 {
		t.Fatalf("no period %s", r.raw)
	}
}

// nextHref returns a response's next link as a path, or "".
func nextHref(t *testing.T, h *harness, r *response, key string) string {
	t.Helper()
	links, _ := r.body[key].([]any)
	if len(links) == 0 {
		return ""
	}
	l := links[0].(map[string]any)
	href := l["href"].(string)
	if l["rel"] != "next" || !strings.HasPrefix(href, h.srv.URL+"/compute/v2.1/") {
		t.Fatalf("link %v", l)
	}
	return strings.TrimPrefix(href, h.srv.URL)
}

func TestUsagePaging(t *testing.T) {
	h, f := newUsageHarness(t)
	seedUsage(h, f)

	// Before 2.40 limit and marker are ignored and there are no links.
	r := h.req("GET", "/compute/v2.1/os-simple-tenant-usage?detailed=1&limit=1&marker=x&"+usagePeriodQS, adminTok, "", nil).expect(t, 200)
	if ids := usageServerIDs(r.list("tenant_usages")...); len(ids) != 3 || r.body["tenant_usages_links"] != nil {
		t.Fatalf("2.1 with limit %s", r.raw)
	}

	// From 2.40 a page of servers, and a next link while pages are full.
	path := "/compute/v2.1/os-simple-tenant-usage?detailed=1&limit=1&" + usagePeriodQS
	r = h.req("GET", path, adminTok, "2.40", nil).expect(t, 200)
	sameShape(t, "2.40 detail", r.body, sample(t, "os-simple-tenant-usage/v2.40/simple-tenant-usage-get-detail.json"))
	var seen []string
	var tenants []string
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("too many pages")
		}
		r = h.req("GET", path, adminTok, "2.40", nil).expect(t, 200)
		l := r.list("tenant_usages")
		seen = append(seen, usageServerIDs(l...)...)
		for _, u := range l {
			m := u.(map[string]any)
			tenants = append(tenants, m["tenant_id"].(string))
			// Totals cover the page's servers only.
			if len(l) != 1 || len(m["server_usages"].([]any)) != 1 {
				t.Fatalf("page %s", r.raw)
			}
		}
		next := nextHref(t, h, r, "tenant_usages_links")
		if next != "" {
			u, _ := url.Parse(next)
			if u.Path != "/compute/v2.1/os-simple-tenant-usage" || u.Query().Get("limit") != "1" || u.Query().Get("detailed") != "1" ||
				u.Query().Get("start") != "2025-03-01T02:00:00" || u.Query().Get("marker") != seen[len(seen)-1] {
				t.Fatalf("next link %s", next)
			}
		} else if len(l) != 0 {
			t.Fatalf("a full page without a next link: %s", r.raw)
		}
		path = next
	}
	if strings.Join(seen, ",") != usageOldID+","+usageWebID+","+usageDBID || strings.Join(tenants, ",") != "p-demo,p-demo,p-other" {
		t.Fatalf("paged servers %v tenants %v", seen, tenants)
	}

	// Summaries page the same way.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage?limit=2&"+usagePeriodQS, adminTok, "2.40", nil).expect(t, 200)
	sameShape(t, "2.40 list", r.body, sample(t, "os-simple-tenant-usage/v2.40/simple-tenant-usage-get.json"))
	if l := r.list("tenant_usages"); len(l) != 1 || l[0].(map[string]any)["total_hours"] != 3.0 {
		t.Fatalf("summary page %s", r.raw)
	}

	// One project's, with the project in the link.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo?limit=1&"+usagePeriodQS, memberTok, "2.40", nil).expect(t, 200)
	sameShape(t, "2.40 show", r.body, sample(t, "os-simple-tenant-usage/v2.40/simple-tenant-usage-get-specific.json"))
	next := nextHref(t, h, r, "tenant_usage_links")
	if !strings.HasPrefix(next, "/compute/v2.1/os-simple-tenant-usage/p-demo?") || !strings.Contains(next, "marker="+usageOldID) {
		t.Fatalf("show's next link %q", next)
	}
	r = h.req("GET", next, memberTok, "2.40", nil).expect(t, 200)
	if ids := usageServerIDs(r.obj("tenant_usage")); len(ids) != 1 || ids[0] != usageWebID || r.obj("tenant_usage")["total_hours"] != 2.0 {
		t.Fatalf("second page %s", r.raw)
	}
	// The marker may be a server outside the period: it is a position.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo?marker="+usageGoneID+"&"+usagePeriodQS, memberTok, "2.40", nil).expect(t, 200)
	if string(r.raw) != `{"tenant_usage":{}}` {
		t.Fatalf("after the last server %s", r.raw)
	}
	// A limit of 0 is an empty page.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage?limit=0&"+usagePeriodQS, adminTok, "2.40", nil).expect(t, 200)
	if string(r.raw) != `{"tenant_usages":[]}` {
		t.Fatalf("limit=0 %s", r.raw)
	}

	h.req("GET", "/compute/v2.1/os-simple-tenant-usage?marker=nope", adminTok, "2.40", nil).
		fault(t, 400, "badRequest", "Marker nope could not be found.")
	h.req("GET", "/compute/v2.1/os-simple-tenant-usage?limit=-1", adminTok, "2.40", nil).
		fault(t, 400, "badRequest", "Invalid input for query parameters limit. Value: -1. '-1' does not match '^[0-9]*$'")
	h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo?limit=x", memberTok, "2.40", nil).
		fault(t, 400, "badRequest", "Invalid input for query parameters limit. Value: x.")
}

// TestUsageAgainstARealServer follows a server from boot to force
// delete through a real server's Instance.Usage: live with its vm_state,
// then terminated with its deletion time.
func TestUsageAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	begin := time.Now().UTC().Add(-time.Minute).Format("2006-01-02T15:04:05")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "metered", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	show := func() map[string]any {
		t.Helper()
		r := h.req("GET", "/compute/v2.1/os-simple-tenant-usage/p-demo?start="+begin, memberTok, "2.40", nil).expect(t, 200)
		return r.obj("tenant_usage")
	}
	u := serverUsage(t, show(), id)
	if u["state"] != "active" || u["ended_at"] != nil || u["flavor"] != "m1.tiny" || u["name"] != "metered" || u["vcpus"] != 1.0 {
		t.Fatalf("live server %v", u)
	}

	// Soft deleted, it is still there; force deleted, it is terminated.
	h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, 204)
	waitServer(h, id, "SOFT_DELETED")
	if u := serverUsage(t, show(), id); u["state"] != "soft-delete" || u["ended_at"] != nil {
		t.Fatalf("soft-deleted server %v", u)
	}
	act(h, id, memberTok, "", `{"forceDelete": null}`).expect(t, 202)
	waitFor(t, "server gone", func() error {
		if r := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "", nil); r.status != 404 {
			return fmt.Errorf("status %d", r.status)
		}
		return nil
	})
	u = serverUsage(t, show(), id)
	ended, err := time.Parse("2006-01-02T15:04:05.000000", fmt.Sprint(u["ended_at"]))
	if u["state"] != "terminated" || err != nil || time.Since(ended) > time.Minute || u["hours"].(float64) <= 0 {
		t.Fatalf("deleted server %v", u)
	}
	// Every project's, for admins.
	r = h.req("GET", "/compute/v2.1/os-simple-tenant-usage?detailed=1&start="+begin, adminTok, "", nil).expect(t, 200)
	if ids := usageServerIDs(r.list("tenant_usages")...); len(ids) != 1 || ids[0] != id {
		t.Fatalf("all tenants %s", r.raw)
	}
}
