package nova

import (
	"net/url"
	"reflect"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

func TestUsageAuditLogDerivesNovasReportFromUsage(t *testing.T) {
	h, _ := newUsageHarness(t)
	host, _, _ := addHostAndServers(h) // "web" on compute-1 since 2026-11-29, "db" unplaced
	idle := h.rpc.addHost(&structs.Host{ID: "7b2d6c1f-4f30-4b9f-8c64-1a7f2e3d4c5b", Name: "compute-2", Status: structs.HostStatusDown})
	early := time.Date(2026, 10, 15, 0, 0, 0, 0, time.UTC).UnixNano()
	h.rpc.addInstance(&structs.Instance{Name: "old", ProjectID: "p-other", HostID: host.ID, VMState: structs.VMStateActive, CreatedAt: early})

	show := func(before string) map[string]any {
		t.Helper()
		r := h.req("GET", "/compute/v2.1/os-instance_usage_audit_log/"+url.PathEscape(before), adminTok, "", nil).expect(t, 200)
		sameShape(t, "audit log", r.body, sample(t, "os-instance-usage-audit-log/inst-usage-audit-log-show-get-resp.json"))
		return r.obj("instance_usage_audit_log")
	}
	// October 2026: only "old" was on a host before it ended.
	log := show("2026-11-06 10:00:00")
	if log["period_beginning"] != "2026-10-01 00:00:00" || log["period_ending"] != "2026-11-01 00:00:00" {
		t.Fatalf("period %v – %v", log["period_beginning"], log["period_ending"])
	}
	for k, want := range map[string]any{"num_hosts": 2.0, "num_hosts_done": 2.0, "num_hosts_running": 0.0, "num_hosts_not_run": 0.0,
		"total_instances": 1.0, "total_errors": 0.0, "overall_status": "ALL hosts done. 0 errors."} {
		if log[k] != want {
			t.Fatalf("%s = %v, want %v", k, log[k], want)
		}
	}
	hosts := log["log"].(map[string]any)
	c1, c2 := hosts["compute-1"].(map[string]any), hosts[idle.Name].(map[string]any)
	if c1["state"] != "DONE" || c1["instances"] != 1.0 || c1["errors"] != 0.0 || c2["instances"] != 0.0 {
		t.Fatalf("log %v", hosts)
	}
	// November 2026 has both of compute-1's; the exact start of a month
	// belongs to the period before, as in Nova.
	log = show("2026-12-01 00:00:00.5")
	if log["period_beginning"] != "2026-11-01 00:00:00" || log["total_instances"] != 2.0 {
		t.Fatalf("November: %v", log)
	}
	if log = show("2026-12-01 00:00:00"); log["period_beginning"] != "2026-10-01 00:00:00" || log["total_instances"] != 1.0 {
		t.Fatalf("at the 1st: %v", log)
	}
	// A period not over yet has run nowhere.
	log = show("2999-02-01 00:00:01")
	if log["num_hosts_not_run"] != 2.0 || !reflect.DeepEqual(log["hosts_not_run"], []any{"compute-1", "compute-2"}) ||
		log["overall_status"] != "0 of 2 hosts done. 0 errors." || len(log["log"].(map[string]any)) != 0 {
		t.Fatalf("future period: %v", log)
	}
	// Python's strptime: fields without leading zeros, up to 6 fraction digits.
	if log = show("2026-2-3  4:5:6.123456"); log["period_beginning"] != "2026-01-01 00:00:00" {
		t.Fatalf("short fields: %v", log["period_beginning"])
	}

	// The index is the last period completed now.
	r := h.req("GET", "/compute/v2.1/os-instance_usage_audit_log?foo=bar", adminTok, "", nil).expect(t, 200)
	sameShape(t, "audit logs", r.body, sample(t, "os-instance-usage-audit-log/inst-usage-audit-log-index-get-resp.json"))
	begin, _ := lastCompletedMonth(time.Now().UTC())
	if got := r.obj("instance_usage_audit_logs")["period_beginning"]; got != begin.Format(time.DateTime) {
		t.Fatalf("index period %v", got)
	}

	for _, bad := range []string{"2026-12-06", "2026-12-06T10:00:00", "2026-02-30 00:00:00", "2026-12-06 10:00:60",
		"2026-12-06 10:00:00.", "2026-12-06 10:00:00.1234567", "26-12-06 10:00:00", "yesterday"} {
		h.req("GET", "/compute/v2.1/os-instance_usage_audit_log/"+url.PathEscape(bad), adminTok, "", nil).
			fault(t, 400, "badRequest", "Invalid timestamp for date "+bad)
	}
	h.req("GET", "/compute/v2.1/os-instance_usage_audit_log", memberTok, "", nil).
		fault(t, 403, "forbidden", "os_compute_api:os-instance-usage-audit-log:list")
	h.req("GET", "/compute/v2.1/os-instance_usage_audit_log/2026-12-06%2010:00:00", memberTok, "", nil).
		fault(t, 403, "forbidden", "os_compute_api:os-instance-usage-audit-log:show")
}
