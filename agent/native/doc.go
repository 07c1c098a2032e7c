// Package native is the native /v1 HTTP API that `cloudctl` and the
// Go client (package api) speak: its route table, with the access level
// of every route (website/policy.md is generated from it), its handlers,
// its JSON bodies and its error body {"error","kind"}, built on the
// routing kit (internal/route). It authorizes each request (a token the
// identity service verifies, roles against the route's level, other
// projects' instances hidden) and calls the servers as the caller.
//
// It gets all it needs from the daemon through Config: the servers to
// call, the token verifier, image data streaming, the console and guest
// services, metrics, and what it reads of the agent itself (its
// configuration, gossip members, Raft statistics).
//
// It must not import the daemon (package agent) or reach the servers by
// any other way than Config's callers, must not hold state of its own
// beyond a request, and must not mount or serve the other APIs of the
// agent's HTTP port.
package native
