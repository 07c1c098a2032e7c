package nova

import (
	"encoding/json"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const hypervisorRule = "os_compute_api:os-hypervisors:"

func (a *API) hypervisorRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-hypervisors", Access: admin, Policy: hypervisorRule + "list", Handle: a.hypervisorList},
		{Pattern: "GET /os-hypervisors/detail", Access: admin, Policy: hypervisorRule + "list-detail", Handle: a.hypervisorDetail},
		{Pattern: "GET /os-hypervisors/statistics", MaxVersion: 87, Access: admin, Policy: hypervisorRule + "statistics", Handle: a.hypervisorStatistics},
		{Pattern: "GET /os-hypervisors/{id}", Access: admin, Policy: hypervisorRule + "show", Handle: a.hypervisorShow},
		{Pattern: "GET /os-hypervisors/{id}/uptime", MaxVersion: 87, Access: admin, Policy: hypervisorRule + "uptime", Handle: a.hypervisorUptime},
		{Pattern: "GET /os-hypervisors/{pattern}/search", MaxVersion: 52, Access: admin, Policy: hypervisorRule + "search", Handle: a.hypervisorSearch},
		{Pattern: "GET /os-hypervisors/{pattern}/servers", MaxVersion: 52, Access: admin, Policy: hypervisorRule + "servers", Handle: a.hypervisorServers},
	}
}

// hypervisor is a host with the instances placed on it.
type hypervisor struct {
	host  *structs.Host
	insts []*structs.Instance
}

// hypervisors reads every host (by id, as Nova orders them) and the
// instances on each.
func (q *request) hypervisors() ([]*hypervisor, error) {
	hosts, err := q.listHosts()
	if err != nil {
		return nil, err
	}
	var out structs.InstanceListResponse
	if err := q.call("Instance.List", &structs.InstanceListRequest{}, &out); err != nil {
		return nil, err
	}
	byHost := map[string][]*structs.Instance{}
	for _, inst := range out.Instances {
		if inst.HostID != "" {
			byHost[inst.HostID] = append(byHost[inst.HostID], inst)
		}
	}
	hvs := make([]*hypervisor, 0, len(hosts))
	for _, h := range hosts {
		hvs = append(hvs, &hypervisor{host: h, insts: byHost[h.ID]})
	}
	sort.SliceStable(hvs, func(i, j int) bool { return hvs[i].host.CreateIndex < hvs[j].host.CreateIndex })
	return hvs, nil
}

// hypervisorID is a host's id as the microversion shows it: the Raft
// index of its registration before 2.53, its UUID from 2.53.
func (q *request) hypervisorID(h *structs.Host) any {
	if q.atLeast(53) {
		return h.ID
	}
	return h.CreateIndex
}

func (q *request) idString(h *structs.Host) string {
	if q.atLeast(53) {
		return h.ID
	}
	return strconv.FormatUint(h.CreateIndex, 10)
}

func hostState(h *structs.Host) string {
	if h.Up() {
		return "up"
	}
	return "down"
}

func hostEnabled(h *structs.Host) string {
	if h.Enabled {
		return "enabled"
	}
	return "disabled"
}

// hypervisorView is a hypervisor in Nova's body: the summary, or the
// detail (statistics until 2.88, uptime from it).
func (q *request) hypervisorView(hv *hypervisor, detail, withServers bool) map[string]any {
	h := hv.host
	v := map[string]any{"id": q.hypervisorID(h), "hypervisor_hostname": h.Name, "state": hostState(h), "status": hostEnabled(h)}
	if withServers && (len(hv.insts) > 0 || q.atLeast(75)) {
		servers := make([]any, 0, len(hv.insts))
		for _, inst := range hv.insts {
			servers = append(servers, map[string]string{"name": inst.Name, "uuid": inst.ID})
		}
		v["servers"] = servers
	}
	if !detail {
		return v
	}
	v["hypervisor_type"] = h.HypervisorType
	v["hypervisor_version"] = versionInt(h.HypervisorVersion)
	v["host_ip"] = hostIP(h)
	v["service"] = map[string]any{"host": h.Name, "id": q.computeServiceID(h), "disabled_reason": nullString(h.DisabledReason)}
	if q.atLeast(88) {
		v["uptime"] = nil
		return v
	}
	for k, n := range hv.stats() {
		v[k] = n
	}
	if q.atLeast(28) {
		v["cpu_info"] = cpuInfo(h)
	} else {
		v["cpu_info"] = jsonString(cpuInfo(h))
	}
	return v
}

