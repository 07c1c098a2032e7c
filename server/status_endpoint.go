package server

import (
	"fmt"
	"sort"

	"github.com/stratus-cloud/stratus/structs"
)

// Status answers questions about the cluster itself.
type Status struct{ srv *Server }

// Ping answers as soon as it arrives; agents use it to check a server.
func (e *Status) Ping(args *structs.GenericRequest, reply *struct{}) error { return nil }

// Leader returns the leader's RPC address ("" when none is known).
func (e *Status) Leader(args *structs.GenericRequest, reply *structs.StatusResponse) error {
	addr, _ := e.srv.raft.LeaderWithID()
	reply.Leader = string(addr)
	return nil
}

// Peers returns the RPC addresses of the Raft configuration's servers.
func (e *Status) Peers(args *structs.GenericRequest, reply *structs.StatusResponse) error {
	future := e.srv.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	for _, s := range future.Configuration().Servers {
		reply.Peers = append(reply.Peers, string(s.Address))
	}
	sort.Strings(reply.Peers)
	addr, _ := e.srv.raft.LeaderWithID()
	reply.Leader = string(addr)
	return nil
}
