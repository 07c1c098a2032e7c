package gossip

import (
	"net"
	"time"

	"github.com/hashicorp/memberlist"
)

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

// LocalState is the application state memberlist exchanges at every
// push/pull: the recent leave intents, so a member that missed an intent's
// gossip still learns it (anti-entropy, as Serf's push/pull carries left
// members).
func (d *delegate) LocalState(join bool) []byte { return d.p.localIntentState() }

// MergeRemoteState merges a peer's LocalState.
func (d *delegate) MergeRemoteState(buf []byte, join bool) { d.p.mergeIntentState(buf) }

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
	p.setStatusLocked(ms, StatusAlive, now)
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
	p.setStatusLocked(ms, status, now)
	p.logger.Debug("member gone", "member", n.Name, "event", typ)
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
	if ms.Status == "" {
		// Memberlist updates only live members; we had forgotten it.
		p.setStatusLocked(ms, StatusAlive, now)
	}
	p.emitLocked(Event{Type: EventUpdate, Member: ms.Member})
}

// refreshLocked creates or updates the record for n from memberlist's node,
// copying everything it needs. Caller holds p.mu.
func (p *Pool) refreshLocked(n *memberlist.Node, now time.Time) *memberState {
	ms, ok := p.members[n.Name]
	if !ok {
		// No status yet: the caller sets it (setStatusLocked), which
		// keeps numAlive's count.
		ms = &memberState{Member: Member{Name: n.Name}, since: now}
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
