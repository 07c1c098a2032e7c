package nova

import (
	"sort"

	"github.com/stratus-cloud/stratus/structs"
)

// internalZone is where Nova lists its control-plane services.
const internalZone = "internal"

func (a *API) zoneRoutes() []routeSpec {
	const rule = "os_compute_api:os-availability-zone:"
	return []routeSpec{
		{pattern: "GET /os-availability-zone", access: anyone, policy: rule + "list", handle: a.zoneList},
		{pattern: "GET /os-availability-zone/detail", access: admin, policy: rule + "detail", handle: a.zoneDetail},
	}
}

// zoneHosts groups hosts by availability zone.
func zoneHosts(hosts []*structs.Host) (names []string, byZone map[string][]*structs.Host) {
	byZone = map[string][]*structs.Host{}
	for _, h := range hosts {
		z := hostZone(h)
		if _, ok := byZone[z]; !ok {
			names = append(names, z)
		}
		byZone[z] = append(byZone[z], h)
	}
	sort.Strings(names)
	return names, byZone
}

// zoneAvailable reports whether a zone can take servers: some host in it
// is enabled and up.
func zoneAvailable(hosts []*structs.Host) bool {
	for _, h := range hosts {
		if h.Enabled && h.Up() {
			return true
		}
	}
	return false
}

func (q *request) listHosts() ([]*structs.Host, error) {
	var out structs.HostListResponse
	if err := q.call("Host.List", &structs.HostListRequest{}, &out); err != nil {
		return nil, err
	}
	sort.Slice(out.Hosts, func(i, j int) bool { return out.Hosts[i].Name < out.Hosts[j].Name })
	return out.Hosts, nil
}

// zoneList answers GET /os-availability-zone: the zones of the hosts.
func (a *API) zoneList(q *request) (*reply, error) {
	hosts, err := q.listHosts()
	if err != nil {
		return nil, err
	}
	names, byZone := zoneHosts(hosts)
	info := make([]any, 0, len(names))
	for _, z := range names {
		info = append(info, map[string]any{"zoneName": z, "zoneState": map[string]bool{"available": zoneAvailable(byZone[z])}, "hosts": nil})
	}
	return okReply(map[string]any{"availabilityZoneInfo": info})
}

// zoneDetail answers GET /os-availability-zone/detail (admin): each zone
// with its nova-compute services, and the internal zone with the
// control-plane servers as nova-scheduler and nova-conductor.
func (a *API) zoneDetail(q *request) (*reply, error) {
	hosts, err := q.listHosts()
	if err != nil {
		return nil, err
	}
	var info []any
	if members := q.api.servers(); len(members) > 0 {
		svcHosts := map[string]any{}
		for _, m := range members {
			state := map[string]any{"available": m.Alive, "active": true, "updated_at": nil}
			svcHosts[m.Name] = map[string]any{"nova-scheduler": state, "nova-conductor": state}
		}
		info = append(info, map[string]any{"zoneName": internalZone, "zoneState": map[string]bool{"available": true}, "hosts": svcHosts})
	}
	names, byZone := zoneHosts(hosts)
	for _, z := range names {
		svcHosts := map[string]any{}
		for _, h := range byZone[z] {
			svcHosts[h.Name] = map[string]any{"nova-compute": map[string]any{
				"available": h.Up(), "active": h.Enabled, "updated_at": pyTime(h.StatusUpdatedAt)}}
		}
		info = append(info, map[string]any{"zoneName": z, "zoneState": map[string]bool{"available": zoneAvailable(byZone[z])}, "hosts": svcHosts})
	}
	if info == nil {
		info = []any{}
	}
	return okReply(map[string]any{"availabilityZoneInfo": info})
}
