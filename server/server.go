package server

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/gossip"
	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/rpc"
)

// Server is one Stratus server.
type Server struct {
	config *Config
	logger hclog.Logger

	rpcServer *rpc.Server
	// rpcAuth is the RPC hook's state (rpc_policy_auth.go).
	rpcAuth *rpcAuth
	// rpcAdvertise is host:port others dial for RPC and Raft.
	rpcAdvertise string
	connPool     *rpc.ConnPool

	fsm           *fsm.FSM
	raft          *raft.Raft
	raftStore     raftStore
	raftTransport *raft.NetworkTransport

	gossip *gossip.Pool

	// bootstrapped is set once Raft has a configuration, so the gossip
	// loop stops trying to bootstrap.
	bootstrapMu  sync.Mutex
	bootstrapped bool

	// leaderCh receives Raft's leadership transitions.
	leaderCh chan bool
	// readyForReads is set once this server, as leader, has applied every
	// entry of earlier terms (its leadership barrier), and cleared when it
	// loses leadership: until then its state may be older than a
	// follower's, and a consistent read must wait.
	readyForReads atomic.Bool

	// evalBroker, planQueue and heartbeats serve leader duties; they are
	// idle on followers.
	evalBroker *evalBroker
	planQueue  chan *pendingPlan
	heartbeats *heartbeats
	// metrics are the server's own figures (metrics.go).
	metrics *serverMetrics
	// downs counts hosts marked down by each path (agent_exit.go).
	downs downCounters
	// sessions remembers which hosts agents named on each RPC session.
	sessions *sessionWatch
	// creates coalesces concurrent instance creates into one Raft entry.
	creates createBatcher
	// allocUpdates coalesces concurrent agents' reports likewise.
	allocUpdates allocUpdateBatcher
	// fsmGate keeps entries some server's FSM does not know out of Raft
	// (version_gate.go).
	fsmGate fsmGate

	// reconcileCh nudges the leader loop when gossip membership changed.
	reconcileCh chan struct{}

	// blobs is the image store; imageSync tracks its writes.
	blobs     *imagestore.Store
	imageSync *imageSync

	shutdownMu sync.Mutex
	shutdown   bool
	shutdownCh chan struct{}
	wg         sync.WaitGroup
	// leaderWG tracks the leader-only goroutines.
	leaderWG sync.WaitGroup
}

// NewServer starts a server: RPC listener, Raft, gossip and leadership
// monitoring. Call Shutdown (or Leave then Shutdown) to stop it.
func NewServer(cfg *Config) (s *Server, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s = &Server{
		config:      cfg,
		logger:      cfg.Logger.Named("server"),
		reconcileCh: make(chan struct{}, 1),
		leaderCh:    make(chan bool, 10),
		shutdownCh:  make(chan struct{}),
		planQueue:   make(chan *pendingPlan, maxPlanBatch*4),
		heartbeats:  newHeartbeats(cfg.HeartbeatTTL),
		imageSync:   newImageSync(),
		metrics:     newServerMetrics(),
	}
	s.evalBroker = newEvalBroker(cfg.EvalNackTimeout, 3, s.failEval)
	// Undo whatever was started if a later step fails. The named result
	// is nil by then, so hold on to the server itself.
	srv := s
	defer func() {
		if err != nil {
			_ = srv.Shutdown()
		}
	}()

	if s.blobs, err = imagestore.Open(filepath.Join(cfg.DataDir, "images")); err != nil {
		return nil, err
	}
	if err := s.setupRPC(); err != nil {
		return nil, err
	}
	if s.fsm, err = fsm.New(s.logger); err != nil {
		return nil, err
	}
	// Evaluations reach the broker from the commits that create them
	// (eval_enqueue.go), never from the call sites that proposed them.
	s.fsm.SetEvalHook(s.enqueueEvals)
	if err := s.setupRaft(); err != nil {
		return nil, err
	}
	// Serve only once the FSM and Raft exist: a restarted server gets
	// agents' RPCs at once, and endpoints dereference both.
	s.wg.Add(1)
	go func() {
		// srv, not the named result s, which a failed start sets to nil.
		defer srv.wg.Done()
		srv.rpcServer.Serve()
	}()
	if err := s.setupGossip(); err != nil {
		return nil, err
	}
	s.wg.Add(3)
	go s.monitorLeadership()
	go s.gossipEventLoop()
	go s.runImageSync()
	s.startWorkers(cfg.NumSchedulers)

	s.logger.Info("server started", "node", cfg.NodeName, "id", cfg.NodeID,
		"rpc", s.RPCAddr(), "gossip", s.gossip.Addr(), "bootstrap_expect", cfg.BootstrapExpect)
	if len(cfg.Join) > 0 {
		// Servers may start in any order: keep trying in the background.
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.gossip.RetryJoin(cfg.Join, joinRetryInterval, s.shutdownCh, s.logger)
		}()
	}
	s.maybeBootstrap()
	return s, nil
}

