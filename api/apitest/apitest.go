// Package apitest provides an in-memory fake of a Stratus agent's native
// HTTP API, for unit tests of API consumers (package api itself, cloudctl's
// commands, UI tests).
//
// The fake keeps flavors, hosts, instances, allocations, evaluations,
// instance actions, migrations, instance groups (as tests set them), a
// Raft configuration, the gossip members and a snapshot in memory, answers
// with the same JSON, headers and error bodies as a real agent, and
// records every request. Unless BlockQueries is on, it does not block on
// blocking queries; it checks only the basics of what it is sent, and it
// schedules nothing (tests move instances along with UpdateInstance, and
// finish the operations they start with FinishAction).
// Tests of the real server's behaviour belong with the server: it must
// not be the only test of a feature.
package apitest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/stratus-cloud/stratus/api"
)

// Request is a request the fake received.
type Request struct {
	Method   string
	Path     string // unescaped
	RawQuery string
	Query    url.Values
	Token    string
	Body     []byte // JSON bodies only; snapshots are not kept here
}

// Server is the fake agent. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL of the fake, for api.Config.Address.
	URL string

	mu       sync.Mutex
	index    uint64
	token    string
	flavors  map[string]*api.Flavor
	raft     []*api.RaftServer
	self     *api.AgentSelf
	snapshot []byte
	failures map[string]*api.Error
	requests []Request
	bootState
	groupState
}

// NewServer starts a fake single-server cluster (node "n1", the Raft leader
// at 127.0.0.1:8776) without flavors. It is closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{
		index:    1,
		flavors:  map[string]*api.Flavor{},
		failures: map[string]*api.Error{},
		raft: []*api.RaftServer{{ID: "11111111-1111-4111-8111-111111111111", Node: "n1",
			Address: "127.0.0.1:8776", Leader: true, Voter: true}},
		self: &api.AgentSelf{
			Config: &api.AgentConfig{NodeName: "n1", NodeID: "11111111-1111-4111-8111-111111111111",
				Region: "global", AZ: "nova", Server: true, HTTPAddr: "127.0.0.1:8774",
				RPCAddr: "127.0.0.1:8776", GossipAddr: "127.0.0.1:8777", Version: "0.1.0"},
			Stats: map[string]map[string]string{"raft": {"state": "Leader"}},
		},
		snapshot: []byte("fake-snapshot"),
	}
	mux := http.NewServeMux()
	handle := func(pattern string, h func(w http.ResponseWriter, r *http.Request) (any, error)) {
		mux.HandleFunc(pattern, s.wrap(h))
	}
	handle("GET /v1/status/leader", s.leader)
	handle("GET /v1/status/peers", s.peers)
	handle("GET /v1/agent/self", func(http.ResponseWriter, *http.Request) (any, error) { return s.self, nil })
	handle("GET /v1/agent/members", s.members)
	handle("GET /v1/flavors", s.flavorList)
	handle("POST /v1/flavors", s.flavorCreate)
	handle("GET /v1/flavors/{id}", s.flavorInfo)
	handle("DELETE /v1/flavors/{id}", s.flavorDelete)
	handle("GET /v1/operator/raft/configuration", s.raftConfig)
	handle("DELETE /v1/operator/raft/peer", s.raftRemove)
	handle("GET /v1/operator/snapshot", s.snapshotSave)
	handle("PUT /v1/operator/snapshot", s.snapshotRestore)
	s.initBoot(handle)
	s.initGroups(handle)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// Client returns an api.Client for the fake, failing the test on error.
func (s *Server) Client(t testing.TB) *api.Client {
	t.Helper()
	c, err := api.NewClient(&api.Config{Address: s.URL})
	if err != nil {
		t.Fatalf("api.NewClient: %v", err)
	}
	return c
}

// RequireToken makes every request without X-Stratus-Token: tok fail with
// "permission denied". An empty tok accepts anything.
func (s *Server) RequireToken(tok string) { s.locked(func() { s.token = tok }) }

// Fail makes every request to method and path (as in "GET /v1/flavors",
// path unescaped) answer err.
func (s *Server) Fail(method, path string, err *api.Error) {
	s.locked(func() { s.failures[method+" "+path] = err })
}

