package server

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

const (
	// leaderHoldTimeout is how long a request waits for a leader to be
	// elected before failing, so a failover looks like latency, not an
	// error, to clients.
	leaderHoldTimeout = 5 * time.Second
	// maxQueryTime caps a blocking query's wait.
	maxQueryTime = 10 * time.Minute
	// defaultQueryTime is a blocking query's wait when none is given.
	defaultQueryTime = 5 * time.Minute
)

// forward sends the request to the leader unless this server should
// answer it: it is the leader, or the request is a read that allows stale
// data. It returns true when the request was handled remotely (reply is
// filled, or err set).
func (s *Server) forward(method string, info structs.RPCInfo, args, reply any) (bool, error) {
	if region := info.RequestRegion(); region != "" && region != s.config.Region {
		return true, structs.Errorf(structs.KindInvalid, "region %q is not served here (this is %q)", region, s.config.Region)
	}
	if info.IsRead() && (info.AllowStaleRead() || brokenFollowerReads) {
		return false, nil
	}
	deadline := time.Now().Add(leaderHoldTimeout)
	for {
		// A new leader answers consistent reads only once its barrier
		// has applied the entries of earlier terms: before that its state
		// may be older than what a follower already served.
		if s.IsLeader() && (!info.IsRead() || s.readyForReads.Load()) {
			return false, nil
		}
		addr, _ := s.raft.LeaderWithID()
		if addr != "" && addr != raft.ServerAddress(s.rpcAdvertise) {
			info.SetForwarded()
			err := s.connPool.RPC(string(addr), method, args, reply)
			if err == nil || !rpc.IsConnError(err) {
				return true, err
			}
			if time.Now().After(deadline) {
				// Only the text of a transport failure crosses the next
				// hop: give it the kind that says "try again".
				return true, structs.Errorf(structs.KindUnavailable, "forward %s to the leader %s: %v", method, addr, err)
			}
			// The leader we knew is unreachable: wait for a new one.
		}
		if time.Now().After(deadline) {
			return true, structs.ErrNoLeader
		}
		select {
		case <-s.shutdownCh:
			return true, structs.Errorf(structs.KindUnavailable, "server is shutting down")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// apply encodes and commits an entry, returning its index.
func (s *Server) apply(t structs.MessageType, body any) (uint64, error) {
	return s.applyEncoded(structs.EncodeEntry, t, body)
}

// applyEncoded encodes an entry with encode and commits it, returning
// its index.
func (s *Server) applyEncoded(encode func(structs.MessageType, any) ([]byte, error), t structs.MessageType, body any) (uint64, error) {
	entry, err := encode(t, body)
	if err != nil {
		return 0, err
	}
	index, _, err := s.raftApply(entry)
	if err != nil {
		return index, fmt.Errorf("%s: %w", t, err)
	}
	return index, nil
}

// blockingRPC runs a read with the query's blocking semantics and fills
// the reply's meta.
func (s *Server) blockingRPC(opts *structs.QueryOptions, meta *structs.QueryMeta, fn fsm.QueryFn) error {
	wait := opts.MaxQueryTime
	if wait <= 0 {
		wait = defaultQueryTime
	}
	if wait > maxQueryTime {
		wait = maxQueryTime
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.shutdownCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	_, index, err := fsm.BlockingQuery(ctx, s.fsm.State, opts.MinQueryIndex, wait, fn)
	if err != nil {
		return err
	}
	// Index 0 would make a client's next blocking query return at once.
	if index == 0 {
		index = 1
	}
	meta.Index = index
	s.setQueryMeta(meta)
	return nil
}

func (s *Server) setQueryMeta(meta *structs.QueryMeta) {
	if s.IsLeader() {
		meta.LastContact = 0
		meta.KnownLeader = true
		return
	}
	if last := s.raft.LastContact(); !last.IsZero() {
		meta.LastContact = time.Since(last)
	}
	addr, _ := s.raft.LeaderWithID()
	meta.KnownLeader = addr != ""
}