// setupRPC listens for RPC (Raft shares the listener) and registers the
// endpoints, their authentication and the streams; it serves nothing
// until NewServer starts Serve once the FSM and Raft exist.
func (s *Server) setupRPC() error {
	cfg := s.config
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.BindAddr, strconv.Itoa(cfg.RPCPort)))
	if err != nil {
		return fmt.Errorf("listen for rpc: %w", err)
	}
	s.rpcAdvertise = net.JoinHostPort(cfg.AdvertiseAddr, strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	advertise := &net.TCPAddr{IP: net.ParseIP(cfg.AdvertiseAddr), Port: ln.Addr().(*net.TCPAddr).Port}
	s.rpcServer = rpc.NewServer(rpc.ServerConfig{
		Listener:      ln,
		RaftAdvertise: advertise,
		TLS:           cfg.TLSServer,
		RequireTLS:    cfg.RequireTLS,
		RaftPeerName:  cfg.RaftPeerName,
		Logger:        s.logger,
	})
	s.rpcServer.SetCallObserver(s.metrics.observeRPC)
	if cfg.TLSClient != nil {
		s.rpcServer.SetRaftClientTLS(cfg.TLSClient)
	}
	s.connPool = rpc.NewConnPool(rpc.PoolConfig{TLS: cfg.TLSClient, Logger: s.logger})
	if err := s.registerEndpoints(); err != nil {
		return err
	}
	s.installRPCAuth()
	s.sessions = newSessionWatch(s)
	s.rpcServer.SetSessionObserver(s.sessions)
	return s.registerStreams()
}

// joinRetryInterval is how often a failed gossip join is retried.
const joinRetryInterval = time.Second

// RPCAddr is the advertised host:port of the RPC (and Raft) listener.
func (s *Server) RPCAddr() string { return s.rpcAdvertise }

// Gossip returns the server's gossip pool.
func (s *Server) Gossip() *gossip.Pool { return s.gossip }

// FSM returns the state machine, for local reads and tests.
func (s *Server) FSM() *fsm.FSM { return s.fsm }

// Raft exposes the Raft instance for stats and tests.
func (s *Server) Raft() *raft.Raft { return s.raft }

// IsLeader reports whether this server is the Raft leader.
func (s *Server) IsLeader() bool { return s.raft != nil && s.raft.State() == raft.Leader }

// Config returns the server's configuration.
func (s *Server) Config() *Config { return s.config }

// RPC calls one of this server's endpoints in process, as this server:
// with ACLs on, args without an AuthToken get the server's own
// credential (rpc_policy_auth.go). Forwarding to the leader happens
// inside the endpoint as for any caller. Calls made on someone else's
// behalf use UserRPC.
func (s *Server) RPC(method string, args, reply any) error {
	if s.aclEnabled() && authTokenOf(args) == "" {
		// Right after the first election the signing key may not exist
		// yet: wait for it rather than be refused (identity_leader.go).
		tok, err := s.awaitServerCredential(method, args)
		if err != nil {
			return err
		}
		if tok != "" {
			setAuthToken(args, tok)
		}
	}
	return s.rpcServer.Call(method, args, reply)
}

// UserRPC calls one of this server's endpoints in process with only the
// credential args carry (a user's token, a node secret), checked exactly
// as a call over the network: what the agent embedded in a server uses
// for the calls it makes on others' behalf.
func (s *Server) UserRPC(method string, args, reply any) error {
	return s.rpcServer.Call(method, args, reply)
}

// Leave leaves gossip gracefully (so peers remove this server from Raft)
// and, if leader, hands leadership to another server first.
func (s *Server) Leave(timeout time.Duration) error {
	if s.IsLeader() {
		if cfg := s.raft.GetConfiguration(); cfg.Error() == nil && len(cfg.Configuration().Servers) > 1 {
			if err := s.raft.LeadershipTransfer().Error(); err != nil {
				s.logger.Warn("leadership transfer before leave failed", "error", err)
			}
		}
	}
	if s.gossip != nil {
		return s.gossip.Leave(timeout)
	}
	return nil
}

// Shutdown stops everything the server started. It is idempotent.
func (s *Server) Shutdown() error {
	s.shutdownMu.Lock()
	if s.shutdown {
		s.shutdownMu.Unlock()
		return nil
	}
	s.shutdown = true
	close(s.shutdownCh)
	s.shutdownMu.Unlock()

	if s.gossip != nil {
		_ = s.gossip.Shutdown()
	}
	if s.raft != nil {
		if err := s.raft.Shutdown().Error(); err != nil {
			s.logger.Warn("raft shutdown", "error", err)
		}
	}
	if s.raftTransport != nil {
		_ = s.raftTransport.Close()
	}
	if s.rpcServer != nil {
		_ = s.rpcServer.Shutdown()
	}
	if s.connPool != nil {
		_ = s.connPool.Shutdown()
	}
	s.wg.Wait()
	if s.raftStore != nil {
		_ = s.raftStore.Close()
	}
	return nil
}

func (s *Server) isShuttingDown() bool {
	select {
	case <-s.shutdownCh:
		return true
	default:
		return false
	}
}

// startWorkers starts n scheduler workers.
func (s *Server) startWorkers(n int) {
	for i := 0; i < n; i++ {
		s.wg.Add(1)
		go (&worker{srv: s, id: i}).run()
	}
}
