package gossip

import (
	"errors"
	"fmt"

	"github.com/hashicorp/memberlist"
	"github.com/stratus-cloud/stratus/structs"
)

// Role says what a member does in the cluster.
type Role string

const (
	// RoleServer is a control-plane server (a Raft voter candidate).
	RoleServer Role = "server"
	// RoleClient is a hypervisor agent that runs workloads.
	RoleClient Role = "client"
)

// Meta is the metadata every member gossips about itself. It travels in
// memberlist's node metadata, which is capped at memberlist.MetaMaxSize
// (512) bytes, so it holds only what peers need to classify and reach a
// node; anything richer belongs in the state store.
type Meta struct {
	ID       string // stable node id (uuid); survives restarts and renames
	Role     Role
	Region   string
	AZ       string // availability zone
	RPCAddr  string // host:port of the node's RPC listener
	HTTPAddr string // host:port of its HTTP API
	Expect   int    // servers: bootstrap_expect (0 = none)
	Version  string // build version
	// FSMLevel is a server's state machine level (structs.FSMLevel): the
	// leader proposes a message type only when every server advertises a
	// level that has it. 0 = none (a build from before levels).
	FSMLevel int
}

// ErrMetaTooLarge is returned (wrapped) by New and UpdateMeta when the
// encoded metadata exceeds memberlist's limit. Memberlist itself panics on
// oversized metadata, so the check has to happen here, up front.
var ErrMetaTooLarge = errors.New("gossip: node metadata too large")

// wireMeta is the on-the-wire form of Meta. One-letter keys keep the
// msgpack map small (the limit is 512 bytes) while remaining
// self-describing, so fields can be added later without breaking older
// members: unknown keys are ignored on decode and missing ones stay zero.
type wireMeta struct {
	ID       string `codec:"i,omitempty"`
	Role     string `codec:"r,omitempty"`
	Region   string `codec:"g,omitempty"`
	AZ       string `codec:"z,omitempty"`
	RPCAddr  string `codec:"p,omitempty"`
	HTTPAddr string `codec:"h,omitempty"`
	Expect   int    `codec:"e,omitempty"`
	Version  string `codec:"v,omitempty"`
	FSMLevel int    `codec:"l,omitempty"`
	// Session identifies one run of a Pool. It lets receivers match a
	// leave intent to the incarnation of the node that sent it, so a stale
	// intent can never mark a restarted node (same name, new session) as
	// having left. It is internal and not exposed through Meta.
	Session uint64 `codec:"s,omitempty"`
}

// validate checks the fields peers rely on to route to and classify a node.
func (m Meta) validate() error {
	if m.ID == "" {
		return errors.New("gossip: Meta.ID is required")
	}
	switch m.Role {
	case RoleServer, RoleClient:
	default:
		return fmt.Errorf("gossip: Meta.Role must be %q or %q, got %q", RoleServer, RoleClient, m.Role)
	}
	if m.Expect < 0 {
		return fmt.Errorf("gossip: Meta.Expect must not be negative, got %d", m.Expect)
	}
	return nil
}

// encodeMeta serialises m for memberlist and enforces the size limit.
func encodeMeta(m Meta, session uint64) ([]byte, error) {
	buf, err := structs.Encode(&wireMeta{
		ID:       m.ID,
		Role:     string(m.Role),
		Region:   m.Region,
		AZ:       m.AZ,
		RPCAddr:  m.RPCAddr,
		HTTPAddr: m.HTTPAddr,
		Expect:   m.Expect,
		Version:  m.Version,
		FSMLevel: m.FSMLevel,
		Session:  session,
	})
	if err != nil {
		return nil, fmt.Errorf("gossip: encode metadata: %w", err)
	}
	if len(buf) > memberlist.MetaMaxSize {
		return nil, fmt.Errorf("%w: encodes to %d bytes, memberlist allows at most %d (shorten ID, Region, AZ, addresses or Version)",
			ErrMetaTooLarge, len(buf), memberlist.MetaMaxSize)
	}
	return buf, nil
}

// decodeMeta is the inverse of encodeMeta. Empty input decodes to the zero
// Meta: a member that gossips no metadata is not Stratus-aware, and callers
// should see that rather than an error.
func decodeMeta(buf []byte) (Meta, uint64, error) {
	if len(buf) == 0 {
		return Meta{}, 0, nil
	}
	var w wireMeta
	if err := structs.Decode(buf, &w); err != nil {
		return Meta{}, 0, fmt.Errorf("gossip: decode metadata: %w", err)
	}
	return Meta{
		ID:       w.ID,
		Role:     Role(w.Role),
		Region:   w.Region,
		AZ:       w.AZ,
		RPCAddr:  w.RPCAddr,
		HTTPAddr: w.HTTPAddr,
		Expect:   w.Expect,
		Version:  w.Version,
		FSMLevel: w.FSMLevel,
	}, w.Session, nil
}
