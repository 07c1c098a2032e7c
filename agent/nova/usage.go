package nova

import (
	"encoding/json"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const usageRule = "os_compute_api:os-simple-tenant-usage:"

// usageRoutes are os-simple-tenant-usage: every project's usage for
// admins, one project's for its readers (another project's is a 403, as
// Nova's policy checks the project in the URL).
func (a *API) usageRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-simple-tenant-usage", Access: admin, Policy: usageRule + "list", Handle: a.usageList},
		{Pattern: "GET /os-simple-tenant-usage/{tenant_id}", Access: reader, Policy: usageRule + "show", Handle: a.usageShow},
	}
}

// usageServer is one server in a usage report: a live instance or the
// record of a deleted one. Times are unix nanoseconds truncated to
// microseconds, as Nova keeps them; deleted is 0 for a live instance.
type usageServer struct {
	id, name, project, flavor, state string
	vcpus, memoryMB, localGB         int
	created, deleted                 int64
}

func toMicros(ns int64) int64 { return ns - ns%int64(time.Microsecond) }

// pyTimeLayout is pyTime's layout.
const pyTimeLayout = "2006-01-02T15:04:05.000000"

func liveUsage(i *structs.Instance) *usageServer {
	u := &usageServer{id: i.ID, name: i.Name, project: i.ProjectID, state: i.VMState, created: toMicros(i.CreatedAt)}
	if f := i.Flavor; f != nil {
		u.flavor, u.vcpus, u.memoryMB, u.localGB = f.Name, f.VCPUs, f.MemoryMB, f.RootGB+f.EphemeralGB
	}
	return u
}

// deletedUsage is a deleted instance: Nova shows it "terminated".
func deletedUsage(d *structs.InstanceUsage) *usageServer {
	return &usageServer{id: d.InstanceID, name: d.Name, project: d.ProjectID, flavor: d.FlavorName, state: "terminated",
		vcpus: d.VCPUs, memoryMB: d.MemoryMB, localGB: d.LocalGB, created: toMicros(d.CreatedAt), deleted: toMicros(d.DeletedAt)}
}

// before is Nova's order of a usage report, which its paging follows:
// by project, then by instance id.
func (u *usageServer) before(o *usageServer) bool {
	if u.project != o.project {
		return u.project < o.project
	}
	return u.id < o.id
}

// inPeriod is Nova's window query: deleted after the period starts (or
// not deleted) and created before it ends.
func (u *usageServer) inPeriod(p *usagePeriod) bool {
	return (u.deleted == 0 || u.deleted > p.start) && u.created < p.stop
}

// hours is the server's overlap with the period, in hours.
func (u *usageServer) hours(p *usagePeriod) float64 {
	if u.deleted != 0 && u.deleted < p.start || u.created > p.stop {
		return 0
	}
	start, stop := max(u.created, p.start), p.stop
	if u.deleted != 0 {
		stop = min(stop, u.deleted)
	}
	// A period starting after now ends now: nothing, where Nova would
	// charge negative hours.
	if stop < start {
		return 0
	}
	return float64(stop-start) / float64(time.Hour)
}

// uptime is how long the server has existed in seconds: until now, or
// until it was deleted.
func (u *usageServer) uptime(now int64) int64 {
	end := now
	if u.deleted != 0 {
		end = u.deleted
	}
	return (end - u.created) / int64(time.Second)
}

// usagePeriod is a report's period (unix ns, microsecond precision; the
// times as given for display, as they may be past what unix ns hold),
// whether it details servers, and its page.
type usagePeriod struct {
	start, stop, now int64
	startT, stopT    time.Time
	detailed         bool
	pg               page
}

