package nova

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// os-instance_usage_audit_log: Nova's report of the instance usage
// audit, a periodic task each nova-compute runs once per audit period
// (a month by default) to emit a usage notification per instance it
// hosted, logging a task row per host.
//
// Stratus has no such task: usage is recorded in the replicated state
// as instances are created and deleted (os-simple-tenant-usage reads
// the same records), so nothing per host can fail, lag or be skipped.
// The report is derived from that state, for the last audit period
// completed before the request (or before the timestamp of a show):
//   - a completed period is DONE on every compute host, with 0 errors;
//     a period not yet over has run on none (all hosts_not_run);
//   - a host's "instances" counts the servers now placed on it that
//     were created before the period ended, as Nova's audit counts the
//     host's instances active in the window; deleted servers' usage
//     records keep no host, so they count on none;
//   - the message has Nova's form, with the time the derivation took.

const usageAuditRule = "os_compute_api:os-instance-usage-audit-log:"

func (a *API) usageAuditRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-instance_usage_audit_log", Access: admin, Policy: usageAuditRule + "list", Handle: a.usageAuditIndex},
		{Pattern: "GET /os-instance_usage_audit_log/{before}", Access: admin, Policy: usageAuditRule + "show", Handle: a.usageAuditShow},
	}
}

func (a *API) usageAuditIndex(q *request) (*reply, error) {
	log, err := q.usageAudit(time.Now().UTC())
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"instance_usage_audit_logs": log})
}

func (a *API) usageAuditShow(q *request) (*reply, error) {
	id := q.param("before")
	before, ok := parseAuditTime(id)
	if !ok {
		return nil, badRequest("Invalid timestamp for date %s", id)
	}
	log, err := q.usageAudit(before)
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"instance_usage_audit_log": log})
}

// auditTimePattern is Python's strptime of "%Y-%m-%d %H:%M:%S" and, when
// the id has a dot, "%Y-%m-%d %H:%M:%S.%f": fields without their leading
// zeros too, any whitespace between date and time.
var auditTimePattern = regexp.MustCompile(`^(\d{4})-(1[0-2]|0[1-9]|[1-9])-(3[01]|[12]\d|0[1-9]|[1-9]| [1-9])\s+` +
	`(2[0-3]|[0-1]\d|\d):([0-5]\d|\d):(6[0-1]|[0-5]\d|\d)(?:\.(\d{1,6}))?$`)

// parseAuditTime reads a show's timestamp as Nova does; a date that
// does not exist (February 30th, second 60) is as invalid as bad text.
func parseAuditTime(s string) (time.Time, bool) {
	m := auditTimePattern.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, false
	}
	n := make([]int, 6)
	for i := range n {
		v, err := strconv.Atoi(strings.TrimLeft(m[i+1], " "))
		if err != nil {
			return time.Time{}, false
		}
		n[i] = v
	}
	micros := 0
	if f := m[7]; f != "" {
		for len(f) < 6 {
			f += "0"
		}
		micros, _ = strconv.Atoi(f)
	}
	t := time.Date(n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], micros*1000, time.UTC)
	if t.Day() != n[2] || n[5] > 59 {
		return time.Time{}, false
	}
	return t, true
}

// lastCompletedMonth is Nova's last_completed_audit_period for its
// default monthly period: the month that ended last at or before t.
func lastCompletedMonth(t time.Time) (begin, end time.Time) {
	end = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	if !end.Before(t) {
		end = end.AddDate(0, -1, 0)
	}
	return end.AddDate(0, -1, 0), end
}

// auditHostLog is one host's row of the report.
type auditHostLog struct {
	State     string `json:"state"`
	Instances int    `json:"instances"`
	Errors    int    `json:"errors"`
	Message   string `json:"message"`
}

// usageAudit derives the report of the last period completed before
// before (see the file's comment).
func (q *request) usageAudit(before time.Time) (map[string]any, error) {
	start := time.Now()
	begin, end := lastCompletedMonth(before)
	hosts, err := q.listHosts()
	if err != nil {
		return nil, err
	}
	var out structs.InstanceUsageResponse
	if err := q.call("Instance.Usage", &structs.InstanceUsageRequest{}, &out); err != nil {
		return nil, err
	}
	perHost := map[string]int{}
	for _, inst := range out.Instances {
		if inst.HostID != "" && inst.CreatedAt < end.UnixNano() {
			perHost[inst.HostID]++
		}
	}
	log := map[string]auditHostLog{}
	notRun := []string{}
	total := 0
	done := end.Before(time.Now())
	took := strconv.FormatFloat(time.Since(start).Seconds(), 'f', -1, 64)
	for _, h := range hosts {
		if !done {
			notRun = append(notRun, h.Name)
			continue
		}
		n := perHost[h.ID]
		total += n
		log[h.Name] = auditHostLog{State: "DONE", Instances: n,
			Message: "Instance usage audit ran for host " + h.Name + ", " + strconv.Itoa(n) + " instances in " + took + " seconds."}
	}
	sort.Strings(notRun)
	status := "ALL"
	if len(log) != len(hosts) {
		status = strconv.Itoa(len(log)) + " of " + strconv.Itoa(len(hosts))
	}
	return map[string]any{
		"period_beginning": begin.Format(time.DateTime), "period_ending": end.Format(time.DateTime),
		"num_hosts": len(hosts), "num_hosts_done": len(log), "num_hosts_running": 0,
		"num_hosts_not_run": len(notRun), "hosts_not_run": notRun,
		"total_instances": total, "total_errors": 0,
		"overall_status": status + " hosts done. 0 errors.",
		"log":            log,
	}, nil
}
