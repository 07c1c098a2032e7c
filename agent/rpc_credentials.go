package agent

import (
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// The credentials of the agent's RPCs. With ACLs on, the servers check
// every call against their rule table (server/rpc_policy.go):
//   - a call made for a user carries that user's token (the APIs stamp
//     it from the request, route.AsCaller), through a.rpc, which adds
//     nothing;
//   - a call the agent makes on its own behalf carries its own
//     credential, through a.self: the server's own when the agent runs
//     the server role, else its node secret;
//   - the hosts' calls (hypervisor agents, dataplane, metadata, image
//     cache) carry the node secret, through a.nodeRPC(), so the servers
//     limit them to this agent's hosts.
//
// Nothing the agent does by itself needs a user's token.

// userRPC reaches the embedded server in process with only the
// credential a call carries, checked as over the network.
type userRPC struct{ srv *server.Server }

// RPC calls method on the embedded server.
func (u userRPC) RPC(method string, args, reply any) error { return u.srv.UserRPC(method, args, reply) }

// nodeRPC is how the agent's hosts reach the servers: with the node
// secret, or as a.rpc when the agent runs no hosts.
func (a *Agent) nodeRPC() rpcCaller {
	if a.nodeSecret == "" {
		return a.self
	}
	return route.WithCredential(a.rpc, a.nodeSecret)
}

// ownToken is the credential the agent's own streams carry (the image
// cache's downloads, snapshots' uploads): its node secret, else its
// server's credential.
func (a *Agent) ownToken() string {
	if a.nodeSecret == "" && a.server != nil {
		return a.server.Credential()
	}
	return a.nodeSecret
}

// localHostIDs lists the ids of the hosts this agent runs: what its node
// secret may read about (the metadata service looks up guests by them).
func (a *Agent) localHostIDs() []string {
	var ids []string
	for _, hd := range a.hostDrivers {
		ids = append(ids, hd.client.HostID())
	}
	for _, d := range a.drivers {
		if m, ok := d.(*multiHost); ok {
			m.mu.Lock()
			for _, c := range m.clients {
				ids = append(ids, c.HostID())
			}
			m.mu.Unlock()
		}
	}
	return ids
}

// computeViewReads are the reads the Compute API makes to render what a
// user may see (a server's availability zone, the zones' list) but a
// user without the admin role may not make itself: hosts and
// aggregates. Nova reads them with an elevated context; the agent reads
// them with its own credential (a node secret sees hosts' directory
// only). The API shows their admin-only attributes to admins alone.
var computeViewReads = map[string]bool{
	"Host.Get": true, "Host.List": true, "Aggregate.Get": true, "Aggregate.List": true,
}

// computeRPC is the Compute API's caller: the user's token, except for
// computeViewReads of a caller without the admin role.
func (a *Agent) computeRPC() rpcCaller {
	return route.Func(func(method string, args, reply any) error {
		if cr, ok := args.(structs.Credentialed); ok && computeViewReads[method] {
			if tok := cr.AuthTokenValue(); tok != "" && !a.isAdminToken(tok) {
				cr.SetAuthToken("")
				return a.self.RPC(method, args, reply)
			}
		}
		return a.rpc.RPC(method, args, reply)
	})
}

// isAdminToken reports whether a token is a valid admin's.
func (a *Agent) isAdminToken(raw string) bool {
	if a.identity == nil {
		return false
	}
	t, err := a.identity.Verify(raw)
	return err == nil && t != nil && t.IsAdmin()
}