// AddFlavor stores a copy of f as if created, and returns the stored copy.
func (s *Server) AddFlavor(f *api.Flavor) *api.Flavor {
	var out *api.Flavor
	s.locked(func() { out = s.storeFlavor(f) })
	return out
}

// Flavor returns a copy of the stored flavor with the given id, or nil.
func (s *Server) Flavor(id string) *api.Flavor {
	var out *api.Flavor
	s.locked(func() { out = copyFlavor(s.flavors[id]) })
	return out
}

// SetRaft replaces the Raft configuration.
func (s *Server) SetRaft(servers []*api.RaftServer) { s.locked(func() { s.raft = servers }) }

// Raft returns the Raft configuration.
func (s *Server) Raft() []*api.RaftServer {
	var out []*api.RaftServer
	s.locked(func() { out = append(out, s.raft...) })
	return out
}

// Snapshot returns the current snapshot bytes.
func (s *Server) Snapshot() []byte {
	var out []byte
	s.locked(func() { out = append(out, s.snapshot...) })
	return out
}

// SetSnapshot sets the bytes snapshot saves answer.
func (s *Server) SetSnapshot(b []byte) { s.locked(func() { s.snapshot = append([]byte(nil), b...) }) }

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	var out []Request
	s.locked(func() { out = append(out, s.requests...) })
	return out
}

// LastRequest returns the last request received; it is zero if none was.
func (s *Server) LastRequest() Request {
	var out Request
	s.locked(func() {
		if n := len(s.requests); n > 0 {
			out = s.requests[n-1]
		}
	})
	return out
}

func (s *Server) locked(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	s.cond.Broadcast()
}

var kindStatus = map[string]int{
	api.KindInvalid: 400, api.KindPermission: 403, api.KindNotFound: 404,
	api.KindConflict: 409, api.KindQuotaExceeded: 429, api.KindUnavailable: 503,
}

func apiErr(kind, msg string) *api.Error {
	code, ok := kindStatus[kind]
	if !ok {
		code = 500
	}
	return &api.Error{StatusCode: code, Kind: kind, Message: msg}
}

