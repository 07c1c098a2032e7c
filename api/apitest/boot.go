package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// maxBlock bounds how long the fake holds a blocking query.
const maxBlock = 10 * time.Second

// bootState is the fake's boot path: hosts, instances, their allocations
// and evaluations, and blocking-query support.
type bootState struct {
	hosts     map[string]*api.Host
	instances map[string]*api.Instance
	allocs    map[string]*api.Allocation
	evals     map[string]*api.Evaluation
	// actions are each instance's actions, oldest first.
	actions    map[string][]*api.InstanceAction
	migrations map[uint64]*api.Migration
	seq        int
	// blocking makes reads with ?index= wait; cond (on Server.mu) is
	// broadcast after every change.
	blocking bool
	cond     *sync.Cond
}

func (s *Server) initBoot(handle func(string, func(http.ResponseWriter, *http.Request) (any, error))) {
	s.hosts = map[string]*api.Host{}
	s.instances = map[string]*api.Instance{}
	s.allocs = map[string]*api.Allocation{}
	s.evals = map[string]*api.Evaluation{}
	s.actions = map[string][]*api.InstanceAction{}
	s.migrations = map[uint64]*api.Migration{}
	s.cond = sync.NewCond(&s.mu)
	handle("GET /v1/instances", s.instanceList)
	handle("POST /v1/instances", s.instanceCreate)
	handle("GET /v1/instances/{id}", s.instanceInfo)
	handle("DELETE /v1/instances/{id}", s.instanceDelete)
	handle("POST /v1/instances/{id}/actions", s.instanceAction)
	handle("GET /v1/instances/{id}/actions", s.instanceActionList)
	handle("GET /v1/instances/{id}/actions/{request_id}", s.instanceActionInfo)
	handle("GET /v1/migrations", s.migrationList)
	handle("POST /v1/hosts/{id}/drain", s.hostDrain)
	handle("GET /v1/hosts", s.hostList)
	handle("GET /v1/hosts/{id}", s.hostInfo)
	handle("POST /v1/hosts/{id}/enable", s.hostEnabled(true))
	handle("POST /v1/hosts/{id}/disable", s.hostEnabled(false))
	handle("GET /v1/allocations", s.allocList)
	handle("GET /v1/evaluations", s.evalList)
	handle("GET /v1/evaluations/{id}", s.evalInfo)
}

// BlockQueries makes reads with ?index=N wait, as a real agent's blocking
// queries do, until the fake's index passes N or ?wait (at most 10s)
// passes. It is off by default.
func (s *Server) BlockQueries(on bool) { s.locked(func() { s.blocking = on }) }

// AddHost stores a copy of h (with its Capacity computed) and returns
// another. An empty ID gets a generated one.
func (s *Server) AddHost(h *api.Host) *api.Host {
	var out *api.Host
	s.locked(func() {
		c := clone(h)
		c.ID = s.idOr(c.ID)
		c.Capacity = map[string]*api.HostCapacity{}
		for class, inv := range c.Inventories {
			c.Capacity[class] = &api.HostCapacity{Total: inv.Total, Used: c.Usage[class],
				Capacity: int64(float64(inv.Total-inv.Reserved) * inv.AllocationRatio)}
		}
		c.CreateIndex, c.ModifyIndex = s.bump(), s.index
		s.hosts[c.ID] = c
		out = clone(c)
	})
	return out
}

// Host returns a copy of the stored host with the given ID, or nil.
func (s *Server) Host(id string) *api.Host {
	var out *api.Host
	s.locked(func() { out = clone(s.hosts[id]) })
	return out
}

// AddInstance stores a copy of i as is and returns another. An empty ID
// gets a generated one.
func (s *Server) AddInstance(i *api.Instance) *api.Instance {
	var out *api.Instance
	s.locked(func() {
		c := clone(i)
		c.ID = s.idOr(c.ID)
		c.CreateIndex, c.ModifyIndex = s.bump(), s.index
		s.instances[c.ID] = c
		out = clone(c)
	})
	return out
}

// UpdateInstance applies f to the stored instance with the given ID, as a
// server would on a state change, and reports whether it exists.
func (s *Server) UpdateInstance(id string, f func(*api.Instance)) bool {
	found := false
	s.locked(func() {
		if inst := s.instances[id]; inst != nil {
			f(inst)
			inst.ModifyIndex = s.bump()
			found = true
		}
	})
	return found
}

// Instance returns a copy of the stored instance with the given ID, or nil.
func (s *Server) Instance(id string) *api.Instance {
	var out *api.Instance
	s.locked(func() { out = clone(s.instances[id]) })
	return out
}

// AddAllocation stores a copy of a and returns another.
func (s *Server) AddAllocation(a *api.Allocation) *api.Allocation {
	var out *api.Allocation
	s.locked(func() {
		c := clone(a)
		c.ID = s.idOr(c.ID)
		c.CreateIndex, c.ModifyIndex = s.bump(), s.index
		s.allocs[c.ID] = c
		out = clone(c)
	})
	return out
}

// AddEvaluation stores a copy of e and returns another.
func (s *Server) AddEvaluation(e *api.Evaluation) *api.Evaluation {
	var out *api.Evaluation
	s.locked(func() {
		c := clone(e)
		c.ID = s.idOr(c.ID)
		c.CreateIndex, c.ModifyIndex = s.bump(), s.index
		s.evals[c.ID] = c
		out = clone(c)
	})
	return out
}

// Evaluation returns a copy of the stored evaluation with the given ID, or nil.
func (s *Server) Evaluation(id string) *api.Evaluation {
	var out *api.Evaluation
	s.locked(func() { out = clone(s.evals[id]) })
	return out
}

// bump advances the fake's index and returns it.
func (s *Server) bump() uint64 {
	s.index++
	return s.index
}

// idOr returns id, or a new UUID-shaped ID whose first 8 characters are
// unique when id is empty.
func (s *Server) idOr(id string) string {
	if id != "" {
		return id
	}
	s.seq++
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", s.seq, s.seq)
}

// awaitIndex holds a blocking read (s.mu held) until the index passes the
// request's ?index or its ?wait passes.
func (s *Server) awaitIndex(r *http.Request) {
	q := r.URL.Query()
	after, err := strconv.ParseUint(q.Get("index"), 10, 64)
	if !s.blocking || r.Method != http.MethodGet || err != nil || s.index > after {
		return
	}
	wait, err := time.ParseDuration(q.Get("wait"))
	if err != nil || wait <= 0 || wait > maxBlock {
		wait = maxBlock
	}
	expired := false
	t := time.AfterFunc(wait, func() { s.locked(func() { expired = true }) })
	defer t.Stop()
	for s.index <= after && !expired {
		s.cond.Wait()
	}
}

// clone deep-copies v through JSON, which is all the fake stores.
func clone[T any](v *T) *T {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}

// decodeBody decodes the last request's JSON body strictly, as the agent
// does, so clients that send fields the agent does not know fail here too.
func (s *Server) decodeBody(out any) error {
	dec := json.NewDecoder(bytes.NewReader(s.requests[len(s.requests)-1].Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return apiErr(api.KindInvalid, "request body is not valid: "+err.Error())
	}
	return nil
}

func notFound(what, id string) error {
	return apiErr(api.KindNotFound, what+" "+strconv.Quote(id)+" not found")
}

// sorted returns m's values in creation order.
func sorted[T any](m map[string]*T, index func(*T) uint64, keep func(*T) bool) []*T {
	out := []*T{}
	for _, v := range m {
		if keep == nil || keep(v) {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return index(out[i]) < index(out[j]) })
	return out
}
