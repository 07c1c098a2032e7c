package structs

import "time"

// NodeIntroMethod is the authentication method of a node introduction
// token: what an operator issues (cloudctl operator node-intro create),
// as Nomad 1.10's node introduction, so that a new client agent may
// register a host the servers do not know yet. With ACLs on, the first
// registration of a host must present one; the servers then keep the
// hash of the agent's node secret, which every later call presents. An
// introduction is no credential for anything else.
const NodeIntroMethod = "node-intro"

// Limits of an introduction's life.
const (
	NodeIntroDefaultTTL = time.Hour
	NodeIntroMaxTTL     = 7 * 24 * time.Hour
)

// NodeIntroCreateRequest asks for an introduction token valid for TTL
// (NodeIntroDefaultTTL when zero), for the host named HostName only when
// it is set, for any new host otherwise.
type NodeIntroCreateRequest struct {
	TTL      time.Duration
	HostName string
	WriteRequest
}

// NodeIntroCreateResponse carries the token and its limits.
type NodeIntroCreateResponse struct {
	Token     string
	HostName  string
	ExpiresAt time.Time
}
