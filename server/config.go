package server

import (
	"crypto/tls"
	"fmt"
	"runtime"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/server/scheduler"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/tlsutil"
)

// Config configures a Server.
type Config struct {
	NodeName string
	// NodeID is the server's stable id; it is its Raft server id.
	NodeID string
	Region string
	AZ     string

	// DataDir holds raft/ (log, stable store, snapshots) and images/
	// (the image store).
	DataDir string

	// BindAddr is the IP the RPC and gossip listeners bind.
	BindAddr string
	// AdvertiseAddr is the IP others reach this server at (default
	// BindAddr; required when BindAddr is 0.0.0.0).
	AdvertiseAddr string
	// RPCPort and GossipPort: 0 picks a free port.
	RPCPort    int
	GossipPort int
	// HTTPAddr is advertised in gossip so members can find the API.
	HTTPAddr string

	// BootstrapExpect is how many servers to wait for before
	// bootstrapping Raft; 1 bootstraps alone (dev mode).
	BootstrapExpect int
	// Join lists gossip addresses to join at start.
	Join []string
	// GossipKey encrypts gossip when set (16, 24 or 32 bytes).
	GossipKey []byte
	// GossipFast tightens gossip timers (dev mode and tests on loopback).
	GossipFast bool
	// gossipEventBuffer, when positive, replaces the gossip pool's event
	// buffer size (tests that make it overflow).
	gossipEventBuffer int
	// gossipProbeInterval, when positive, replaces the gossip probe
	// interval (tests that keep gossip from noticing a failure).
	gossipProbeInterval time.Duration
	// RaftTimeScale multiplies Raft's timeouts; 1 is tuned for a LAN.
	RaftTimeScale float64
	// SnapshotThreshold and TrailingLogs tune Raft snapshots; zero keeps
	// Raft's defaults. Tests lower them to exercise snapshot installs.
	SnapshotThreshold uint64
	TrailingLogs      uint64
	// raftNoSync skips bbolt's fsync of the Raft log. Benchmarks set it
	// to measure what the fsync costs; nothing else may.
	raftNoSync bool

	// NumSchedulers is how many scheduler workers run on this server
	// (0: the number of CPUs; negative: none, for tests).
	NumSchedulers int
	// Scheduler tunes filters and weighers.
	Scheduler scheduler.Config
	// HeartbeatTTL is how long a host may go without a heartbeat before
	// the leader marks it down, when gossip has not already (default 10s).
	HeartbeatTTL time.Duration
	// MaxHeartbeatsPerSecond caps the heartbeats all agents together send
	// the servers: with more hosts than that rate covers at HeartbeatTTL,
	// the TTL the servers give agents (and time them by) grows with the
	// hosts, as Nomad's max_heartbeats_per_second (default 50).
	MaxHeartbeatsPerSecond float64
	// MaxBuildAttempts is how many hosts a build is tried on before the
	// instance goes to ERROR (Nova's max_attempts, default 3).
	MaxBuildAttempts int
	// ResizeConfirmWindow confirms a finished resize or migration
	// automatically after this long (Nova's resize_confirm_window; 0
	// never does).
	ResizeConfirmWindow time.Duration
	// ShelvedOffloadTime is how long a shelved instance keeps its host
	// (Nova's shelved_offload_time: 0 offloads at once, negative never).
	ShelvedOffloadTime time.Duration
	// AllowResizeToSameHost lets the scheduler keep a resized instance
	// on its host, where the agent resizes it in place (Nova's
	// allow_resize_to_same_host, default false). Cold migrations always
	// leave the host.
	AllowResizeToSameHost bool
	// ReclaimInstanceInterval, when positive, makes deletes soft: the
	// instance is kept (SOFT_DELETED, restorable) this long (Nova's
	// reclaim_instance_interval).
	ReclaimInstanceInterval time.Duration
	// VolumeBuildTimeout bounds how long a server being built waits for
	// the volumes its create made (10 minutes when zero): then its
	// build fails, as Nova's does after block_device_allocate_retries.
	VolumeBuildTimeout time.Duration
	// EvalNackTimeout is how long a worker may hold an evaluation.
	EvalNackTimeout time.Duration
	// DeletedRetention is how long a deleted instance's records (its
	// actions, usage record and migrations) are kept before the leader
	// purges them (0: structs.DefaultDeletedRetention; negative:
	// forever, as Nova keeps them).
	DeletedRetention time.Duration
	// EvalGCThreshold is how long a finished evaluation is kept before
	// the leader reaps it (0: structs.EvalGCThreshold, Nomad's
	// eval_gc_threshold of an hour).
	EvalGCThreshold time.Duration
	// IdempotencyKeyTTL is how long a create's idempotency key is
	// remembered (0: structs.CreateRequestTTL, an hour).
	IdempotencyKeyTTL time.Duration

	// ImageSizeCap is the largest image data accepted (default
	// structs.ImageSizeCap, 1 TiB; Glance's image_size_cap).
	ImageSizeCap int64
	// ImageReplicas is how many servers should hold each image's data
	// (default 2; fewer when fewer servers are alive).
	ImageReplicas int
	// ImageSyncInterval is how often a server checks its image store
	// against the state besides on every change (default 5s).
	ImageSyncInterval time.Duration
	// ImageGCGrace is how old image data no image names must be before
	// it is removed (default 15m).
	ImageGCGrace time.Duration
	// ImageUploaderTimeout is how long the leader waits for a server
	// that gossip no longer sees alive before returning the image it was
	// receiving to queued (default 30s).
	ImageUploaderTimeout time.Duration

	// NetSegments is how tenant networks are segmented: the VNI range
	// and the physical MTU network creates carry into the FSM (zero:
	// structs.DefaultNetSegments).
	NetSegments structs.NetSegments

	// TLS for RPC: server side and client side, nil for plaintext.
	TLSServer  *tls.Config
	TLSClient  *tls.Config
	RequireTLS bool
	// RaftPeerName, when set, is the DNS name (server.<region>.<domain>)
	// the certificate of an incoming Raft connection must carry, so only
	// servers join Raft (verify_server_hostname).
	RaftPeerName string
	// ACLEnabled makes the server enforce the rule of every RPC method
	// (rpc_policy.go): tokens, node secrets, its own credential. Off
	// (dev mode, acl { enabled = false }), every caller is trusted.
	ACLEnabled bool
	// GossipKeyringFile persists the gossip keyring across restarts.
	GossipKeyringFile string
	// CA is the configured certificate authority (tls ca_file and
	// ca_key_file) that signs os-certificates; nil makes the leader create
	// a cluster CA in the replicated state.
	CA *tlsutil.CA

	Version string
	// FSMLevel is the state machine level this server advertises in
	// gossip; zero is this build's (structs.CurrentFSMLevel). Tests set
	// a lower one to stand for a server of an older build.
	FSMLevel structs.FSMLevel
	Logger   hclog.Logger
}