// stats are a hypervisor's resource figures as Nova reports them;
// memory used includes the host's reservation.
func (hv *hypervisor) stats() map[string]int64 {
	h := hv.host
	total := func(class string) int64 {
		if inv := h.Inventories[class]; inv != nil {
			return inv.Total
		}
		return 0
	}
	reserved := int64(0)
	if inv := h.Inventories[structs.ResourceMemoryMB]; inv != nil {
		reserved = inv.Reserved
	}
	memUsed := h.Usage[structs.ResourceMemoryMB] + reserved
	diskUsed := h.Usage[structs.ResourceDiskGB]
	workload := int64(0)
	for _, inst := range hv.insts {
		if inst.TaskState != "" {
			workload++
		}
	}
	return map[string]int64{
		"vcpus": total(structs.ResourceVCPU), "vcpus_used": h.Usage[structs.ResourceVCPU],
		"memory_mb": total(structs.ResourceMemoryMB), "memory_mb_used": memUsed,
		"free_ram_mb": total(structs.ResourceMemoryMB) - memUsed,
		"local_gb":    total(structs.ResourceDiskGB), "local_gb_used": diskUsed,
		"free_disk_gb": total(structs.ResourceDiskGB) - diskUsed, "disk_available_least": total(structs.ResourceDiskGB) - diskUsed,
		"running_vms": int64(len(hv.insts)), "current_workload": workload,
	}
}

// versionInt is Nova's convert_version_to_int: "8.0.1" is 8000001.
func versionInt(v string) int64 {
	n := int64(0)
	for _, part := range strings.Split(v, ".") {
		d, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil {
			return 0
		}
		n = n*1000 + d
	}
	return n
}

// hostIP is the address the host's agent advertises.
func hostIP(h *structs.Host) any {
	for _, addr := range []string{h.HTTPAddr, h.RPCAddr} {
		if ip, _, err := net.SplitHostPort(addr); err == nil && ip != "" {
			return ip
		}
	}
	return nil
}

// cpuInfo is what Stratus knows of a host's CPU: architecture, model,
// vendor and the CPU feature traits.
func cpuInfo(h *structs.Host) map[string]any {
	features := []string{}
	for _, t := range h.Traits {
		if f, ok := strings.CutPrefix(t, "HW_CPU_X86_"); ok {
			features = append(features, strings.ToLower(f))
		}
	}
	return map[string]any{"arch": h.Arch, "model": h.Attributes["cpu_model"], "vendor": h.Attributes["cpu_vendor"], "features": features}
}

// hypervisorQuery reads with_servers and hypervisor_hostname_pattern
// (2.53) and filters by the pattern.
func (q *request) hypervisorQuery(hvs []*hypervisor) ([]*hypervisor, bool, error) {
	allowed := []string{}
	if q.atLeast(33) {
		allowed = append(allowed, "limit", "marker")
	}
	if q.atLeast(53) {
		allowed = append(allowed, "with_servers", "hypervisor_hostname_pattern")
	}
	if err := q.checkQuery(allowed...); err != nil {
		return nil, false, err
	}
	v := q.query()
	withServers := false
	if q.atLeast(53) && v.Has("with_servers") {
		b, err := parseBool(v.Get("with_servers"))
		if err != nil {
			return nil, false, badRequest("Invalid input for query parameters with_servers. Value: %s. %s", v.Get("with_servers"), err)
		}
		withServers = b
	}
	if q.atLeast(53) && v.Has("hypervisor_hostname_pattern") {
		if v.Has("limit") || v.Has("marker") {
			return nil, false, badRequest("Paging over hypervisors with the hypervisor_hostname_pattern query parameter is not supported.")
		}
		pattern := v.Get("hypervisor_hostname_pattern")
		if hvs = matchHypervisors(hvs, pattern); len(hvs) == 0 {
			return nil, false, notFound("No hypervisor matching '%s' could be found.", pattern)
		}
	}
	return hvs, withServers, nil
}

func matchHypervisors(hvs []*hypervisor, pattern string) []*hypervisor {
	var out []*hypervisor
	for _, hv := range hvs {
		if strings.Contains(hv.host.Name, pattern) {
			out = append(out, hv)
		}
	}
	return out
}

func (a *API) hypervisorList(q *request) (*reply, error)   { return a.listHypervisors(q, false) }
func (a *API) hypervisorDetail(q *request) (*reply, error) { return a.listHypervisors(q, true) }

