package apitest

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

func instanceIndex(i *api.Instance) uint64 { return i.CreateIndex }
func hostIndex(h *api.Host) uint64         { return h.CreateIndex }
func allocIndex(a *api.Allocation) uint64  { return a.CreateIndex }
func evalIndex(e *api.Evaluation) uint64   { return e.CreateIndex }

// onHost is the ?host= filter of r: whether an object on host id is listed.
func onHost(r *http.Request) func(id string) bool {
	host := r.URL.Query().Get("host")
	return func(id string) bool { return host == "" || id == host }
}

func (s *Server) instanceList(_ http.ResponseWriter, r *http.Request) (any, error) {
	keep := onHost(r)
	return sorted(s.instances, instanceIndex, func(i *api.Instance) bool { return keep(i.HostID) }), nil
}

func (s *Server) instanceInfo(_ http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	inst := clone(s.instances[id])
	if inst == nil {
		return nil, notFound("instance", id)
	}
	for _, a := range s.allocs {
		if a.InstanceID == id {
			inst.Allocation = a
		}
	}
	return inst, nil
}

func (s *Server) instanceCreate(_ http.ResponseWriter, r *http.Request) (any, error) {
	var req api.InstanceCreateRequest
	if err := s.decodeBody(&req); err != nil {
		return nil, err
	}
	if req.Count == 0 {
		req.Count = 1
	}
	flavor := s.findFlavor(req.Flavor)
	switch {
	case strings.TrimSpace(req.Name) == "" || req.Image == "" || req.Count < 1 || req.Count > 1000:
		return nil, apiErr(api.KindInvalid, "instance: name and image are required and count must be between 1 and 1000")
	case flavor == nil:
		return nil, apiErr(api.KindInvalid, "flavor "+strconv.Quote(req.Flavor)+" not found")
	}
	resv, now := "r-"+s.idOr(""), time.Now().UnixNano()
	resp := &api.InstanceCreateResponse{Instances: []*api.Instance{}}
	eval := &api.Evaluation{ID: s.idOr(""), TriggeredBy: "instance-create", Status: api.EvalStatusPending, CreatedAt: now}
	for n := 1; n <= req.Count; n++ {
		name := req.Name
		if req.Count > 1 {
			name += "-" + strconv.Itoa(n) // Nova's multi-create display names
		}
		inst := &api.Instance{ID: s.idOr(""), Name: name, ReservationID: resv, FlavorID: flavor.ID,
			Flavor: copyFlavor(flavor), ImageID: req.Image, ImageProperties: req.ImageProperties,
			KeyName: req.KeyName, AZ: req.AZ, VMState: "building", TaskState: "scheduling",
			Metadata: req.Metadata, CreatedAt: now, UpdatedAt: now, Status: "BUILD"}
		inst.CreateIndex, inst.ModifyIndex = s.bump(), s.index
		s.instances[inst.ID] = inst
		resp.Instances = append(resp.Instances, clone(inst))
		eval.InstanceIDs = append(eval.InstanceIDs, inst.ID)
	}
	eval.CreateIndex, eval.ModifyIndex = s.bump(), s.index
	s.evals[eval.ID] = eval
	resp.EvalID = eval.ID
	return resp, nil
}

func (s *Server) instanceDelete(_ http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	if f := r.URL.Query(); f.Has("force") && f.Get("force") != "" && f.Get("force") != "true" && f.Get("force") != "false" {
		return nil, apiErr(api.KindInvalid, "force "+strconv.Quote(f.Get("force"))+" is not true or false")
	}
	if s.instances[id] == nil {
		return nil, notFound("instance", id)
	}
	delete(s.instances, id)
	for aid, a := range s.allocs {
		if a.InstanceID == id {
			delete(s.allocs, aid)
		}
	}
	s.bump()
	return nil, nil
}

func (s *Server) findHost(idOrName string) *api.Host {
	if h := s.hosts[idOrName]; h != nil {
		return h
	}
	for _, h := range s.hosts {
		if h.Name == idOrName {
			return h
		}
	}
	return nil
}

func (s *Server) hostList(http.ResponseWriter, *http.Request) (any, error) {
	return sorted(s.hosts, hostIndex, nil), nil
}

func (s *Server) hostInfo(_ http.ResponseWriter, r *http.Request) (any, error) {
	h := clone(s.findHost(r.PathValue("id")))
	if h == nil {
		return nil, notFound("host", r.PathValue("id"))
	}
	n := 0
	for _, a := range s.allocs {
		if a.HostID == h.ID {
			n++
		}
	}
	h.Allocations = &n
	return h, nil
}

func (s *Server) hostEnabled(enabled bool) func(http.ResponseWriter, *http.Request) (any, error) {
	return func(_ http.ResponseWriter, r *http.Request) (any, error) {
		var req struct{ Reason string }
		if len(s.requests[len(s.requests)-1].Body) > 0 {
			if err := s.decodeBody(&req); err != nil {
				return nil, err
			}
		}
		h := s.findHost(r.PathValue("id"))
		if h == nil {
			return nil, notFound("host", r.PathValue("id"))
		}
		h.Enabled, h.DisabledReason, h.ModifyIndex = enabled, req.Reason, s.bump()
		if enabled {
			h.Drain = nil // enabling cancels a drain; disabling keeps it
		}
		return nil, nil
	}
}

func (s *Server) allocList(_ http.ResponseWriter, r *http.Request) (any, error) {
	keep := onHost(r)
	return sorted(s.allocs, allocIndex, func(a *api.Allocation) bool { return keep(a.HostID) }), nil
}

func (s *Server) evalList(http.ResponseWriter, *http.Request) (any, error) {
	return sorted(s.evals, evalIndex, nil), nil
}

func (s *Server) evalInfo(_ http.ResponseWriter, r *http.Request) (any, error) {
	if e := s.evals[r.PathValue("id")]; e != nil {
		return e, nil
	}
	return nil, notFound("evaluation", r.PathValue("id"))
}
