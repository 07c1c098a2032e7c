package nova

import (
	"sort"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// internalZone is where Nova lists its control-plane services.
const internalZone = "internal"

func (a *API) zoneRoutes() []route.Route[handler] {
	const rule = "os_compute_api:os-availability-zone:"
	return []route.Route[handler]{
		{Pattern: "GET /os-availability-zone", Access: anyone, Policy: rule + "list", Handle: a.zoneList},
		{Pattern: "GET /os-availability-zone/detail", Access: admin, Policy: rule + "detail", Handle: a.zoneDetail},
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

// listHosts reads every host, sorted by name, each with its effective
// availability zone in AZ (see withZones).
func (q *request) listHosts() ([]*structs.Host, error) {
	var out structs.HostListResponse
	if err := q.call("Host.List", &structs.HostListRequest{}, &out); err != nil {
		return nil, err
	}
	hosts, err := q.withZones(out.Hosts...)
	if err != nil {
		return nil, err
	}
	sort.Slice(hosts, func(i, j int) bool { return hosts[i].Name < hosts[j].Name })
	return hosts, nil
}

// withZones returns the hosts with AZ set to their effective zone: the
// zone of an aggregate that contains them, else their agent's, else
// Nova's default. Hosts whose zone is their agent's are returned as
// they are; the others are copies, so what an RPC shares is never
// modified.
func (q *request) withZones(hosts ...*structs.Host) ([]*structs.Host, error) {
	var out structs.AggregateListResponse
	if err := q.call("Aggregate.List", &structs.AggregateListRequest{}, &out); err != nil {
		return nil, err
	}
	res := make([]*structs.Host, 0, len(hosts))
	for _, h := range hosts {
		if h == nil {
			res = append(res, h)
			continue
		}
		if z := structs.EffectiveAZ(h, out.Aggregates); z != h.AZ {
			c := *h
			c.AZ = z
			h = &c
		}
		res = append(res, h)
	}
	return res, nil
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

// zoned is a host read by RPC, with its effective zone (see withZones).
func (q *request) zoned(h *structs.Host, err error) (*structs.Host, error) {
	if err != nil || h == nil {
		return h, err
	}
	hosts, err := q.withZones(h)
	if err != nil {
		return nil, err
	}
	return hosts[0], nil
}

// forcedHost splits Nova's legacy availability_zone "az:host",
// "az:host:node" or "az::node" (admin only) into the zone and the host
// and node names the server is forced onto.
func forcedHost(az string) (zone, host, node string, err error) {
	switch strings.Count(az, ":") {
	case 0:
		return az, "", "", nil
	case 1:
		zone, host, _ = strings.Cut(az, ":")
	case 2:
		parts := strings.Split(az, ":")
		zone, host, node = parts[0], parts[1], parts[2]
	default:
		return "", "", "", badRequest("Invalid input received: Unable to parse availability_zone")
	}
	return zone, host, node, nil
}