func (a *API) listHypervisors(q *request, detail bool) (*reply, error) {
	hvs, err := q.hypervisors()
	if err != nil {
		return nil, err
	}
	hvs, withServers, err := q.hypervisorQuery(hvs)
	if err != nil {
		return nil, err
	}
	var next []link
	if q.atLeast(33) {
		pg, err := q.parsePage()
		if err != nil {
			return nil, err
		}
		if hvs, err = paginate(hvs, pg, func(hv *hypervisor) string { return q.idString(hv.host) }); err != nil {
			return nil, err
		}
		if len(hvs) > 0 {
			collection := []string{"os-hypervisors"}
			if detail {
				collection = append(collection, "detail")
			}
			next = q.nextLinks(pg, len(hvs), q.idString(hvs[len(hvs)-1].host), collection...)
		}
	}
	views := make([]any, 0, len(hvs))
	for _, hv := range hvs {
		views = append(views, q.hypervisorView(hv, detail, withServers))
	}
	body := map[string]any{"hypervisors": views}
	if next != nil {
		body["hypervisors_links"] = next
	}
	return okReply(body)
}

// findHypervisor finds a hypervisor by the id the microversion uses (a
// name is not an id: clients fall back to listing on the 404).
func (q *request) findHypervisor(hvs []*hypervisor, id string) (*hypervisor, error) {
	for _, hv := range hvs {
		if q.idString(hv.host) == id {
			return hv, nil
		}
	}
	return nil, notFound("Hypervisor with ID '%s' could not be found.", id)
}

func (a *API) hypervisorShow(q *request) (*reply, error) {
	hvs, err := q.hypervisors()
	if err != nil {
		return nil, err
	}
	allowed := []string{}
	if q.atLeast(53) {
		allowed = append(allowed, "with_servers")
	}
	if err := q.checkQuery(allowed...); err != nil {
		return nil, err
	}
	withServers := false
	if s := q.query().Get("with_servers"); q.atLeast(53) && s != "" {
		if withServers, err = parseBool(s); err != nil {
			return nil, badRequest("Invalid input for query parameters with_servers. Value: %s. %s", s, err)
		}
	}
	hv, err := q.findHypervisor(hvs, q.param("id"))
	if err != nil {
		return nil, err
	}
	v := q.hypervisorView(hv, true, withServers)
	if q.atLeast(88) {
		// As Nova: the host's uptime when its driver tells, else null.
		// A show waits for it a short while only.
		if up, err := q.hostUptime(hv.host, 10*time.Second); err == nil {
			v["uptime"] = up
		}
	}
	return okReply(map[string]any{"hypervisor": v})
}

// hypervisorUptime answers the uptime API (until 2.88): the summary
// view and uptime(1)'s line from the host's agent (server_guest.go); a
// driver of a remote hypervisor cannot tell (501).
func (a *API) hypervisorUptime(q *request) (*reply, error) {
	hvs, err := q.hypervisors()
	if err != nil {
		return nil, err
	}
	hv, err := q.findHypervisor(hvs, q.param("id"))
	if err != nil {
		return nil, err
	}
	up, err := q.hostUptime(hv.host, time.Minute)
	if err != nil {
		return nil, err
	}
	v := q.hypervisorView(hv, false, false)
	v["uptime"] = up
	return okReply(map[string]any{"hypervisor": v})
}

// hypervisorStatistics answers the statistics API (until 2.88): sums
// over every hypervisor.
func (a *API) hypervisorStatistics(q *request) (*reply, error) {
	hvs, err := q.hypervisors()
	if err != nil {
		return nil, err
	}
	stats := map[string]int64{"count": int64(len(hvs))}
	for k := range (&hypervisor{host: &structs.Host{}}).stats() {
		stats[k] = 0
	}
	for _, hv := range hvs {
		for k, n := range hv.stats() {
			stats[k] += n
		}
	}
	return okReply(map[string]any{"hypervisor_statistics": stats})
}

// hypervisorSearch and hypervisorServers are the pre-2.53 pattern APIs.
func (a *API) hypervisorSearch(q *request) (*reply, error) { return a.searchHypervisors(q, false) }

func (a *API) hypervisorServers(q *request) (*reply, error) { return a.searchHypervisors(q, true) }

func (a *API) searchHypervisors(q *request, withServers bool) (*reply, error) {
	hvs, err := q.hypervisors()
	if err != nil {
		return nil, err
	}
	pattern := q.param("pattern")
	hvs = matchHypervisors(hvs, pattern)
	if len(hvs) == 0 {
		return nil, notFound("No hypervisor matching '%s' could be found.", pattern)
	}
	views := make([]any, 0, len(hvs))
	for _, hv := range hvs {
		views = append(views, q.hypervisorView(hv, false, withServers))
	}
	return okReply(map[string]any{"hypervisors": views})
}

// jsonString renders cpu_info as the JSON string it was before 2.28.
func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
