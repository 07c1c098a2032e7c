package nova

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

func (a *API) serverList(q *request) (*reply, error)   { return a.listServers(q, false) }
func (a *API) serverDetail(q *request) (*reply, error) { return a.listServers(q, true) }

// serverQueryParams are the query parameters Nova's server list schema
// knows; from 2.75 any other is a 400.
var serverQueryParams = []string{"user_id", "project_id", "tenant_id", "launch_index", "image_ref", "image",
	"kernel_id", "ramdisk_id", "hostname", "key_name", "power_state", "vm_state", "task_state", "host", "node",
	"flavor", "reservation_id", "launched_at", "terminated_at", "availability_zone", "name", "display_name",
	"description", "display_description", "locked_by", "uuid", "root_device_name", "config_drive",
	"access_ip_v4", "access_ip_v6", "auto_disk_config", "progress", "sort_key", "sort_dir", "all_tenants",
	"soft_deleted", "deleted", "status", "changes-since", "ip", "ip6", "created_at", "block_device_mapping",
	"services", "metadata", "system_metadata", "info_cache", "security_groups", "pci_devices", "limit",
	"marker", "tags", "tags-any", "not-tags", "not-tags-any", "changes-before", "locked"}

// memberFilters are the filters Nova lets non-admins use, by the
// microversion that introduced them; admins may use every filter.
var memberFilters = map[string]int{
	"changes-since": 1, "flavor": 1, "image": 1, "ip": 1, "name": 1, "reservation_id": 1, "status": 1,
	"ip6": 5, "tags": 26, "tags-any": 26, "not-tags": 26, "not-tags-any": 26, "changes-before": 66,
	"locked": 73, "availability_zone": 83, "config_drive": 83, "key_name": 83, "created_at": 83,
	"launched_at": 83, "terminated_at": 83, "power_state": 83, "task_state": 83, "vm_state": 83,
	"progress": 83, "user_id": 83,
}

// novaStatuses are the statuses a status filter may name (2.38 refuses
// others).
var novaStatuses = []string{"ACTIVE", "BUILD", "DELETED", "ERROR", "HARD_REBOOT", "MIGRATING", "PASSWORD",
	"PAUSED", "REBOOT", "REBUILD", "RESCUE", "RESIZE", "REVERT_RESIZE", "SHELVED", "SHELVED_OFFLOADED",
	"SHUTOFF", "SOFT_DELETED", "SUSPENDED", "UNKNOWN", "VERIFY_RESIZE"}

// serverEntry is an instance with its host, for filters, sorting and views.
type serverEntry struct {
	inst *structs.Instance
	host *structs.Host
}

