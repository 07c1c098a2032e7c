package route

import "github.com/stratus-cloud/stratus/structs"

// RPC reaches the servers: the agent's in-process server or its
// connection pool.
type RPC interface {
	RPC(method string, args, reply any) error
}

// AsCaller returns an RPC that makes every call on a caller's behalf:
// each request carries the caller's token (structs.Credentialed), which
// the servers check against their own rules.
func AsCaller(rpc RPC, token string) RPC { return caller{rpc: rpc, token: token, keep: false} }

// WithCredential returns an RPC that gives a credential of its own (an
// agent's node secret, a server's credential) to every call that
// carries none; a call made for a user keeps the user's token.
func WithCredential(rpc RPC, token string) RPC { return caller{rpc: rpc, token: token, keep: true} }

type caller struct {
	rpc   RPC
	token string
	// keep leaves a token already set.
	keep bool
}

func (c caller) RPC(method string, args, reply any) error {
	if cr, ok := args.(structs.Credentialed); ok && c.token != "" && (!c.keep || cr.AuthTokenValue() == "") {
		cr.SetAuthToken(c.token)
	}
	return c.rpc.RPC(method, args, reply)
}

// Func is a function as an RPC.
type Func func(method string, args, reply any) error

// RPC calls f.
func (f Func) RPC(method string, args, reply any) error { return f(method, args, reply) }
