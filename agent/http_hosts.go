package agent

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// hostJSON is a host as the native API shows it: the stored record plus
// each resource class's capacity, so UIs need not redo Placement's
// arithmetic.
//
// The embedded host carries its drain (Drain: null, or
// {StartedAt, Complete, CompletedAt}). GET /v1/hosts/{id} adds
// Allocations, how many allocations are still on the host (what a drain
// waits for); the list leaves it out rather than read every allocation.
type hostJSON struct {
	*structs.Host
	Capacity    map[string]hostCapacity
	Allocations *int `json:",omitempty"`
}

// hostCapacity is one resource class of a host: its raw total, how much
// allocations use, and how much may be allocated in all
// ((Total - Reserved) * AllocationRatio).
type hostCapacity struct {
	Total, Used, Capacity int64
}

func newHostJSON(h *structs.Host) *hostJSON {
	out := &hostJSON{Host: h, Capacity: make(map[string]hostCapacity, len(h.Inventories))}
	for class, inv := range h.Inventories {
		if inv == nil {
			continue
		}
		out.Capacity[class] = hostCapacity{Total: inv.Total, Used: h.Usage[class], Capacity: inv.Capacity()}
	}
	return out
}

// hostEnabledBody is the optional body of POST /v1/hosts/{id}/disable.
type hostEnabledBody struct {
	Reason string
}

func (a *Agent) hostList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.HostListRequest
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.HostListResponse
	if err := a.rpc.RPC("Host.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	hosts := make([]*hostJSON, 0, len(out.Hosts))
	for _, h := range out.Hosts {
		hosts = append(hosts, newHostJSON(h))
	}
	return hosts, nil
}

func (a *Agent) hostGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.HostSpecificRequest{HostID: r.PathValue("id")}
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleHostResponse
	if err := a.rpc.RPC("Host.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Host == nil {
		return nil, notFound("host", args.HostID)
	}
	body := newHostJSON(out.Host)
	// One indexed read of the host's allocations; it never blocks.
	// (Alloc.GetHostAllocs is the host's agent's alone.)
	allocArgs := structs.AllocListRequest{HostID: out.Host.ID}
	allocArgs.AllowStale, allocArgs.AuthToken = args.AllowStale, args.AuthToken
	var allocs structs.AllocListResponse
	if err := a.rpc.RPC("Alloc.List", &allocArgs, &allocs); err != nil {
		return nil, err
	}
	n := len(allocs.Allocs)
	body.Allocations = &n
	return body, nil
}

func (a *Agent) hostEnable(w http.ResponseWriter, r *http.Request) (any, error) {
	return a.hostSetEnabled(w, r, true)
}

func (a *Agent) hostDisable(w http.ResponseWriter, r *http.Request) (any, error) {
	return a.hostSetEnabled(w, r, false)
}

// hostSetEnabled enables or disables scheduling onto a host. The body is
// optional; only disabling takes a reason.
func (a *Agent) hostSetEnabled(w http.ResponseWriter, r *http.Request, enabled bool) (any, error) {
	var body hostEnabledBody
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &body); err != nil {
			return nil, err
		}
	}
	if enabled && body.Reason != "" {
		return nil, structs.Errorf(structs.KindInvalid, "a reason is given only when disabling a host")
	}
	args := structs.HostUpdateEnabledRequest{HostID: r.PathValue("id"), Enabled: enabled, Reason: body.Reason}
	args.AuthToken = requestToken(r)
	var out structs.GenericResponse
	if err := a.rpc.RPC("Host.UpdateEnabled", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

func (a *Agent) allocList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.AllocListRequest
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.AllocListResponse
	if err := a.rpc.RPC("Alloc.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	host := r.URL.Query().Get("host")
	allocs := make([]*structs.Allocation, 0, len(out.Allocs))
	for _, alloc := range out.Allocs {
		if host == "" || alloc.HostID == host {
			allocs = append(allocs, alloc)
		}
	}
	return allocs, nil
}