// listServers answers GET /servers and /servers/detail: the caller's
// project (every project for admins with all_tenants), Nova's filters,
// sort keys and pagination.
func (a *API) listServers(q *request, detail bool) (*reply, error) {
	if err := q.checkQuery(serverQueryParams...); err != nil {
		return nil, err
	}
	v := q.query()
	args := structs.InstanceListRequest{ProjectID: q.token.ProjectID}
	if vals := v["all_tenants"]; len(vals) > 0 {
		// As Nova's is_all_tenants: the last value counts, and an empty
		// one (?all_tenants) means true.
		all := true
		if s := vals[len(vals)-1]; s != "" {
			var err error
			if all, err = parseBool(s); err != nil {
				return nil, badRequest("Invalid input received: %s", err)
			}
		}
		if all {
			rule := serverRule + "index:get_all_tenants"
			if detail {
				rule = serverRule + "detail:get_all_tenants"
			}
			if !q.isAdmin() {
				return nil, policyFault(rule)
			}
			args.ProjectID = v.Get("project_id")
			if p := v.Get("tenant_id"); p != "" {
				args.ProjectID = p
			}
		}
	}
	pg, err := q.parsePage()
	if err != nil {
		return nil, err
	}
	filters, err := q.serverFilters()
	if err != nil {
		return nil, err
	}
	var out structs.InstanceListResponse
	if err := q.call("Instance.List", &args, &out); err != nil {
		return nil, err
	}
	hosts, err := q.hostsByID()
	if err != nil {
		return nil, err
	}
	if v.Get("ip") != "" || v.Get("ip6") != "" {
		q.prefetchNetInfo(instanceIDs(out.Instances))
	}
	var entries []serverEntry
	for _, inst := range out.Instances {
		e := serverEntry{inst: inst, host: hosts[inst.HostID]}
		if all(filters, e) {
			entries = append(entries, e)
		}
	}
	if err := q.sortServers(entries); err != nil {
		return nil, err
	}
	entries, err = paginate(entries, pg, func(e serverEntry) string { return e.inst.ID })
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(entries))
	if detail && len(entries) > 0 {
		ids := make([]string, 0, len(entries))
		for _, e := range entries {
			ids = append(ids, e.inst.ID)
		}
		q.prefetchNetInfo(ids)
	}
	for _, e := range entries {
		if detail {
			views = append(views, q.serverView(e.inst, e.host, viewOpts{full: true}))
		} else {
			views = append(views, map[string]any{"id": e.inst.ID, "name": e.inst.Name, "links": q.links("servers", e.inst.ID)})
		}
	}
	body := map[string]any{"servers": views}
	collection := []string{"servers"}
	if detail {
		collection = append(collection, "detail")
	}
	if len(entries) > 0 {
		if l := q.nextLinks(pg, len(entries), entries[len(entries)-1].inst.ID, collection...); l != nil {
			body["servers_links"] = l
		}
	}
	return okReply(body)
}

// serverFilters builds the request's filters; those the caller may not
// use are ignored, as Nova ignores them.
func (q *request) serverFilters() ([]func(serverEntry) bool, error) {
	v := q.query()
	var filters []func(serverEntry) bool
	add := func(f func(serverEntry) bool) { filters = append(filters, f) }
	allowed := func(k string) bool {
		if !v.Has(k) {
			return false
		}
		since, ok := memberFilters[k]
		return q.isAdmin() || (ok && q.atLeast(since))
	}
	equal := func(k string, field func(serverEntry) string) {
		if allowed(k) {
			want := v.Get(k)
			add(func(e serverEntry) bool { return field(e) == want })
		}
	}
	equal("flavor", func(e serverEntry) string { return e.inst.FlavorID })
	equal("image", func(e serverEntry) string { return e.inst.ImageID })
	equal("reservation_id", func(e serverEntry) string { return e.inst.ReservationID })
	equal("availability_zone", func(e serverEntry) string { return zoneOf(e.inst, e.host) })
	equal("key_name", func(e serverEntry) string { return e.inst.KeyName })
	equal("vm_state", func(e serverEntry) string { return e.inst.VMState })
	equal("task_state", func(e serverEntry) string { return e.inst.TaskState })
	equal("power_state", func(e serverEntry) string { return strconv.Itoa(e.inst.PowerState) })
	equal("user_id", func(e serverEntry) string { return e.inst.UserID })
	equal("uuid", func(e serverEntry) string { return e.inst.ID })
	equal("host", func(e serverEntry) string { return hostName(e.host) })
	equal("node", func(e serverEntry) string { return hostName(e.host) })
	accessIPFilters(v, allowed, add)
	if allowed("name") {
		re, err := regexp.Compile("(?i)" + v.Get("name"))
		if err != nil {
			re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(v.Get("name")))
		}
		add(func(e serverEntry) bool { return re.MatchString(e.inst.Name) })
	}
	if allowed("status") {
		f, err := q.statusFilter(v["status"])
		if err != nil {
			return nil, err
		}
		add(f)
	}
	if err := q.timeFilters(allowed, add); err != nil {
		return nil, err
	}
	if err := q.ipFilters(allowed, add); err != nil {
		return nil, err
	}
	for _, k := range []string{"tags", "tags-any", "not-tags", "not-tags-any"} {
		if allowed(k) && v.Get(k) != "" {
			add(tagFilter(k, v.Get(k)))
		}
	}
	if allowed("locked") {
		locked, err := parseBool(v.Get("locked"))
		if err != nil {
			return nil, badRequest("Invalid input received: %s", err)
		}
		add(func(e serverEntry) bool { return e.inst.Locked == locked })
	}
	equal("locked_by", func(e serverEntry) string { return e.inst.LockedBy })
	if !q.listsSoftDeleted(allowed) {
		add(func(e serverEntry) bool { return e.inst.VMState != structs.VMStateSoftDeleted })
	}
	return filters, nil
}

