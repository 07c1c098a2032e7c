package server

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/structs"
)

// fsmGateTTL bounds how long the cluster's level is trusted without a
// membership event: gossip events may be dropped when their buffer is
// full, so the level is recomputed at least this often.
const fsmGateTTL = time.Second

// fsmGate keeps the leader from proposing an entry that some server's
// FSM does not know (structs.FSMLevel), as Nomad's leader checks
// ServersMeetMinimumVersion before it uses a newer feature. The
// cluster's level is the lowest that any server of the Raft
// configuration, or any alive server of the region about to join it,
// advertises in gossip.
type fsmGate struct {
	// local is the level this server advertises.
	local atomic.Int64
	// gen is bumped by every membership change; a cached view of an
	// older generation is stale.
	gen  atomic.Uint64
	view atomic.Pointer[fsmGateView]

	mu sync.Mutex
	// seen is the last level each server was seen to advertise, so a
	// failed server that gossip has forgotten keeps its level while it
	// stays in the Raft configuration.
	seen map[raft.ServerID]structs.FSMLevel

	// proposed counts the entries proposed by message type, for tests
	// and metrics.
	proposed [256]atomic.Uint64
}

// fsmGateView is one computation of the cluster's level.
type fsmGateView struct {
	gen   uint64
	at    time.Time
	level structs.FSMLevel
	// holder names a server at that level, for messages.
	holder string
}

// invalidate drops the cached level after a membership change.
func (g *fsmGate) invalidate() { g.gen.Add(1) }

// observe records the level a server member advertises and drops the
// cached level: every server does it for every server event, so that a
// server that fails keeps its level after gossip forgets it.
func (g *fsmGate) observe(m gossip.Member) {
	if m.Meta.ID != "" {
		g.mu.Lock()
		if g.seen == nil {
			g.seen = make(map[raft.ServerID]structs.FSMLevel)
		}
		g.seen[raft.ServerID(m.Meta.ID)] = structs.AdvertisedFSMLevel(m.Meta.FSMLevel)
		g.mu.Unlock()
	}
	g.invalidate()
}

// localFSMLevel is the level this server advertises: the config's when
// set (a test standing for an older build), else this build's.
func (s *Server) localFSMLevel() structs.FSMLevel {
	if l := s.fsmGate.local.Load(); l > 0 {
		return structs.FSMLevel(l)
	}
	if s.config.FSMLevel > 0 {
		return s.config.FSMLevel
	}
	return structs.CurrentFSMLevel
}

// FSMLevel returns the state machine level this server advertises.
func (s *Server) FSMLevel() structs.FSMLevel { return s.localFSMLevel() }

// setAdvertisedFSMLevel changes the level this server advertises and
// gossips it, as restarting it on another build would.
func (s *Server) setAdvertisedFSMLevel(l structs.FSMLevel) error {
	s.fsmGate.local.Store(int64(l))
	meta := s.gossip.Local().Meta
	meta.FSMLevel = int(l)
	s.fsmGate.invalidate()
	if err := s.gossip.UpdateMeta(meta); err != nil {
		return fmt.Errorf("advertise %s: %w", l, err)
	}
	return nil
}

// ClusterFSMLevel returns the lowest FSM level the servers advertise, and
// the name of a server at that level.
func (s *Server) ClusterFSMLevel() (structs.FSMLevel, string) {
	g := &s.fsmGate
	gen := g.gen.Load()
	if v := g.view.Load(); v != nil && v.gen == gen && time.Since(v.at) < fsmGateTTL {
		return v.level, v.holder
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	v := s.computeFSMLevel(gen)
	g.view.Store(v)
	return v.level, v.holder
}

// computeFSMLevel works the cluster's level out from gossip and the Raft
// configuration. The caller holds fsmGate.mu.
func (s *Server) computeFSMLevel(gen uint64) *fsmGateView {
	g := &s.fsmGate
	if g.seen == nil {
		g.seen = make(map[raft.ServerID]structs.FSMLevel)
	}
	self := raft.ServerID(s.config.NodeID)
	v := &fsmGateView{gen: gen, at: time.Now(), level: s.localFSMLevel(), holder: s.config.NodeName}
	names := map[raft.ServerID]string{self: s.config.NodeName}
	consider := func(id raft.ServerID, l structs.FSMLevel) {
		if l < v.level {
			v.level, v.holder = l, names[id]
			if v.holder == "" {
				v.holder = string(id)
			}
		}
	}
	for _, m := range s.gossip.Members() {
		if m.Meta.Role != gossip.RoleServer || m.Meta.Region != s.config.Region || m.Meta.ID == "" {
			continue
		}
		id := raft.ServerID(m.Meta.ID)
		if id == self {
			continue
		}
		l := structs.AdvertisedFSMLevel(m.Meta.FSMLevel)
		g.seen[id], names[id] = l, m.Name
		if m.Status == gossip.StatusAlive || m.Status == gossip.StatusSuspect {
			// Alive servers count before they are voters: the leader
			// adds them, and they must be able to apply what follows.
			consider(id, l)
		}
	}
	if s.raft == nil {
		return v
	}
	if future := s.raft.GetConfiguration(); future.Error() == nil {
		for _, srv := range future.Configuration().Servers {
			if srv.ID == self {
				continue
			}
			l, ok := g.seen[srv.ID]
			if !ok {
				// Never seen since this server started: every server
				// in the configuration applies the baseline.
				l = structs.FSMLevelBase
			}
			consider(srv.ID, l)
		}
	}
	return v
}

// fsmLevelAllows reports whether every server can apply an entry of type
// t, so the leader may propose it.
func (s *Server) fsmLevelAllows(t structs.MessageType) bool {
	need := structs.RequiredFSMLevel(t)
	if need <= structs.FSMLevelBase {
		return true
	}
	l, _ := s.ClusterFSMLevel()
	return l >= need
}

// checkFSMLevel refuses to propose an entry that some server could not
// apply, and counts the ones it lets through. raftApply calls it for
// every entry.
func (s *Server) checkFSMLevel(entry []byte) error {
	if len(entry) == 0 {
		return nil
	}
	t := structs.MessageType(entry[0])
	if need := structs.RequiredFSMLevel(t); need > structs.FSMLevelBase {
		if l, holder := s.ClusterFSMLevel(); l < need {
			return structs.Errorf(structs.KindUnavailable,
				"%s entries need %s on every server, and server %s is at %s: finish the rolling upgrade first",
				t, need, holder, l)
		}
	}
	s.fsmGate.proposed[entry[0]].Add(1)
	return nil
}

// ProposedEntries returns how many entries of type t (the ignorable flag
// cleared) this server has proposed to Raft, for tests and metrics.
func (s *Server) ProposedEntries(t structs.MessageType) uint64 {
	t &^= structs.IgnoreUnknownTypeFlag
	return s.fsmGate.proposed[t].Load() + s.fsmGate.proposed[t|structs.IgnoreUnknownTypeFlag].Load()
}
