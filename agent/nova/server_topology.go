package nova

import (
	"github.com/stratus-cloud/stratus/internal/route"
)

// Server topology (2.78): the NUMA cells of a server's guest, with the
// host cells and CPU pinning for admins. Stratus's drivers give guests
// no NUMA topology (no hw:numa_* or dedicated CPU placement), so every
// server answers as Nova does for an instance without one: no nodes and
// no page size.

const topologyRule = "compute:server:topology:"

func (a *API) topologyRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/topology", MinVersion: 78, Access: reader, Policy: topologyRule + "index", Handle: a.serverTopology},
	}
}

func (a *API) serverTopology(q *request) (*reply, error) {
	if _, err := q.getServer(q.param("id")); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"nodes": []any{}, "pagesize_kb": nil})
}