// listsSoftDeleted reports whether a list shows soft-deleted servers,
// which Nova hides unless asked for by status (SOFT_DELETED), vm_state
// (soft-delete), or by an admin's deleted or soft_deleted filter.
func (q *request) listsSoftDeleted(allowed func(string) bool) bool {
	v := q.query()
	if allowed("status") {
		for _, s := range v["status"] {
			if strings.EqualFold(s, "SOFT_DELETED") {
				return true
			}
		}
	}
	if allowed("vm_state") && v.Get("vm_state") == structs.VMStateSoftDeleted {
		return true
	}
	for _, k := range []string{"deleted", "soft_deleted"} {
		if q.isAdmin() && v.Has(k) {
			if b, err := parseBool(v.Get(k)); err == nil && b {
				return true
			}
		}
	}
	return false
}

// statusFilter matches any of the given statuses (case-insensitive);
// from 2.38 an unknown status is a 400, before it matches nothing.
func (q *request) statusFilter(values []string) (func(serverEntry) bool, error) {
	want := map[string]bool{}
	for _, s := range values {
		s = strings.ToUpper(s)
		if !containsString(novaStatuses, s) && q.atLeast(38) {
			return nil, badRequest("Invalid status value")
		}
		want[s] = true
	}
	return func(e serverEntry) bool { return want[e.inst.Status()] }, nil
}

// timeFilters adds changes-since and changes-before (2.66).
func (q *request) timeFilters(allowed func(string) bool, add func(func(serverEntry) bool)) error {
	v := q.query()
	var since, before int64
	if allowed("changes-since") {
		t, err := parseTime("changes-since", v.Get("changes-since"))
		if err != nil {
			return err
		}
		since = t.UnixNano()
		add(func(e serverEntry) bool { return e.inst.UpdatedAt >= since })
	}
	if allowed("changes-before") {
		t, err := parseTime("changes-before", v.Get("changes-before"))
		if err != nil {
			return err
		}
		before = t.UnixNano()
		add(func(e serverEntry) bool { return e.inst.UpdatedAt <= before })
	}
	if since != 0 && before != 0 && since > before {
		return badRequest("The value of changes-since must be less than or equal to changes-before.")
	}
	return nil
}

func hostName(h *structs.Host) string {
	if h == nil {
		return ""
	}
	return h.Name
}

