package gossip

import (
	"fmt"
	"net"
	"strconv"
)

// Status is a member's liveness as seen by the local node.
type Status string

const (
	// StatusAlive means the member answers probes.
	StatusAlive Status = "alive"
	// StatusSuspect means the member missed probes and may soon be declared
	// dead. Memberlist v0.7.0 does not expose suspicion through its public
	// API, so members are currently reported alive until declared dead;
	// the value exists so callers can already handle it.
	StatusSuspect Status = "suspect"
	// StatusDead means the member failed: it stopped answering without
	// saying goodbye. It may come back.
	StatusDead Status = "dead"
	// StatusLeft means the member left gracefully via Pool.Leave and is
	// not expected back under the same session.
	StatusLeft Status = "left"
)

// Member is a snapshot of one node in the pool.
type Member struct {
	Name   string // memberlist node name, unique in the pool
	Addr   net.IP // gossip address
	Port   int    // gossip port
	Meta   Meta
	Status Status
}

// Address returns the member's gossip address as "ip:port", the form
// Pool.Join accepts.
func (m Member) Address() string {
	return net.JoinHostPort(m.Addr.String(), strconv.Itoa(m.Port))
}

// EventType classifies a membership change.
type EventType int

// The zero EventType is deliberately invalid so an uninitialised Event is
// never mistaken for a join.
const (
	// EventJoin: a member became alive (new, or back from dead/left). The
	// local node's own join is reported too, when the pool is created.
	EventJoin EventType = iota + 1
	// EventLeave: a member left gracefully (Pool.Leave).
	EventLeave
	// EventFailed: a member was declared dead by failure detection.
	EventFailed
	// EventUpdate: a live member changed its metadata (Pool.UpdateMeta).
	EventUpdate
)

// String implements fmt.Stringer for logs.
func (t EventType) String() string {
	switch t {
	case EventJoin:
		return "join"
	case EventLeave:
		return "leave"
	case EventFailed:
		return "failed"
	case EventUpdate:
		return "update"
	default:
		return fmt.Sprintf("EventType(%d)", int(t))
	}
}

// Event reports one membership change. Member is the state right after the
// change.
type Event struct {
	Type   EventType
	Member Member
}
