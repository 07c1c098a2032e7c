package client

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// fakeServer is an in-memory stand-in for the servers' RPC endpoints.
// Errors cross as plain text, as they do over a real RPC hop.
type fakeServer struct {
	mu        sync.Mutex
	index     uint64
	changed   chan struct{} // closed and replaced on every change
	closed    chan struct{}
	closeOnce sync.Once
	ttl       time.Duration

	allocs    map[string]*structs.Allocation
	instances map[string]*structs.Instance
	hosts     map[string]bool
	// images answer Image.Get; any other id is not found.
	images map[string]*structs.Image

	registers   []*structs.Host
	heartbeats  int
	updateCalls [][]structs.AllocClientUpdate
	blocked     int // GetHostAllocs calls waiting now

	// fail makes the next n calls of a method fail with KindUnavailable.
	fail map[string]int
	// strictUpdates makes UpdateFromClient fail KindNotFound on an
	// unknown allocation instead of skipping it.
	strictUpdates bool
	seq           int
	// oldLeader makes registrations store no TunnelIP, as a leader of
	// a release without the field does.
	oldLeader bool
	// stored are the hosts as registered, by id (Host.Get).
	stored map[string]*structs.Host
	gets   int // Host.Get calls
}

func newFakeServer(t *testing.T) *fakeServer {
	s := &fakeServer{
		changed:   make(chan struct{}),
		closed:    make(chan struct{}),
		ttl:       time.Second,
		allocs:    make(map[string]*structs.Allocation),
		instances: make(map[string]*structs.Instance),
		hosts:     make(map[string]bool),
		fail:      make(map[string]int),
		index:     1,
	}
	t.Cleanup(s.close)
	return s
}

// close releases blocked queries.
func (s *fakeServer) close() { s.closeOnce.Do(func() { close(s.closed) }) }

// bump advances the index and wakes blocked queries; callers hold mu.
func (s *fakeServer) bump() uint64 {
	s.index++
	close(s.changed)
	s.changed = make(chan struct{})
	return s.index
}

// rpcErr is err as text, the way it arrives over the wire.
func rpcErr(kind structs.ErrorKind, format string, args ...any) error {
	return errors.New(structs.Errorf(kind, format, args...).Error())
}

