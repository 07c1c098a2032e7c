package server

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Operator is the endpoint for cluster operations: Raft peers and
// snapshots.
type Operator struct{ srv *Server }

// RaftGetConfiguration lists the Raft servers and who leads.
func (e *Operator) RaftGetConfiguration(args *structs.GenericRequest, reply *structs.RaftConfigurationResponse) error {
	if done, err := e.srv.forward("Operator.RaftGetConfiguration", args, args, reply); done {
		return err
	}
	future := e.srv.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	names := map[string]string{}
	for _, m := range e.srv.gossip.Members() {
		names[m.Meta.ID] = m.Name
	}
	leaderAddr, _ := e.srv.raft.LeaderWithID()
	for _, s := range future.Configuration().Servers {
		reply.Servers = append(reply.Servers, &structs.RaftServer{
			ID:      string(s.ID),
			Node:    names[string(s.ID)],
			Address: string(s.Address),
			Leader:  s.Address == leaderAddr,
			Voter:   s.Suffrage == raft.Voter,
		})
	}
	reply.Index = future.Index()
	return nil
}

// RaftRemovePeer removes a server from the Raft configuration by id or
// address, for servers that died and will not return.
func (e *Operator) RaftRemovePeer(args *structs.RaftPeerRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Operator.RaftRemovePeer", args, args, reply); done {
		return err
	}
	if (args.ID == "") == (args.Address == "") {
		return structs.Errorf(structs.KindInvalid, "give exactly one of a peer id or address")
	}
	future := e.srv.raft.GetConfiguration()
	if err := future.Error(); err != nil {
		return fmt.Errorf("read raft configuration: %w", err)
	}
	for _, s := range future.Configuration().Servers {
		if string(s.ID) != args.ID && string(s.Address) != args.Address {
			continue
		}
		if err := e.srv.raft.RemoveServer(s.ID, 0, 10*time.Second).Error(); err != nil {
			return fmt.Errorf("remove raft peer %s: %w", s.ID, err)
		}
		e.srv.logger.Warn("removed raft peer by operator request", "id", s.ID, "address", s.Address)
		return nil
	}
	return structs.Errorf(structs.KindNotFound, "no raft peer with id %q or address %q", args.ID, args.Address)
}

// RaftTransferLeadership hands leadership to another voter, for
// maintenance of the leader's machine (and to exercise leader changes).
func (e *Operator) RaftTransferLeadership(args *structs.GenericRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Operator.RaftTransferLeadership", args, args, reply); done {
		return err
	}
	if err := e.srv.raft.LeadershipTransfer().Error(); err != nil {
		return structs.Errorf(structs.KindUnavailable, "transfer leadership: %v", err)
	}
	e.srv.logger.Info("leadership transferred by operator request")
	return nil
}

// SnapshotSave takes a snapshot of the state on the leader and returns it.
func (e *Operator) SnapshotSave(args *structs.GenericRequest, reply *structs.SnapshotResponse) error {
	if done, err := e.srv.forward("Operator.SnapshotSave", args, args, reply); done {
		return err
	}
	// Write the live state rather than a Raft snapshot so the answer
	// includes every applied entry, even right after a write.
	if err := e.srv.raft.Barrier(raftApplyTimeout).Error(); err != nil {
		return structs.Errorf(structs.KindUnavailable, "wait for applied state: %v", err)
	}
	var buf bytes.Buffer
	state := e.srv.fsm.State()
	if err := state.WriteSnapshot(&buf); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	reply.Data = buf.Bytes()
	reply.Index = state.LatestIndex()
	return nil
}

// SnapshotRestore replaces the cluster's state with a saved snapshot.
// The snapshot is checked fully before Raft sees it, so a bad file
// changes nothing.
func (e *Operator) SnapshotRestore(args *structs.SnapshotRestoreRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Operator.SnapshotRestore", args, args, reply); done {
		return err
	}
	if _, err := fsm.ReadSnapshot(bytes.NewReader(args.Data)); err != nil {
		return structs.Errorf(structs.KindInvalid, "snapshot is not valid: %v", err)
	}
	meta := &raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: int64(len(args.Data))}
	if err := e.srv.raft.Restore(meta, io.Reader(bytes.NewReader(args.Data)), time.Minute); err != nil {
		return fmt.Errorf("restore snapshot: %w", err)
	}
	reply.Index = e.srv.raft.LastIndex()
	e.srv.logger.Warn("state restored from an operator snapshot", "bytes", len(args.Data))
	return nil
}
