package gossip

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/stratus-cloud/stratus/structs"
)

// User message types carried over memberlist's gossip (first byte).
const (
	msgLeaveIntent byte = 'L'
)

// intentTTL is how long a leave intent is remembered. It has to outlive
// the gap between the intent and memberlist's own leave broadcast, which is
// normally milliseconds, and give push/pull (every 5 s with Fast, 30 s
// otherwise) a few rounds to carry it to a member that missed it.
const intentTTL = 2 * time.Minute

// maxIntentWait caps the intent broadcast when Leave is called without a
// timeout, so a leave never hangs on the intent alone.
const maxIntentWait = 5 * time.Second

// Push/pull state: a version byte, then the encoded intentState.
const (
	intentStateVersion byte = 1
	// maxIntentsInState bounds the intents carried in one push/pull (the
	// most recent are kept); a pool rarely sees that many leaves within
	// intentTTL.
	maxIntentsInState = 256
)

// leaveIntent announces that a node is about to leave gracefully.
type leaveIntent struct {
	Node    string `codec:"n"`
	Session uint64 `codec:"s"`
}

// intentState is the application state exchanged at push/pull.
type intentState struct {
	Intents []leaveIntent `codec:"i"`
}

// intentRecord is a received leave intent.
type intentRecord struct {
	session uint64
	at      time.Time
}

// intentBroadcast queues a leave intent in the TransmitLimitedQueue.
type intentBroadcast struct {
	node   string
	msg    []byte
	notify chan struct{} // closed by Finished; nil when nobody waits
}

// Name makes the broadcast a memberlist.NamedBroadcast: a newer intent for
// the same node replaces an older one still in the queue.
func (b *intentBroadcast) Name() string { return "leave-intent/" + b.node }

// Invalidates is required by memberlist.Broadcast; named broadcasts are
// deduplicated by Name instead.
func (b *intentBroadcast) Invalidates(other memberlist.Broadcast) bool {
	o, ok := other.(*intentBroadcast)
	return ok && o.node == b.node
}

// Message returns the encoded intent.
func (b *intentBroadcast) Message() []byte { return b.msg }

// Finished is called once, when the retransmit limit is reached or the
// broadcast was replaced.
func (b *intentBroadcast) Finished() {
	if b.notify != nil {
		close(b.notify)
	}
}

func encodeIntent(in leaveIntent) ([]byte, error) {
	body, err := structs.Encode(&in)
	if err != nil {
		return nil, err
	}
	return append([]byte{msgLeaveIntent}, body...), nil
}

// broadcastLeaveIntent records the local node's own intent (memberlist
// also reports our own leave through NotifyLeave) and tells every other
// member, before memberlist's own leave goes out.
//
// The gossip broadcast alone is not enough: memberlist sends a broadcast
// only RetransmitMult × ⌈log10(n+1)⌉ times (twice in a pool of three),
// piggybacked on whatever packet leaves next, so all of them can go to
// one peer, or to a peer that is already dead but still gossiped to. That
// peer then never hears the intent and reports the leave as a failure.
// So the intent is first sent straight to each live member (one small
// datagram each, queued at every receiver ahead of the leave that
// follows), then gossiped as before, and push/pull (LocalState) carries it
// to anyone who still missed it.
func (p *Pool) broadcastLeaveIntent(wait time.Duration) error {
	if wait <= 0 || wait > maxIntentWait {
		wait = maxIntentWait
	}
	msg, err := encodeIntent(leaveIntent{Node: p.cfg.NodeName, Session: p.session})
	if err != nil {
		return fmt.Errorf("encode leave intent: %w", err)
	}
	p.mu.Lock()
	p.intents[p.cfg.NodeName] = intentRecord{session: p.session, at: time.Now()}
	var peers []memberlist.Address
	for name, ms := range p.members {
		if name != p.cfg.NodeName && counted(ms.Status) {
			peers = append(peers, memberlist.Address{Addr: ms.Address(), Name: name})
		}
	}
	p.mu.Unlock()

	if len(peers) == 0 && p.ml.NumMembers() <= 1 {
		return nil // nobody to tell
	}
	for _, a := range peers {
		if err := p.ml.SendToAddress(a, msg); err != nil {
			p.logger.Debug("send leave intent", "member", a.Name, "error", err)
		}
	}
	done := make(chan struct{})
	p.broadcasts.QueueBroadcast(&intentBroadcast{node: p.cfg.NodeName, msg: msg, notify: done})
	select {
	case <-done:
		return nil
	case <-time.After(wait):
		return errors.New("timed out waiting for leave intent broadcast")
	}
}

