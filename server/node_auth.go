package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// Node authentication. An agent generates a random node secret on first
// start (client/secret.go) and presents it in the AuthToken of
// every call about its hosts. Host.Register stores its hash on the host
// record; from then on every node-facing endpoint (Host.Register,
// Host.Heartbeat, Alloc.GetHostAllocs, Alloc.GetAllocs,
// Alloc.UpdateFromClient, Instance.SnapshotProgress, NetLease.Report)
// calls authenticateNode or authenticateNodeAllocs first, before it
// forwards, so a caller without the host's secret is refused on whatever
// server it reached; the server that handles the call checks again with
// its own state.
//
// A host unknown to the server's state passes (Register creates it; the
// other endpoints answer not found), and so does a host registered
// without a secret by an older agent, until a registration with a
// secret claims it.
//
// With ACLs on, the RPC hook (rpc_policy_auth.go) runs first on every
// server: it admits a node secret to these endpoints (rule nodeEndpoint)
// and, for the reads an agent makes on its own behalf (rule nodeOwn),
// only when the secret is a registered host's, limited to that agent's
// hosts (nodeHosts).

// withoutSecretHash is a shallow copy of a host record without its
// secret's hash, for answers: the hash never leaves the servers.
func withoutSecretHash(h *structs.Host) *structs.Host {
	if h == nil || h.SecretHash == nil {
		return h
	}
	c := *h
	c.SecretHash = nil
	return &c
}

// withoutSecretHashes is withoutSecretHash of every host.
func withoutSecretHashes(hosts []*structs.Host) []*structs.Host {
	if hosts == nil {
		return nil
	}
	out := make([]*structs.Host, len(hosts))
	for i, h := range hosts {
		out[i] = withoutSecretHash(h)
	}
	return out
}

// errNodeSecret is the one answer to a missing or wrong node secret.
func errNodeSecret(hostID string) error {
	return structs.Errorf(structs.KindPermission,
		"node secret of host %s is missing or does not match (an operator resets a lost one by deregistering the host)", hostID)
}

// checkNodeSecret checks secret against one host record (nil: unknown).
func checkNodeSecret(h *structs.Host, secret string) error {
	if h == nil || len(h.SecretHash) == 0 {
		return nil
	}
	if secret == "" || !structs.NodeSecretMatches(h.SecretHash, secret) {
		return errNodeSecret(h.ID)
	}
	return nil
}

// authenticateNode checks that secret is the node secret of every host
// in hostIDs.
func (s *Server) authenticateNode(secret string, hostIDs ...string) error {
	state := s.fsm.State()
	for _, id := range hostIDs {
		h, err := state.HostByID(nil, id)
		if err != nil {
			return err
		}
		if err := checkNodeSecret(h, secret); err != nil {
			s.logger.Warn("node call refused", "host_id", id, "error", err)
			return err
		}
	}
	return nil
}

// authenticateNodeAllocs checks that secret is the node secret of the
// hosts of every allocation in allocIDs; unknown allocations pass (the
// endpoint skips them).
func (s *Server) authenticateNodeAllocs(secret string, allocIDs ...string) error {
	state := s.fsm.State()
	checked := map[string]bool{}
	for _, id := range allocIDs {
		a, err := state.AllocationByID(nil, id)
		if err != nil {
			return err
		}
		if a == nil || checked[a.HostID] {
			continue
		}
		if err := s.authenticateNode(secret, a.HostID); err != nil {
			return err
		}
		checked[a.HostID] = true
	}
	return nil
}
