package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// AgentExited queues, on the leader, a check of the agents running the
// named hosts: a server saw the session their calls came on close.
func (e *Host) AgentExited(args *structs.HostAgentExitedRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Host.AgentExited", args, args, reply); done {
		return err
	}
	if len(args.HostIDs) > maxHostsPerSession {
		return structs.Errorf(structs.KindInvalid, "%d hosts in one report; at most %d", len(args.HostIDs), maxHostsPerSession)
	}
	state := e.srv.fsm.State()
	var members []string
	seen := make(map[string]bool, len(args.HostIDs))
	for _, id := range args.HostIDs {
		h, err := state.HostByID(nil, id)
		if err != nil {
			return err
		}
		if h != nil && h.Up() && h.GossipMember != "" && !seen[h.GossipMember] {
			seen[h.GossipMember] = true
			members = append(members, h.GossipMember)
		}
	}
	e.srv.heartbeats.queueExited(members)
	return nil
}
