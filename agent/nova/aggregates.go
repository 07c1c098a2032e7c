package nova

import (
	"hash/crc32"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

const aggregateRule = "os_compute_api:os-aggregates:"

func (a *API) aggregateRoutes() []routeSpec {
	return []routeSpec{
		{pattern: "GET /os-aggregates", access: admin, policy: aggregateRule + "index", handle: a.aggregateList},
		{pattern: "GET /os-aggregates/{id}", access: admin, policy: aggregateRule + "show", handle: a.aggregateShow},
		{pattern: "POST /os-aggregates", access: admin, policy: aggregateRule + "create", handle: a.aggregateWrite},
		{pattern: "PUT /os-aggregates/{id}", access: admin, policy: aggregateRule + "update", handle: a.aggregateWrite},
		{pattern: "DELETE /os-aggregates/{id}", access: admin, policy: aggregateRule + "delete", handle: a.aggregateWrite},
		{pattern: "POST /os-aggregates/{id}/action", access: admin, policy: aggregateRule + "add_host", handle: a.aggregateWrite},
	}
}

// aggregate is a host aggregate as Stratus has them: one per
// availability zone other than the default, whose hosts are the zone's
// (in Nova an availability zone is an aggregate with that metadata).
type aggregate struct {
	zone  string
	hosts []*structs.Host
}

// aggregateID is a zone's aggregate id: stable, derived from its name.
func aggregateID(zone string) int64 { return int64(crc32.ChecksumIEEE([]byte(zone)) & 0x7fffffff) }

func (q *request) aggregates() ([]*aggregate, error) {
	hosts, err := q.listHosts()
	if err != nil {
		return nil, err
	}
	names, byZone := zoneHosts(hosts)
	var out []*aggregate
	for _, z := range names {
		if z != defaultZone {
			out = append(out, &aggregate{zone: z, hosts: byZone[z]})
		}
	}
	return out, nil
}

func (q *request) aggregateView(ag *aggregate) map[string]any {
	hosts := make([]string, 0, len(ag.hosts))
	for _, h := range ag.hosts {
		hosts = append(hosts, h.Name)
	}
	v := map[string]any{"id": aggregateID(ag.zone), "name": ag.zone, "availability_zone": ag.zone, "hosts": hosts,
		"metadata": map[string]string{"availability_zone": ag.zone}, "created_at": nil, "updated_at": nil,
		"deleted": false, "deleted_at": nil}
	if q.atLeast(41) {
		v["uuid"] = uuid.NewSHA1(serviceNamespace, []byte("aggregate/"+ag.zone)).String()
	}
	return v
}

// aggregateList answers GET /os-aggregates (admin).
func (a *API) aggregateList(q *request) (*reply, error) {
	ags, err := q.aggregates()
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(ags))
	for _, ag := range ags {
		views = append(views, q.aggregateView(ag))
	}
	return okReply(map[string]any{"aggregates": views})
}

func (a *API) aggregateShow(q *request) (*reply, error) {
	ags, err := q.aggregates()
	if err != nil {
		return nil, err
	}
	id := q.param("id")
	for _, ag := range ags {
		if strconv.FormatInt(aggregateID(ag.zone), 10) == id {
			return okReply(map[string]any{"aggregate": q.aggregateView(ag)})
		}
	}
	return nil, notFound("Aggregate %s could not be found.", id)
}

// aggregateWrite answers the aggregate writes: aggregates follow the
// hosts' availability zones, which each agent's configuration sets.
func (a *API) aggregateWrite(q *request) (*reply, error) {
	return nil, faultf(http.StatusNotImplemented,
		"Host aggregates are derived from the hosts' availability zones and cannot be changed through this API yet.")
}