// Validate fills defaults and checks the config.
func (c *Config) Validate() error {
	if c.NodeName == "" {
		return fmt.Errorf("server config: node name is required")
	}
	if c.NodeID == "" {
		return fmt.Errorf("server config: node id is required")
	}
	if c.DataDir == "" {
		return fmt.Errorf("server config: data dir is required")
	}
	if c.Region == "" {
		c.Region = "global"
	}
	if c.AZ == "" {
		c.AZ = "nova"
	}
	if c.BindAddr == "" {
		c.BindAddr = "127.0.0.1"
	}
	if c.AdvertiseAddr == "" {
		if c.BindAddr == "0.0.0.0" || c.BindAddr == "::" {
			return fmt.Errorf("server config: an advertise address is required when binding %s", c.BindAddr)
		}
		c.AdvertiseAddr = c.BindAddr
	}
	if c.BootstrapExpect < 0 {
		return fmt.Errorf("server config: bootstrap_expect must not be negative")
	}
	if c.RaftTimeScale <= 0 {
		c.RaftTimeScale = 1
	}
	if c.NumSchedulers == 0 {
		c.NumSchedulers = runtime.NumCPU()
	}
	if c.Scheduler == (scheduler.Config{}) {
		c.Scheduler = scheduler.DefaultConfig()
	}
	if c.HeartbeatTTL <= 0 {
		c.HeartbeatTTL = 10 * time.Second
	}
	if c.MaxHeartbeatsPerSecond <= 0 {
		c.MaxHeartbeatsPerSecond = 50
	}
	if c.MaxBuildAttempts <= 0 {
		c.MaxBuildAttempts = 3
	}
	if c.EvalNackTimeout <= 0 {
		c.EvalNackTimeout = time.Minute
	}
	if c.DeletedRetention == 0 {
		c.DeletedRetention = structs.DefaultDeletedRetention
	}
	if c.EvalGCThreshold <= 0 {
		c.EvalGCThreshold = structs.EvalGCThreshold
	}
	if c.IdempotencyKeyTTL <= 0 {
		c.IdempotencyKeyTTL = structs.CreateRequestTTL
	}
	if c.ImageSizeCap <= 0 {
		c.ImageSizeCap = structs.ImageSizeCap
	}
	if c.ImageReplicas <= 0 {
		c.ImageReplicas = 2
	}
	if c.ImageSyncInterval <= 0 {
		c.ImageSyncInterval = 5 * time.Second
	}
	if c.ImageGCGrace <= 0 {
		c.ImageGCGrace = 15 * time.Minute
	}
	if c.ImageUploaderTimeout <= 0 {
		c.ImageUploaderTimeout = 30 * time.Second
	}
	if c.NetSegments == (structs.NetSegments{}) {
		c.NetSegments = structs.DefaultNetSegments
	}
	if err := c.NetSegments.Validate(); err != nil {
		return fmt.Errorf("server config: %w", err)
	}
	if c.Logger == nil {
		c.Logger = hclog.NewNullLogger()
	}
	return nil
}

// scaled multiplies a Raft timeout by the configured scale.
func (c *Config) scaled(d time.Duration) time.Duration {
	return time.Duration(float64(d) * c.RaftTimeScale)
}