// serverSortKeys compare servers by Nova's sort keys. Keys of fields
// Stratus does not record (access IPs, launch times, locks, …) are valid
// and compare equal, as they would for servers that all lack them.
var serverSortKeys = map[string]func(a, b serverEntry) int{
	"created_at":          func(a, b serverEntry) int { return cmpInt(a.inst.CreatedAt, b.inst.CreatedAt) },
	"updated_at":          func(a, b serverEntry) int { return cmpInt(a.inst.UpdatedAt, b.inst.UpdatedAt) },
	"uuid":                func(a, b serverEntry) int { return strings.Compare(a.inst.ID, b.inst.ID) },
	"display_name":        func(a, b serverEntry) int { return strings.Compare(a.inst.Name, b.inst.Name) },
	"display_description": func(a, b serverEntry) int { return strings.Compare(a.inst.Description, b.inst.Description) },
	"hostname": func(a, b serverEntry) int {
		return strings.Compare(guestHostname(a.inst), guestHostname(b.inst))
	},
	"vm_state":          func(a, b serverEntry) int { return strings.Compare(a.inst.VMState, b.inst.VMState) },
	"task_state":        func(a, b serverEntry) int { return strings.Compare(a.inst.TaskState, b.inst.TaskState) },
	"power_state":       func(a, b serverEntry) int { return cmpInt(a.inst.PowerState, b.inst.PowerState) },
	"availability_zone": func(a, b serverEntry) int { return strings.Compare(zoneOf(a.inst, a.host), zoneOf(b.inst, b.host)) },
	"key_name":          func(a, b serverEntry) int { return strings.Compare(a.inst.KeyName, b.inst.KeyName) },
	"project_id":        func(a, b serverEntry) int { return strings.Compare(a.inst.ProjectID, b.inst.ProjectID) },
	"user_id":           func(a, b serverEntry) int { return strings.Compare(a.inst.UserID, b.inst.UserID) },
	"image_ref":         func(a, b serverEntry) int { return strings.Compare(a.inst.ImageID, b.inst.ImageID) },
	"instance_type_id":  func(a, b serverEntry) int { return strings.Compare(a.inst.FlavorID, b.inst.FlavorID) },
	"host":              func(a, b serverEntry) int { return strings.Compare(hostName(a.host), hostName(b.host)) },
	"node":              func(a, b serverEntry) int { return strings.Compare(hostName(a.host), hostName(b.host)) },
	"access_ip_v4":      func(a, b serverEntry) int { return strings.Compare(a.inst.AccessIPv4, b.inst.AccessIPv4) },
	"access_ip_v6":      func(a, b serverEntry) int { return strings.Compare(a.inst.AccessIPv6, b.inst.AccessIPv6) },
	"auto_disk_config":  func(a, b serverEntry) int { return cmpBool(a.inst.AutoDiskConfig, b.inst.AutoDiskConfig) },
	"launch_index":      func(a, b serverEntry) int { return cmpInt(a.inst.LaunchIndex, b.inst.LaunchIndex) },
	"launched_at":       func(a, b serverEntry) int { return cmpInt(a.inst.LaunchedAt, b.inst.LaunchedAt) },
	"terminated_at":     func(a, b serverEntry) int { return cmpInt(a.inst.TerminatedAt, b.inst.TerminatedAt) },
	"config_drive":      equalKey, "kernel_id": equalKey, "ramdisk_id": equalKey, "progress": equalKey,
	"locked":           func(a, b serverEntry) int { return cmpBool(a.inst.Locked, b.inst.Locked) },
	"locked_by":        func(a, b serverEntry) int { return strings.Compare(a.inst.LockedBy, b.inst.LockedBy) },
	"root_device_name": equalKey,
}

func equalKey(a, b serverEntry) int { return 0 }

// sortServers applies sort_key/sort_dir pairs (repeatable; Nova's
// default created_at desc), then created_at and id as tie-breakers.
func (q *request) sortServers(entries []serverEntry) error {
	v := q.query()
	keys, dirs := v["sort_key"], v["sort_dir"]
	if len(keys) == 0 {
		keys = []string{"created_at"}
	}
	if len(dirs) == 0 {
		dirs = []string{"desc"}
	}
	if len(dirs) > len(keys) {
		return badRequest("Sort direction size exceeds sort key size")
	}
	keys = append(keys, "created_at", "uuid")
	var cmps []func(a, b serverEntry) int
	for i, k := range keys {
		cmp, ok := serverSortKeys[k]
		if !ok {
			return badRequest("Invalid input for query parameters sort_key. Value: %s. '%s' is not one of %s", k, k, pyRepr(anySlice(sortedKeys(serverSortKeys))))
		}
		if (k == "host" || k == "node") && !q.isAdmin() {
			return policyFault(serverRule + "index:sort_key:" + k)
		}
		dir := dirs[0]
		if i < len(dirs) {
			dir = dirs[i]
		}
		if dir != "asc" && dir != "desc" {
			return badRequest("Invalid input for query parameters sort_dir. Value: %s. '%s' is not one of ['asc', 'desc']", dir, dir)
		}
		if dir == "desc" {
			c := cmp
			cmp = func(a, b serverEntry) int { return -c(a, b) }
		}
		cmps = append(cmps, cmp)
	}
	sortStable(entries, func(a, b serverEntry) bool {
		for _, c := range cmps {
			if r := c(a, b); r != 0 {
				return r < 0
			}
		}
		return false
	})
	return nil
}
