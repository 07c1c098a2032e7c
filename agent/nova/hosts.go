package nova

import (
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// os-hosts: Nova's older admin view of the cluster's hosts, gone from
// 2.43 (os-hypervisors and os-services replace it). The rows are the
// services' (services.go): the control-plane servers as nova-scheduler
// and nova-conductor, each hypervisor host as nova-compute.

const hostRule = "os_compute_api:os-hosts:"

// hostsMax is the last microversion of os-hosts.
const hostsMax = 42

func (a *API) hostRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-hosts", MaxVersion: hostsMax, Access: admin, Policy: hostRule + "list", Handle: a.hostList},
		{Pattern: "GET /os-hosts/{id}", MaxVersion: hostsMax, Access: admin, Policy: hostRule + "show", Handle: a.hostShow},
		{Pattern: "PUT /os-hosts/{id}", MaxVersion: hostsMax, Access: admin, Policy: hostRule + "update", Handle: a.hostUpdate},
		{Pattern: "GET /os-hosts/{id}/reboot", MaxVersion: hostsMax, Access: admin, Policy: hostRule + "reboot", Handle: a.hostPowerAction},
		{Pattern: "GET /os-hosts/{id}/shutdown", MaxVersion: hostsMax, Access: admin, Policy: hostRule + "shutdown", Handle: a.hostPowerAction},
		{Pattern: "GET /os-hosts/{id}/startup", MaxVersion: hostsMax, Access: admin, Policy: hostRule + "start", Handle: a.hostPowerAction},
	}
}

// serviceTopics are Nova's service topics by binary, os-hosts' "service".
var serviceTopics = map[string]string{binCompute: "compute", binScheduler: "scheduler", binConductor: "conductor"}

// hostList answers GET /os-hosts: every enabled service's host, as
// Nova lists services with disabled=False (a host disabled through
// os-services or os-hosts leaves the list), filtered by zone. Other
// query parameters are ignored, as Nova's schema allows them.
func (a *API) hostList(q *request) (*reply, error) {
	svcs, err := q.services()
	if err != nil {
		return nil, err
	}
	// webob's GET.get answers the last of repeated values; an empty
	// zone filters nothing.
	zone := ""
	if zs := q.query()["zone"]; len(zs) > 0 {
		zone = zs[len(zs)-1]
	}
	hosts := []any{}
	for _, s := range svcs {
		z := internalZone
		if s.host != nil {
			if !s.host.Enabled {
				continue
			}
			z = hostZone(s.host)
		}
		if zone != "" && z != zone {
			continue
		}
		hosts = append(hosts, map[string]any{"host_name": s.hostName(), "service": serviceTopics[s.binary], "zone": z})
	}
	return okReply(map[string]any{"hosts": hosts})
}

// computeHost finds a hypervisor host by name: Nova maps only compute
// hosts to cells, so any other name is its HostMappingNotFound (404).
func (q *request) computeHost(name string) (*structs.Host, error) {
	hosts, err := q.listHosts()
	if err != nil {
		return nil, err
	}
	for _, h := range hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return nil, notFound("Host '%s' is not mapped to any cell", name)
}

// hostResource is one row of a host's show: a total, or a sum over
// instances.
type hostResource struct {
	project            string
	cpu, memMB, diskGB int64
}

func (r *hostResource) add(fl *structs.Flavor) {
	if fl == nil {
		return
	}
	r.cpu += int64(fl.VCPUs)
	r.memMB += int64(fl.MemoryMB)
	r.diskGB += int64(fl.RootGB + fl.EphemeralGB)
}

// hostShow answers GET /os-hosts/{name}: the host's capacity
// ("(total)"), what its resource tracker counts as used ("(used_now)",
// memory including the host's reservation, as os-hypervisors), the sum
// of its instances' flavors ("(used_max)"), then that sum per project
// in the order the projects' first instances were created.
func (a *API) hostShow(q *request) (*reply, error) {
	name := q.param("id")
	h, err := q.computeHost(name)
	if err != nil {
		return nil, err
	}
	var out structs.InstanceListResponse
	if err := q.call("Instance.List", &structs.InstanceListRequest{HostID: h.ID}, &out); err != nil {
		return nil, err
	}
	insts := out.Instances
	sortStable(insts, func(a, b *structs.Instance) bool { return a.CreateIndex < b.CreateIndex })
	stats := (&hypervisor{host: h, insts: insts}).stats()
	rows := []*hostResource{
		{project: "(total)", cpu: stats["vcpus"], memMB: stats["memory_mb"], diskGB: stats["local_gb"]},
		{project: "(used_now)", cpu: stats["vcpus_used"], memMB: stats["memory_mb_used"], diskGB: stats["local_gb_used"]},
	}
	usedMax := &hostResource{project: "(used_max)"}
	rows = append(rows, usedMax)
	byProject := map[string]*hostResource{}
	for _, inst := range insts {
		usedMax.add(inst.Flavor)
		r := byProject[inst.ProjectID]
		if r == nil {
			r = &hostResource{project: inst.ProjectID}
			byProject[inst.ProjectID] = r
			rows = append(rows, r)
		}
		r.add(inst.Flavor)
	}
	views := make([]any, 0, len(rows))
	for _, r := range rows {
		views = append(views, map[string]any{"resource": map[string]any{
			"host": name, "project": r.project, "cpu": r.cpu, "memory_mb": r.memMB, "disk_gb": r.diskGB}})
	}
	return okReply(map[string]any{"host": views})
}

// hostToggles are the values os-hosts' update accepts for status and
// maintenance_mode.
var hostToggles = []string{"enable", "disable", "Enable", "Disable", "ENABLE", "DISABLE"}

var hostUpdateSchema = &schema{types: tObject, props: map[string]*schema{
	"status":           {types: tString, enum: hostToggles},
	"maintenance_mode": {types: tString, enum: hostToggles},
}}

// hostUpdate answers PUT /os-hosts/{name} with status and/or
// maintenance_mode, each "enable" or "disable". Status enables or
// disables scheduling onto the host, as os-services does (Nova's
// compute manager answers "enabled"/"disabled" whatever its driver).
// Maintenance mode is a driver's, and no Stratus driver has one: 501,
// as Nova's libvirt, Ironic and VMware drivers answer — after the status
// change, which Nova makes first.
func (a *API) hostUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, hostUpdateSchema)
	if err != nil {
		return nil, err
	}
	status, hasStatus := stringOf(body, "status")
	_, hasMaint := stringOf(body, "maintenance_mode")
	if !hasStatus && !hasMaint {
		return nil, badRequest("%s is not valid under any of the given schemas", pyRepr(body))
	}
	name := q.param("id")
	h, err := q.computeHost(name)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"host": name}
	if hasStatus {
		enabled := strings.ToLower(strings.TrimSpace(status)) == "enable"
		if _, err := q.setEnabled(h, enabled, ""); err != nil {
			return nil, err
		}
		out["status"] = "disabled"
		if enabled {
			out["status"] = "enabled"
		}
	}
	if hasMaint {
		return nil, notSupported()
	}
	return okReply(out)
}

// hostPowerAction answers GET /os-hosts/{name}/{startup, shutdown,
// reboot}: powering a hypervisor host is a driver's, and no Stratus
// driver does it, so a known host is 501 as with Nova's libvirt,
// Ironic and VMware drivers.
func (a *API) hostPowerAction(q *request) (*reply, error) {
	if _, err := q.computeHost(q.param("id")); err != nil {
		return nil, err
	}
	return nil, notSupported()
}
