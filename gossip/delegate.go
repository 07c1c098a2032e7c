package gossip

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/stratus-cloud/stratus/structs"
)

// User message types carried over memberlist's gossip (first byte).
const (
	msgLeaveIntent byte = 'L'
)

// intentTTL is how long a leave intent is remembered. It only has to
// outlive the gap between the intent and memberlist's own leave broadcast,
// which is normally milliseconds; minutes leaves room for slow networks.
const intentTTL = 2 * time.Minute

// maxIntentWait caps the intent broadcast when Leave is called without a
// timeout, so a leave never hangs on the intent alone.
const maxIntentWait = 5 * time.Second

// leaveIntent announces that a node is about to leave gracefully.
type leaveIntent struct {
	Node    string `codec:"n"`
	Session uint64 `codec:"s"`
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
// also reports our own leave through NotifyLeave) and gossips it, waiting
// until it has been retransmitted to enough peers or wait elapses.
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
	p.mu.Unlock()

	if p.ml.NumMembers() <= 1 {
		return nil // nobody to tell
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
	now := time.Now()
	p.mu.Lock()
	if prev, ok := p.intents[in.Node]; ok && prev.session == in.Session {
		p.mu.Unlock()
		return // already known and already rebroadcast
	}
	p.intents[in.Node] = intentRecord{session: in.Session, at: now}
	// Gossip is unordered: memberlist's leave may have overtaken the
	// intent, in which case the member was recorded as failed. The session
	// proves the intent came from that very run of the node, so correct it.
	if ms, ok := p.members[in.Node]; ok && ms.session == in.Session && ms.Status == StatusDead {
		ms.Status = StatusLeft
		ms.since = now
		p.emitLocked(Event{Type: EventLeave, Member: ms.Member})
	}
	p.mu.Unlock()

	// Rebroadcast once so the intent spreads epidemically rather than
	// relying on the leaving node's own few retransmissions.
	msg, err := encodeIntent(in)
	if err != nil {
		return
	}
	p.broadcasts.QueueBroadcast(&intentBroadcast{node: in.Node, msg: msg})
}

// delegate implements memberlist.Delegate. It is a separate type so that
// memberlist's callback methods do not become part of Pool's API.
type delegate struct{ p *Pool }

// NodeMeta returns the pre-encoded local metadata. Size was checked when it
// was set, so memberlist's panic on oversized metadata cannot trigger.
func (d *delegate) NodeMeta(limit int) []byte {
	d.p.metaMu.Lock()
	defer d.p.metaMu.Unlock()
	if len(d.p.metaBytes) > limit {
		return nil // unreachable: limit is memberlist.MetaMaxSize
	}
	return d.p.metaBytes
}

// NotifyMsg receives user messages. buf is only valid during the call.
func (d *delegate) NotifyMsg(buf []byte) {
	if len(buf) == 0 {
		return
	}
	switch buf[0] {
	case msgLeaveIntent:
		d.p.handleLeaveIntent(append([]byte(nil), buf[1:]...))
	case msgKeyringRequest:
		go d.p.handleKeyringRequest(append([]byte(nil), buf[1:]...))
	case msgKeyringResponse:
		d.p.handleKeyringReply(append([]byte(nil), buf[1:]...))
	default:
		d.p.logger.Debug("ignoring unknown gossip message", "type", buf[0])
	}
}

// GetBroadcasts hands queued leave intents to memberlist's gossip.
func (d *delegate) GetBroadcasts(overhead, limit int) [][]byte {
	return d.p.broadcasts.GetBroadcasts(overhead, limit)
}

// LocalState is unused: there is no application state to push/pull.
func (d *delegate) LocalState(join bool) []byte { return nil }

// MergeRemoteState is unused; see LocalState.
func (d *delegate) MergeRemoteState(buf []byte, join bool) {}

// eventDelegate implements memberlist.EventDelegate. Memberlist calls it
// with its node lock held: it must not call memberlist or block, and the
// *Node is only safe to read during the call, so everything is copied.
type eventDelegate struct{ p *Pool }

// NotifyJoin records a member becoming alive.
func (e *eventDelegate) NotifyJoin(n *memberlist.Node) {
	p := e.p
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	ms := p.refreshLocked(n, now)
	ms.Status = StatusAlive
	ms.since = now
	// A leave intent from an earlier run of this node name must not apply
	// to the new one.
	if in, ok := p.intents[n.Name]; ok && in.session != ms.session {
		delete(p.intents, n.Name)
	}
	p.reapLocked(now)
	p.emitLocked(Event{Type: EventJoin, Member: ms.Member})
}

// NotifyLeave records a member that is gone. Memberlist uses the same
// callback for graceful leaves and failures; the leave intents decide.
func (e *eventDelegate) NotifyLeave(n *memberlist.Node) {
	p := e.p
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	ms := p.refreshLocked(n, now)
	typ, status := EventFailed, StatusDead
	if in, ok := p.intents[n.Name]; ok && in.session == ms.session {
		typ, status = EventLeave, StatusLeft
	}
	ms.Status = status
	ms.since = now
	p.reapLocked(now)
	p.emitLocked(Event{Type: typ, Member: ms.Member})
}

// NotifyUpdate records changed metadata of a live member.
func (e *eventDelegate) NotifyUpdate(n *memberlist.Node) {
	p := e.p
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	ms := p.refreshLocked(n, now)
	p.emitLocked(Event{Type: EventUpdate, Member: ms.Member})
}

// refreshLocked creates or updates the record for n from memberlist's node,
// copying everything it needs. Caller holds p.mu.
func (p *Pool) refreshLocked(n *memberlist.Node, now time.Time) *memberState {
	ms, ok := p.members[n.Name]
	if !ok {
		ms = &memberState{Member: Member{Name: n.Name, Status: StatusAlive}, since: now}
		p.members[n.Name] = ms
	}
	ms.Addr = append(net.IP(nil), n.Addr...)
	ms.Port = int(n.Port)
	meta, session, err := decodeMeta(n.Meta)
	if err != nil {
		// Keep the member visible (it is in the pool) but without
		// metadata, so it never matches a role or region filter.
		p.logger.Warn("member has unreadable metadata", "member", n.Name, "error", err)
	}
	ms.Meta, ms.session = meta, session
	return ms
}