// RPC implements the RPC interface.
func (s *fakeServer) RPC(method string, args, reply any) error {
	s.mu.Lock()
	if s.fail[method] > 0 {
		s.fail[method]--
		s.mu.Unlock()
		return rpcErr(structs.KindUnavailable, "injected failure of %s", method)
	}
	s.mu.Unlock()
	switch method {
	case "Host.Register":
		req := args.(*structs.HostRegisterRequest)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.registers = append(s.registers, req.Host.Copy())
		s.hosts[req.Host.ID] = true
		if s.stored == nil {
			s.stored = map[string]*structs.Host{}
		}
		s.stored[req.Host.ID] = req.Host.Copy()
		if s.oldLeader {
			s.stored[req.Host.ID].TunnelIP = ""
		}
		reply.(*structs.HostRegisterResponse).HeartbeatTTL = s.ttl
		reply.(*structs.HostRegisterResponse).Index = s.bump()
		return nil
	case "Host.Heartbeat":
		req := args.(*structs.HostHeartbeatRequest)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.heartbeats++
		for _, id := range req.HostIDs {
			if !s.hosts[id] {
				return rpcErr(structs.KindNotFound, "host %s not found", id)
			}
		}
		reply.(*structs.HostRegisterResponse).HeartbeatTTL = s.ttl
		return nil
	case "Image.Get":
		req := args.(*structs.ImageSpecificRequest)
		s.mu.Lock()
		defer s.mu.Unlock()
		img, ok := s.images[req.ImageID]
		if !ok {
			return rpcErr(structs.KindNotFound, "image %s not found", req.ImageID)
		}
		reply.(*structs.SingleImageResponse).Image = img
		return nil
	case "Host.Get":
		req := args.(*structs.HostSpecificRequest)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.gets++
		h := s.stored[req.HostID]
		if h == nil {
			return rpcErr(structs.KindNotFound, "host %q not found", req.HostID)
		}
		reply.(*structs.SingleHostResponse).Host = h.Copy()
		return nil
	case "Volume.HostAttached":
		// No volume is ever attached here: the query blocks until the
		// server closes, as a real one would past MaxQueryTime.
		<-s.closed
		return rpcErr(structs.KindUnavailable, "server closed")
	case "Alloc.GetHostAllocs":
		return s.getHostAllocs(args.(*structs.AllocHostRequest), reply.(*structs.AllocIndexResponse))
	case "Alloc.GetAllocs":
		req := args.(*structs.AllocsGetRequest)
		resp := reply.(*structs.AllocListResponse)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, id := range req.AllocIDs {
			if a, ok := s.allocs[id]; ok {
				resp.Allocs = append(resp.Allocs, a.Copy())
				resp.Instances = append(resp.Instances, s.instances[a.InstanceID].Copy())
			}
		}
		resp.Index = s.index
		return nil
	case "Alloc.UpdateFromClient":
		req := args.(*structs.AllocUpdateRequest)
		s.mu.Lock()
		defer s.mu.Unlock()
		batch := make([]structs.AllocClientUpdate, 0, len(req.Updates))
		for _, u := range req.Updates {
			if _, ok := s.allocs[u.AllocID]; !ok && s.strictUpdates {
				return rpcErr(structs.KindNotFound, "allocation %s not found", u.AllocID)
			}
		}
		for _, u := range req.Updates {
			batch = append(batch, *u)
			a, ok := s.allocs[u.AllocID]
			if !ok {
				continue
			}
			a.ClientState, a.ClientDescription, a.PowerState = u.ClientState, u.ClientDescription, u.PowerState
			if u.ActionDoneSeq >= a.ActionDoneSeq {
				a.ActionDoneSeq, a.ActionError = u.ActionDoneSeq, u.ActionError
			}
			a.ModifyIndex = s.index + 1
		}
		s.updateCalls = append(s.updateCalls, batch)
		// A client report changes the table but not AllocModifyIndex: the
		// watcher wakes and must find nothing to do.
		reply.(*structs.GenericResponse).Index = s.bump()
		return nil
	}
	return rpcErr(structs.KindInvalid, "unknown method %s", method)
}

func (s *fakeServer) getHostAllocs(req *structs.AllocHostRequest, resp *structs.AllocIndexResponse) error {
	timeout := time.NewTimer(req.MaxQueryTime)
	defer timeout.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.index <= req.MinQueryIndex {
		ch := s.changed
		s.blocked++
		s.mu.Unlock()
		var err error
		expired := false
		select {
		case <-ch:
		case <-timeout.C:
			expired = true
		case <-s.closed:
			err = rpcErr(structs.KindUnavailable, "server closed")
		}
		s.mu.Lock()
		s.blocked--
		if err != nil {
			return err
		}
		if expired {
			break
		}
	}
	resp.Allocs = make(map[string]uint64)
	for id, a := range s.allocs {
		if a.HostID == req.HostID {
			resp.Allocs[id] = a.AllocModifyIndex
		}
	}
	resp.Index = s.index
	return nil
}

// addAllocs creates n allocations desired running on host, at one index.
func (s *fakeServer) addAllocs(hostID string, n int) []*structs.Allocation {
	return s.addAllocsWith(hostID, n, nil)
}

// addAllocWith creates one allocation on host, edited by fn (if not nil)
// before any agent can see it.
func (s *fakeServer) addAllocWith(hostID string, fn func(*structs.Allocation, *structs.Instance)) *structs.Allocation {
	return s.addAllocsWith(hostID, 1, fn)[0]
}