// handleLeaveIntent processes an intent gossiped by another node.
func (p *Pool) handleLeaveIntent(body []byte) {
	var in leaveIntent
	if err := structs.Decode(body, &in); err != nil || in.Node == "" {
		p.logger.Warn("ignoring malformed leave intent", "error", err)
		return
	}
	if !p.applyIntent(in) {
		return // already known and already rebroadcast
	}
	// Rebroadcast once so the intent spreads epidemically rather than
	// relying on the leaving node's own few retransmissions.
	msg, err := encodeIntent(in)
	if err != nil {
		return
	}
	p.broadcasts.QueueBroadcast(&intentBroadcast{node: in.Node, msg: msg})
}

// applyIntent records an intent and reports whether it was new.
func (p *Pool) applyIntent(in leaveIntent) bool {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, ok := p.intents[in.Node]; ok && prev.session == in.Session {
		return false
	}
	if ms, ok := p.members[in.Node]; ok && ms.Status == StatusAlive && ms.session != in.Session && ms.session != 0 {
		// An intent of an earlier run of a member that is back (NotifyJoin
		// dropped it), still carried by some peer's push/pull.
		return false
	}
	p.intents[in.Node] = intentRecord{session: in.Session, at: now}
	p.logger.Debug("leave intent received", "member", in.Node)
	// Gossip is unordered: memberlist's leave may have overtaken the
	// intent, in which case the member was recorded as failed. The session
	// proves the intent came from that very run of the node, so correct it.
	if ms, ok := p.members[in.Node]; ok && ms.session == in.Session && ms.Status == StatusDead {
		p.setStatusLocked(ms, StatusLeft, now)
		p.emitLocked(Event{Type: EventLeave, Member: ms.Member})
	}
	return true
}

// localIntentState encodes the recent leave intents for push/pull, the
// newest maxIntentsInState of them; nil when there are none.
func (p *Pool) localIntentState() []byte {
	type rec struct {
		in leaveIntent
		at time.Time
	}
	now := time.Now()
	p.mu.Lock()
	recs := make([]rec, 0, len(p.intents))
	for node, r := range p.intents {
		if now.Sub(r.at) <= intentTTL {
			recs = append(recs, rec{leaveIntent{Node: node, Session: r.session}, r.at})
		}
	}
	p.mu.Unlock()
	if len(recs) == 0 {
		return nil
	}
	if len(recs) > maxIntentsInState {
		sort.Slice(recs, func(i, j int) bool { return recs[i].at.After(recs[j].at) })
		recs = recs[:maxIntentsInState]
	}
	st := intentState{Intents: make([]leaveIntent, len(recs))}
	for i, r := range recs {
		st.Intents[i] = r.in
	}
	body, err := structs.Encode(&st)
	if err != nil {
		p.logger.Warn("encode leave intents for push/pull", "error", err)
		return nil
	}
	return append([]byte{intentStateVersion}, body...)
}

// mergeIntentState applies the intents in a peer's push/pull state. Empty
// state (a peer with none, or an older version that sends nothing) and
// unknown versions are ignored.
func (p *Pool) mergeIntentState(buf []byte) {
	if len(buf) < 2 || buf[0] != intentStateVersion {
		return
	}
	var st intentState
	if err := structs.Decode(buf[1:], &st); err != nil {
		p.logger.Warn("ignoring malformed leave intents from push/pull", "error", err)
		return
	}
	for _, in := range st.Intents {
		if in.Node != "" {
			p.applyIntent(in)
		}
	}
}
