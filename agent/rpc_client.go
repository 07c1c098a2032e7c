package agent

import (
	"math/rand/v2"

	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// serverRPC sends a client-only agent's RPCs to a server it knows from
// gossip, trying the next one when a server cannot be reached.
type serverRPC struct {
	pool   *gossip.Pool
	conns  *rpc.ConnPool
	region string
}

// RPC calls method on a server of the agent's region.
func (s *serverRPC) RPC(method string, args, reply any) error {
	servers := s.pool.Servers(s.region)
	if len(servers) == 0 {
		return structs.Errorf(structs.KindUnavailable, "no servers known in region %q; is the agent joined to the cluster?", s.region)
	}
	// Spread load; a failed server is skipped for the next one.
	rand.Shuffle(len(servers), func(i, j int) { servers[i], servers[j] = servers[j], servers[i] })
	var err error
	for _, srv := range servers {
		err = s.conns.RPC(srv.Meta.RPCAddr, method, args, reply)
		if err == nil || !rpc.IsConnError(err) {
			return err
		}
	}
	return structs.Errorf(structs.KindUnavailable, "no server reachable: %v", err)
}