// addAllocsWith is addAllocs with fn applied to each allocation and its
// instance.
func (s *fakeServer) addAllocsWith(hostID string, n int, fn func(*structs.Allocation, *structs.Instance)) []*structs.Allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.bump()
	var out []*structs.Allocation
	for range n {
		s.seq++
		inst := &structs.Instance{
			ID:       fmt.Sprintf("inst-%03d", s.seq),
			Name:     fmt.Sprintf("vm-%03d", s.seq),
			FlavorID: "1",
			Flavor: &structs.Flavor{ID: "1", Name: "m1.small", VCPUs: 2, MemoryMB: 2048, RootGB: 20, EphemeralGB: 1, SwapMB: 512,
				ExtraSpecs: map[string]string{"hw:cpu_policy": "shared"}},
			ImageID:         "cirros",
			ImageProperties: map[string]string{"architecture": "x86_64"},
			Metadata:        map[string]string{"role": "test"},
			HostID:          hostID,
		}
		a := &structs.Allocation{
			ID:               fmt.Sprintf("alloc-%03d", s.seq),
			InstanceID:       inst.ID,
			HostID:           hostID,
			DesiredState:     structs.AllocDesiredRunning,
			ClientState:      structs.AllocClientPending,
			CreateIndex:      idx,
			ModifyIndex:      idx,
			AllocModifyIndex: idx,
		}
		if fn != nil {
			fn(a, inst)
		}
		s.instances[inst.ID] = inst
		s.allocs[a.ID] = a
		out = append(out, a.Copy())
	}
	return out
}

// addAlloc creates one allocation desired running on host.
func (s *fakeServer) addAlloc(hostID string) *structs.Allocation {
	return s.addAllocs(hostID, 1)[0]
}

// change edits an allocation's desired side and bumps AllocModifyIndex.
func (s *fakeServer) change(id string, fn func(a *structs.Allocation, index uint64)) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.bump()
	a := s.allocs[id]
	fn(a, idx)
	a.ModifyIndex, a.AllocModifyIndex = idx, idx
	return idx
}

func (s *fakeServer) setDesired(id, desired string) uint64 {
	return s.change(id, func(a *structs.Allocation, _ uint64) { a.DesiredState = desired })
}

// reboot asks for a reboot; the ActionSeq is the returned index.
func (s *fakeServer) reboot(id string, hard bool) uint64 {
	return s.change(id, func(a *structs.Allocation, idx uint64) {
		a.PendingAction = structs.ActionRebootSoft
		if hard {
			a.PendingAction = structs.ActionRebootHard
		}
		a.ActionSeq = idx
	})
}

// action asks for a one-off action; the ActionSeq is the returned index.
func (s *fakeServer) action(id, action, arg string) uint64 {
	return s.change(id, func(a *structs.Allocation, idx uint64) {
		a.PendingAction, a.ActionArg, a.ActionSeq = action, arg, idx
	})
}

// setImage changes an instance's image, as a rebuild request does
// before it asks the agent.
func (s *fakeServer) setImage(instanceID, imageID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.instances[instanceID].ImageID = imageID
}

func (s *fakeServer) removeAlloc(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bump()
	delete(s.allocs, id)
}

func (s *fakeServer) alloc(id string) *structs.Allocation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocs[id].Copy()
}

func (s *fakeServer) forgetHosts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.hosts)
}

func (s *fakeServer) failNext(method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[method] += n
}

func (s *fakeServer) counts() (registers, heartbeats, updateCalls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.registers), s.heartbeats, len(s.updateCalls)
}

func (s *fakeServer) lastRegistered() *structs.Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.registers) == 0 {
		return nil
	}
	return s.registers[len(s.registers)-1].Copy()
}

// reports returns every update received about one allocation, in order.
func (s *fakeServer) reports(allocID string) []structs.AllocClientUpdate {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []structs.AllocClientUpdate
	for _, b := range s.updateCalls {
		for _, u := range b {
			if u.AllocID == allocID {
				out = append(out, u)
			}
		}
	}
	return out
}

func (s *fakeServer) blockedQueries() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blocked
}