// usageTimePattern is the three formats Nova's usage API parses
// (%Y-%m-%dT%H:%M:%S, the same with .%f, and "%Y-%m-%d %H:%M:%S.%f"),
// with Python's one- or two-digit fields; a trailing Z (UTC) is accepted
// too, for ISO 8601 clients.
var usageTimePattern = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})(?:T(\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?| (\d{1,2}):(\d{1,2}):(\d{1,2})\.(\d{1,6}))Z?$`)

// parseUsageTime reads a start or end parameter; empty is now.
func parseUsageTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return now, nil
	}
	m := usageTimePattern.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, badRequest("Invalid datetime string: Datetime is in invalid format")
	}
	clock := m[4:8]
	if m[4] == "" {
		clock = m[8:12]
	}
	n := func(v string) int { i, _ := strconv.Atoi(v); return i }
	year, month, day := n(m[1]), n(m[2]), n(m[3])
	hour, minute, sec := n(clock[0]), n(clock[1]), n(clock[2])
	frac := clock[3] + strings.Repeat("0", 6-len(clock[3]))
	t := time.Date(year, time.Month(month), day, hour, minute, sec, n(frac)*int(time.Microsecond), time.UTC)
	// Python refuses what time.Date would normalise (February 30th).
	if year < 1 || t.Year() != year || int(t.Month()) != month || t.Day() != day || t.Hour() != hour || t.Minute() != minute || t.Second() != sec {
		return time.Time{}, badRequest("Invalid datetime string: Datetime is in invalid format")
	}
	return t, nil
}

// unixMicros is t in unix nanoseconds, truncated to microseconds and
// bounded to what they hold.
func unixMicros(t time.Time) int64 {
	switch {
	case t.After(time.Unix(0, math.MaxInt64)):
		return toMicros(math.MaxInt64)
	case t.Before(time.Unix(0, math.MinInt64)):
		return toMicros(math.MinInt64)
	}
	return toMicros(t.UnixNano())
}

// firstValue is a query parameter as Nova's parse_qs reads it: the first
// non-blank value.
func firstValue(v url.Values, key string) string {
	for _, s := range v[key] {
		if s != "" {
			return s
		}
	}
	return ""
}

// usagePeriod reads start, end and detailed, and from 2.40 limit and
// marker (before 2.40 a report silently stops at the largest page). The
// end is never later than now.
func (q *request) usagePeriod() (*usagePeriod, error) {
	v := q.query()
	now := time.Now().UTC().Truncate(time.Microsecond)
	p := &usagePeriod{now: now.UnixNano(), pg: page{limit: maxLimit}}
	if q.atLeast(40) {
		if v.Has("limit") {
			s := v.Get("limit")
			if s == "" {
				return nil, badRequest("Invalid input for query parameters limit. Value: . '' is too short")
			}
			if !digitsPattern.MatchString(s) {
				return nil, badRequest("Invalid input for query parameters limit. Value: %s. '%s' does not match '^[0-9]*$'", s, s)
			}
			p.pg.limit = maxLimit
			if n, err := strconv.Atoi(s); err == nil {
				p.pg.limit = min(n, maxLimit)
			}
		}
		p.pg.marker = v.Get("marker")
	}
	var err error
	if p.startT, err = parseUsageTime(firstValue(v, "start"), now); err != nil {
		return nil, err
	}
	if p.stopT, err = parseUsageTime(firstValue(v, "end"), now); err != nil {
		return nil, err
	}
	// Without either, Nova's period is the instant of the request.
	given := firstValue(v, "start") != "" || firstValue(v, "end") != ""
	if given && !p.startT.Before(p.stopT) {
		return nil, badRequest("Invalid start time. The start time cannot occur after the end time.")
	}
	if p.stopT.After(now) {
		p.stopT = now
	}
	p.start, p.stop = unixMicros(p.startT), unixMicros(p.stopT)
	p.detailed = firstValue(v, "detailed") == "1"
	return p, nil
}

// usageServers reads the servers of all projects or one, in report
// order, and the page of those in the period: the marker (a server of
// any state) is a position in that order, as in Nova.
func (q *request) usageServers(project string, p *usagePeriod) ([]*usageServer, error) {
	var out structs.InstanceUsageResponse
	if err := q.call("Instance.Usage", &structs.InstanceUsageRequest{ProjectID: project}, &out); err != nil {
		return nil, err
	}
	all := make([]*usageServer, 0, len(out.Instances)+len(out.Deleted))
	live := make(map[string]bool, len(out.Instances))
	for _, i := range out.Instances {
		live[i.ID] = true
		all = append(all, liveUsage(i))
	}
	for _, d := range out.Deleted {
		if !live[d.InstanceID] {
			all = append(all, deletedUsage(d))
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].before(all[j]) })
	var after *usageServer
	if p.pg.marker != "" {
		for _, u := range all {
			if u.id == p.pg.marker {
				after = u
				break
			}
		}
		if after == nil {
			return nil, badRequest("Marker %s could not be found.", p.pg.marker)
		}
	}
	var servers []*usageServer
	for _, u := range all {
		if len(servers) == p.pg.limit {
			break
		}
		if (after == nil || after.before(u)) && u.inPeriod(p) {
			servers = append(servers, u)
		}
	}
	return servers, nil
}

// usageFloat renders a float as Python's repr does (1.0, 0.25,
// 1234567.5; an exponent only outside 1e-4 to 1e16).
func usageFloat(f float64) json.Number {
	if a := math.Abs(f); f != 0 && (a < 1e-4 || a >= 1e16) {
		return json.Number(strconv.FormatFloat(f, 'e', -1, 64))
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return json.Number(s)
}

// tenantUsages groups a page of servers into Nova's tenant_usage
// objects, one per project in report order, with server_usages when
// detailed.
func tenantUsages(servers []*usageServer, p *usagePeriod, detailed bool) []map[string]any {
	var out []map[string]any
	var cur map[string]any
	var hours, vcpus, mem, disk float64
	flush := func() {
		if cur != nil {
			cur["total_hours"], cur["total_vcpus_usage"] = usageFloat(hours), usageFloat(vcpus)
			cur["total_memory_mb_usage"], cur["total_local_gb_usage"] = usageFloat(mem), usageFloat(disk)
			out = append(out, cur)
		}
	}
	for _, u := range servers {
		if cur == nil || cur["tenant_id"] != u.project {
			flush()
			cur = map[string]any{"tenant_id": u.project, "start": p.startT.Format(pyTimeLayout), "stop": p.stopT.Format(pyTimeLayout)}
			if detailed {
				cur["server_usages"] = []any{}
			}
			hours, vcpus, mem, disk = 0, 0, 0, 0
		}
		h := u.hours(p)
		hours += h
		vcpus += float64(u.vcpus) * h
		mem += float64(u.memoryMB) * h
		disk += float64(u.localGB) * h
		if detailed {
			cur["server_usages"] = append(cur["server_usages"].([]any), map[string]any{
				"instance_id": u.id,
				"name":        u.name,
				"tenant_id":   u.project,
				"flavor":      u.flavor,
				"vcpus":       u.vcpus,
				"memory_mb":   u.memoryMB,
				"local_gb":    u.localGB,
				"hours":       usageFloat(h),
				"started_at":  pyTime(u.created),
				"ended_at":    pyTime(u.deleted),
				"state":       u.state,
				"uptime":      u.uptime(p.now),
			})
		}
	}
	flush()
	return out
}

// usageList answers GET /os-simple-tenant-usage (admins): every
// project's usage over the period, server_usages with detailed=1, and
// from 2.40 a page of servers with a next link when it is full.
func (a *API) usageList(q *request) (*reply, error) {
	p, err := q.usagePeriod()
	if err != nil {
		return nil, err
	}
	servers, err := q.usageServers("", p)
	if err != nil {
		return nil, err
	}
	usages := tenantUsages(servers, p, p.detailed)
	if usages == nil {
		usages = []map[string]any{}
	}
	body := map[string]any{"tenant_usages": usages}
	if q.atLeast(40) && len(servers) > 0 {
		if l := q.nextLinks(p.pg, len(servers), servers[len(servers)-1].id, "os-simple-tenant-usage"); l != nil {
			body["tenant_usages_links"] = l
		}
	}
	return okReply(body)
}

// usageShow answers GET /os-simple-tenant-usage/{tenant_id}: one
// project's usage, always with server_usages; {} when it used nothing
// in the period.
func (a *API) usageShow(q *request) (*reply, error) {
	project := q.param("tenant_id")
	if !q.isAdmin() && project != q.token.ProjectID {
		return nil, policyFault(usageRule + "show")
	}
	p, err := q.usagePeriod()
	if err != nil {
		return nil, err
	}
	servers, err := q.usageServers(project, p)
	if err != nil {
		return nil, err
	}
	var usage any = map[string]any{}
	if u := tenantUsages(servers, p, true); len(u) > 0 {
		usage = u[0]
	}
	body := map[string]any{"tenant_usage": usage}
	if q.atLeast(40) && len(servers) > 0 {
		if l := q.nextLinks(p.pg, len(servers), servers[len(servers)-1].id, "os-simple-tenant-usage", project); l != nil {
			body["tenant_usage_links"] = l
		}
	}
	return okReply(body)
}
