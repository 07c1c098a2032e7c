package server

import (
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Host is the endpoint for hosts: registration and heartbeats from
// agents, reads and enable/disable for operators.
type Host struct{ srv *Server }

// Register stores an agent's fingerprint and marks the host up. The
// node secret in AuthToken claims the host on its first registration,
// which with ACLs on needs an introduction (node_intro.go); later
// registrations must present the same secret (node_auth.go).
func (e *Host) Register(args *structs.HostRegisterRequest, reply *structs.HostRegisterResponse) error {
	if args.Host != nil {
		if err := e.srv.authenticateNode(args.AuthToken, args.Host.ID); err != nil {
			return err
		}
	}
	if done, err := e.srv.forward("Host.Register", args, args, reply); done {
		return err
	}
	if args.Host == nil {
		return structs.Errorf(structs.KindInvalid, "no host to register")
	}
	if err := args.Host.Validate(); err != nil {
		return err
	}
	if args.AuthToken != "" && len(args.AuthToken) < structs.MinNodeSecretLen {
		return structs.Errorf(structs.KindInvalid, "node secret is shorter than %d characters", structs.MinNodeSecretLen)
	}
	// A host the servers do not know needs an introduction (node_intro.go).
	if err := e.srv.checkNodeIntro(args.Host, args.IntroToken); err != nil {
		e.srv.logger.Warn("host registration refused", "host", args.Host.Name, "host_id", args.Host.ID, "error", err)
		return err
	}
	h := args.Host.Copy()
	h.SecretHash = nil
	if args.AuthToken != "" {
		h.SecretHash = structs.HashNodeSecret(args.AuthToken)
	}
	h.StatusUpdatedAt = time.Now().UnixNano()
	index, err := e.srv.apply(structs.HostRegisterType, &structs.HostRegisterEntry{Host: h})
	if err != nil {
		return err
	}
	reply.Index, reply.HeartbeatTTL = index, e.srv.heartbeats.reset(h.ID, e.srv.config.MaxHeartbeatsPerSecond)
	return nil
}

// Heartbeat keeps hosts alive; a host that was down comes back up.
func (e *Host) Heartbeat(args *structs.HostHeartbeatRequest, reply *structs.HostRegisterResponse) error {
	if err := e.srv.authenticateNode(args.AuthToken, args.HostIDs...); err != nil {
		return err
	}
	if done, err := e.srv.forward("Host.Heartbeat", args, args, reply); done {
		return err
	}
	state := e.srv.fsm.State()
	var revived []string
	reply.HeartbeatTTL = e.srv.config.HeartbeatTTL
	for _, id := range args.HostIDs {
		h, err := state.HostByID(nil, id)
		if err != nil {
			return err
		}
		if h == nil {
			return structs.Errorf(structs.KindNotFound, "host %q is not registered", id)
		}
		ttl := e.srv.heartbeats.reset(id, e.srv.config.MaxHeartbeatsPerSecond)
		reply.HeartbeatTTL = max(reply.HeartbeatTTL, ttl)
		if h.Status != structs.HostStatusUp {
			revived = append(revived, id)
		}
	}
	if len(revived) > 0 {
		index, err := e.srv.setHostStatus(revived, structs.HostStatusUp)
		if err != nil {
			return err
		}
		reply.Index = index
	}
	return nil
}

// List reads every host.
func (e *Host) List(args *structs.HostListRequest, reply *structs.HostListResponse) error {
	if done, err := e.srv.forward("Host.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		hosts, err := state.Hosts(ws)
		reply.Hosts = withoutSecretHashes(hosts)
		return hosts, state.Index(fsm.TableHosts), err
	})
}

// Get reads one host by id or name.
func (e *Host) Get(args *structs.HostSpecificRequest, reply *structs.SingleHostResponse) error {
	if done, err := e.srv.forward("Host.Get", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		h, err := state.HostByID(ws, args.HostID)
		if err == nil && h == nil {
			h, err = state.HostByName(ws, args.HostID)
		}
		reply.Host = withoutSecretHash(h)
		return h, state.Index(fsm.TableHosts), err
	})
	if err == nil && reply.Host == nil {
		return structs.Errorf(structs.KindNotFound, "host %q not found", args.HostID)
	}
	return err
}

// UpdateEnabled enables or disables scheduling onto a host.
func (e *Host) UpdateEnabled(args *structs.HostUpdateEnabledRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Host.UpdateEnabled", args, args, reply); done {
		return err
	}
	state := e.srv.fsm.State()
	h, err := state.HostByID(nil, args.HostID)
	if err == nil && h == nil {
		h, err = state.HostByName(nil, args.HostID)
	}
	if err != nil {
		return err
	}
	if h == nil {
		return structs.Errorf(structs.KindNotFound, "host %q not found", args.HostID)
	}
	if len(args.Reason) > 255 {
		return structs.Errorf(structs.KindInvalid, "disabled reason is longer than 255 characters")
	}
	entry := &structs.HostEnabledUpdateEntry{HostID: h.ID, Enabled: args.Enabled, Reason: args.Reason}
	if args.Drain {
		if args.Enabled {
			return structs.Errorf(structs.KindInvalid, "a drained host is disabled: drain and enable together make no sense")
		}
		if entry.Reason == "" {
			entry.Reason = "draining"
		}
		entry.Drain = &structs.DrainState{StartedAt: time.Now().UnixNano()}
	} else if !args.Enabled && h.Drain != nil {
		entry.Drain = h.Drain // disabling again keeps the drain going
	}
	index, err := e.srv.apply(structs.HostEnabledUpdateType, entry)
	reply.Index = index
	return err
}
