package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// Host is a host as the native API shows it: the stored record plus
// each resource class's capacity, so UIs need not redo Placement's
// arithmetic.
//
// The embedded host carries its drain (Drain: null, or
// {StartedAt, Complete, CompletedAt}). GET /v1/hosts/{id} adds
// Allocations, how many allocations are still on the host (what a drain
// waits for); the list leaves it out rather than read every allocation.
type Host struct {
	*structs.Host
	Capacity    map[string]HostCapacity
	Allocations *int `json:",omitempty"`
}

// HostCapacity is one resource class of a host: its raw total, how much
// allocations use, and how much may be allocated in all
// ((Total - Reserved) * AllocationRatio).
type HostCapacity struct {
	Total, Used, Capacity int64
}

func newHost(h *structs.Host) *Host {
	out := &Host{Host: h, Capacity: make(map[string]HostCapacity, len(h.Inventories))}
	for class, inv := range h.Inventories {
		if inv == nil {
			continue
		}
		out.Capacity[class] = HostCapacity{Total: inv.Total, Used: h.Usage[class], Capacity: inv.Capacity()}
	}
	return out
}

// hostEnabledBody is the optional body of POST /v1/hosts/{id}/disable.
type hostEnabledBody struct {
	Reason string
}

func (a *API) hostList(w http.ResponseWriter, q *request) (any, error) {
	var args structs.HostListRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.HostListResponse
	if err := q.rpc.RPC("Host.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	hosts := make([]*Host, 0, len(out.Hosts))
	for _, h := range out.Hosts {
		hosts = append(hosts, newHost(h))
	}
	return hosts, nil
}

func (a *API) hostGet(w http.ResponseWriter, q *request) (any, error) {
	args := structs.HostSpecificRequest{HostID: q.param("id")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleHostResponse
	if err := q.rpc.RPC("Host.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Host == nil {
		return nil, notFound("host", args.HostID)
	}
	body := newHost(out.Host)
	// One indexed read of the host's allocations; it never blocks.
	// (Alloc.GetHostAllocs is the host's agent's alone.)
	allocArgs := structs.AllocListRequest{HostID: out.Host.ID}
	allocArgs.AllowStale = args.AllowStale
	var allocs structs.AllocListResponse
	if err := q.rpc.RPC("Alloc.List", &allocArgs, &allocs); err != nil {
		return nil, err
	}
	n := len(allocs.Allocs)
	body.Allocations = &n
	return body, nil
}

func (a *API) hostEnable(w http.ResponseWriter, q *request) (any, error) {
	return a.hostSetEnabled(w, q, true)
}

func (a *API) hostDisable(w http.ResponseWriter, q *request) (any, error) {
	return a.hostSetEnabled(w, q, false)
}

// hostSetEnabled enables or disables scheduling onto a host. The body is
// optional; only disabling takes a reason.
func (a *API) hostSetEnabled(w http.ResponseWriter, q *request, enabled bool) (any, error) {
	var body hostEnabledBody
	if q.ContentLength != 0 {
		if err := decodeJSON(w, q, &body); err != nil {
			return nil, err
		}
	}
	if enabled && body.Reason != "" {
		return nil, structs.Errorf(structs.KindInvalid, "a reason is given only when disabling a host")
	}
	args := structs.HostUpdateEnabledRequest{HostID: q.param("id"), Enabled: enabled, Reason: body.Reason}
	var out structs.GenericResponse
	if err := q.rpc.RPC("Host.UpdateEnabled", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

func (a *API) allocList(w http.ResponseWriter, q *request) (any, error) {
	var args structs.AllocListRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.AllocListResponse
	if err := q.rpc.RPC("Alloc.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	host := q.URL.Query().Get("host")
	allocs := make([]*structs.Allocation, 0, len(out.Allocs))
	for _, alloc := range out.Allocs {
		if host == "" || alloc.HostID == host {
			allocs = append(allocs, redactAlloc(alloc))
		}
	}
	return allocs, nil
}
