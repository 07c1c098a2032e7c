package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/stratus-cloud/stratus/structs"
)

// raftStore is the log and stable store; bbolt through raft-boltdb.
type raftStore interface {
	raft.LogStore
	raft.StableStore
	io.Closer
}

const (
	snapshotsRetained = 2
	raftApplyTimeout  = 30 * time.Second
	// raftLogCacheSize is how many recent log entries stay in memory,
	// so the leader replicates and every server applies them without
	// reading them back from bbolt and decoding them again. Nomad keeps
	// 512; entries here can be large (a batch of plans), and followers
	// lag a few entries, so 128 keeps the memory small.
	raftLogCacheSize = 128
)

func (s *Server) setupRaft() error {
	dir := filepath.Join(s.config.DataDir, "raft")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create raft dir: %w", err)
	}
	// Damaged Raft data stops the server here, with a clear error,
	// instead of being applied or panicking Raft later (raft_verify.go).
	dbPath := filepath.Join(dir, "raft.db")
	if err := verifyBoltFile(dbPath); err != nil {
		return err
	}
	if err := verifySnapshots(dir); err != nil {
		return err
	}
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: dbPath, NoSync: s.config.raftNoSync, BoltOptions: raftBoltOptions()})
	if err != nil {
		return fmt.Errorf("open raft store: %w", err)
	}
	s.raftStore = bolt
	store, err := newChecksumStore(bolt, dbPath)
	if err != nil {
		return err
	}
	if err := verifyRaftLog(store, dbPath); err != nil {
		return err
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained, s.logger.Named("raft"))
	if err != nil {
		return fmt.Errorf("open snapshot store: %w", err)
	}
	s.raftTransport = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream:  s.rpcServer.RaftLayer(),
		MaxPool: 3,
		// No pipelined replication: hashicorp/raft's pipeline can
		// deadlock a leader's replication goroutine when the follower's
		// connection breaks mid-stream (hashicorp/raft#612), which hung a
		// server's Shutdown in our cluster tests and would leave a
		// follower without new entries. Synchronous AppendEntries cost
		// one round trip per batch of up to MaxAppendEntries entries —
		// nothing on a LAN.
		MaxRPCsInFlight: 1,
		Timeout:         10 * time.Second,
		Logger:          s.logger.Named("raft-net"),
	})

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(s.config.NodeID)
	rc.Logger = s.logger.Named("raft")
	// Faster than Raft's WAN-friendly defaults: failover within ~1 s on
	// a LAN, scaled up for slow networks with RaftTimeScale.
	rc.HeartbeatTimeout = s.config.scaled(500 * time.Millisecond)
	rc.ElectionTimeout = s.config.scaled(500 * time.Millisecond)
	rc.LeaderLeaseTimeout = s.config.scaled(250 * time.Millisecond)
	rc.CommitTimeout = 10 * time.Millisecond
	// NotifyCh (not LeaderCh, which can drop transitions) feeds
	// monitorLeadership.
	rc.NotifyCh = s.leaderCh
	if s.config.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = s.config.SnapshotThreshold
		rc.SnapshotInterval = 200 * time.Millisecond
	}
	if s.config.TrailingLogs > 0 {
		rc.TrailingLogs = s.config.TrailingLogs
	}
	logs, err := raft.NewLogCache(raftLogCacheSize, store)
	if err != nil {
		return fmt.Errorf("raft log cache: %w", err)
	}
	s.raft, err = raft.NewRaft(rc, s.fsm, logs, store, snaps, s.raftTransport)
	if err != nil {
		return fmt.Errorf("start raft: %w", err)
	}
	existing, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		return fmt.Errorf("inspect raft state: %w", err)
	}
	if existing {
		s.setBootstrapped()
	}
	return nil
}

// raftBoltOptions are the log store's bbolt options. NoFreelistSync
// leaves the free page list out of every commit (bbolt rebuilds it by
// scanning the file when it opens, a file Raft keeps small by compacting
// its log): each StoreLogs writes only its own pages, as Consul's and
// Nomad's log stores can be told to. The map freelist finds free runs
// of pages without sorting an array.
func raftBoltOptions() *bbolt.Options {
	return &bbolt.Options{
		NoFreelistSync: true,
		FreelistType:   bbolt.FreelistMapType,
	}
}

func (s *Server) setBootstrapped() {
	s.bootstrapMu.Lock()
	s.bootstrapped = true
	s.bootstrapMu.Unlock()
}

// raftApply proposes an entry and waits for it to be applied, returning
// its index and the FSM's answer as an error when it is one.
func (s *Server) raftApply(entry []byte) (uint64, any, error) {
	if err := s.checkFSMLevel(entry); err != nil {
		return 0, nil, err
	}
	future := s.raft.Apply(entry, raftApplyTimeout)
	if err := waitFuture(future, s.shutdownCh); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) ||
			errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			// The caller may retry: the entry may or may not commit.
			return 0, nil, structs.Errorf(structs.KindNoLeader, "raft apply: %v", err)
		}
		if errors.Is(err, raft.ErrEnqueueTimeout) || errors.Is(err, raft.ErrRaftShutdown) {
			// Not proposed, or its outcome unknown to this server: the
			// kind tells callers across RPC hops that they may retry.
			return 0, nil, structs.Errorf(structs.KindUnavailable, "raft apply: %v", err)
		}
		return 0, nil, fmt.Errorf("raft apply: %w", err)
	}
	resp := future.Response()
	if err, ok := resp.(error); ok {
		return future.Index(), nil, err
	}
	return future.Index(), resp, nil
}

// waitFuture waits for future, or for the server's shutdown. hashicorp/raft
// never answers a future still queued for its leader loop or its FSM when
// it shuts down, and a leader duty or a plan commit waiting on one would
// hold Shutdown forever (revokeLeadership waits for them). A future that
// is answered by then still gives its own result.
func waitFuture(future raft.Future, shutdownCh <-chan struct{}) error {
	done := make(chan error, 1)
	go func() { done <- future.Error() }()
	select {
	case err := <-done:
		return err
	case <-shutdownCh:
		select {
		case err := <-done:
			return err
		default:
			return raft.ErrRaftShutdown
		}
	}
}