// wrap records the request, applies the token check and injected failures,
// calls h under the lock and writes its answer or error like a real agent.
func (s *Server) wrap(h func(w http.ResponseWriter, r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		rec := Request{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery,
			Query: r.URL.Query(), Token: r.Header.Get(api.HeaderToken)}
		if r.Header.Get("Content-Type") == "application/json" {
			rec.Body, _ = io.ReadAll(r.Body)
		}
		s.requests = append(s.requests, rec)
		var out any
		var err error
		if s.token != "" && rec.Token != s.token {
			err = apiErr(api.KindPermission, "ACL token not found")
		} else if e := s.failures[r.Method+" "+r.URL.Path]; e != nil {
			err = e
		} else {
			s.awaitIndex(r)
			out, err = h(w, r)
			s.cond.Broadcast()
		}
		if e, ok := err.(*api.Error); ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(e.StatusCode)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": e.Message, "kind": e.Kind})
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set(api.HeaderIndex, strconv.FormatUint(s.index, 10))
		if r.Method == http.MethodGet {
			w.Header().Set(api.HeaderKnownLeader, "true")
			w.Header().Set(api.HeaderLastContact, "0")
		}
		if out == nil {
			return
		}
		if b, ok := out.([]byte); ok {
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(b)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
}

func (s *Server) leaderAddr() string {
	for _, srv := range s.raft {
		if srv.Leader {
			return srv.Address
		}
	}
	return ""
}

func (s *Server) leader(http.ResponseWriter, *http.Request) (any, error) {
	return s.leaderAddr(), nil
}

func (s *Server) peers(http.ResponseWriter, *http.Request) (any, error) {
	out := []string{}
	for _, srv := range s.raft {
		out = append(out, srv.Address)
	}
	return out, nil
}

func (s *Server) members(http.ResponseWriter, *http.Request) (any, error) {
	c := s.self.Config
	resp := &api.MembersResponse{ServerName: c.NodeName, ServerRegion: c.Region}
	for i, srv := range s.raft {
		resp.Members = append(resp.Members, &api.AgentMember{Name: srv.Node, Addr: "127.0.0.1",
			Port: 8777 + 10*i, Status: "alive", Role: "server", Region: c.Region, AZ: c.AZ,
			RPCAddr: srv.Address, ID: srv.ID, Version: c.Version, Leader: srv.Leader})
	}
	return resp, nil
}

func (s *Server) raftConfig(http.ResponseWriter, *http.Request) (any, error) {
	return &api.RaftConfiguration{Servers: s.raft, Index: s.index}, nil
}

func (s *Server) raftRemove(_ http.ResponseWriter, r *http.Request) (any, error) {
	q := r.URL.Query()
	addr, id := q.Get("address"), q.Get("id")
	if (addr == "") == (id == "") {
		return nil, apiErr(api.KindInvalid, "must specify exactly one of address or id")
	}
	for i, srv := range s.raft {
		if (addr != "" && srv.Address == addr) || (id != "" && srv.ID == id) {
			s.raft = append(s.raft[:i:i], s.raft[i+1:]...)
			s.index++
			return nil, nil
		}
	}
	return nil, apiErr(api.KindNotFound, "address "+strconv.Quote(addr+id)+" was not found in the Raft configuration")
}

func (s *Server) snapshotSave(http.ResponseWriter, *http.Request) (any, error) {
	return append([]byte(nil), s.snapshot...), nil
}

func (s *Server) snapshotRestore(_ http.ResponseWriter, r *http.Request) (any, error) {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, apiErr(api.KindInvalid, err.Error())
	}
	s.snapshot = b
	s.index++
	return nil, nil
}

func copyFlavor(f *api.Flavor) *api.Flavor {
	if f == nil {
		return nil
	}
	c := *f
	c.ExtraSpecs = map[string]string{}
	for k, v := range f.ExtraSpecs {
		c.ExtraSpecs[k] = v
	}
	return &c
}

// storeFlavor stores a copy of f and returns another.
func (s *Server) storeFlavor(f *api.Flavor) *api.Flavor {
	c := copyFlavor(f)
	s.index++
	c.CreateIndex, c.ModifyIndex = s.index, s.index
	s.flavors[c.ID] = c
	return copyFlavor(c)
}

func (s *Server) findFlavor(idOrName string) *api.Flavor {
	if f := s.flavors[idOrName]; f != nil {
		return f
	}
	for _, f := range s.flavors {
		if f.Name == idOrName {
			return f
		}
	}
	return nil
}

func (s *Server) flavorList(http.ResponseWriter, *http.Request) (any, error) {
	out := []*api.Flavor{}
	for _, f := range s.flavors {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (s *Server) flavorInfo(_ http.ResponseWriter, r *http.Request) (any, error) {
	if f := s.findFlavor(r.PathValue("id")); f != nil {
		return f, nil
	}
	return nil, apiErr(api.KindNotFound, "flavor "+strconv.Quote(r.PathValue("id"))+" not found")
}

func (s *Server) flavorCreate(_ http.ResponseWriter, r *http.Request) (any, error) {
	var f api.Flavor
	if err := json.Unmarshal(s.requests[len(s.requests)-1].Body, &f); err != nil {
		return nil, apiErr(api.KindInvalid, "decoding flavor: "+err.Error())
	}
	switch {
	case f.ID == "" || f.Name == "" || f.VCPUs < 1 || f.MemoryMB < 1:
		return nil, apiErr(api.KindInvalid, "flavor: id, name, vcpus and memory_mb are required")
	case s.findFlavor(f.ID) != nil || s.findFlavor(f.Name) != nil:
		return nil, apiErr(api.KindConflict, "flavor "+strconv.Quote(f.ID)+" already exists")
	}
	return s.storeFlavor(&f), nil
}

func (s *Server) flavorDelete(_ http.ResponseWriter, r *http.Request) (any, error) {
	id := r.PathValue("id")
	if s.flavors[id] == nil {
		return nil, apiErr(api.KindNotFound, "flavor "+strconv.Quote(id)+" not found")
	}
	delete(s.flavors, id)
	s.index++
	return nil, nil
}
