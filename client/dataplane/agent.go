package dataplane

import (
	"context"
	"errors"
	"github.com/stratus-cloud/stratus/internal/retry"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// RPC is how the agent reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// Defaults of AgentConfig's intervals.
const (
	DefaultResyncInterval = 15 * time.Second
	DefaultLeaseInterval  = 2 * time.Second
)

// AgentConfig configures an Agent.
type AgentConfig struct {
	// HostID is the host whose bound ports are wired. Required.
	HostID string
	// NodeSecret is the host's agent's node secret, presented with the
	// lease reports (server/node_auth.go).
	NodeSecret string
	// RPC reaches the servers. Required.
	RPC RPC
	// Plane does the wiring. Required.
	Plane *Plane
	// ResyncInterval is how often the whole state is read and applied
	// again even without a port change (security group rules, floating
	// IPs; default 15s). LeaseInterval is how often dnsmasq's lease files
	// are read for changes to report (default 2s).
	ResyncInterval, LeaseInterval time.Duration
	// Logger receives the agent's logs (default: discard).
	Logger hclog.Logger
}

// Agent keeps a host's dataplane in step with the servers' state and
// reports the DHCP leases back.
type Agent struct {
	cfg    AgentConfig
	logger hclog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// kick asks the apply loop for an immediate pass.
	kick chan struct{}

	// reported are the leases last reported, by port.
	reported map[string]structs.PortLease

	// watchMu guards netWatches, the cancels of the blocking queries on
	// the ports of the host's networks (agent_watch.go).
	watchMu    sync.Mutex
	netWatches map[string]context.CancelFunc
}

// NewAgent checks cfg and returns an agent; Start starts it.
func NewAgent(cfg AgentConfig) (*Agent, error) {
	if cfg.HostID == "" || cfg.RPC == nil || cfg.Plane == nil {
		return nil, errors.New("dataplane agent: host id, RPC and plane are required")
	}
	if cfg.ResyncInterval <= 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	if cfg.LeaseInterval <= 0 {
		cfg.LeaseInterval = DefaultLeaseInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{cfg: cfg, logger: cfg.Logger.Named("dataplane"), ctx: ctx, cancel: cancel,
		kick: make(chan struct{}, 1)}, nil
}

// Start runs the watch, apply and lease loops until Stop.
func (a *Agent) Start() {
	a.wg.Add(3)
	go func() { defer a.wg.Done(); a.watchLoop() }()
	go func() { defer a.wg.Done(); a.applyLoop() }()
	go func() { defer a.wg.Done(); a.leaseLoop() }()
}

// Stop ends the loops; the wiring stays (guests keep their network
// while the agent restarts). Teardown removes it.
func (a *Agent) Stop() {
	a.cancel()
	a.wg.Wait()
}

// Resync asks for an immediate pass (after a port attach, say).
func (a *Agent) Resync() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

// watchLoop blocks on the host's ports and kicks the apply loop on
// every change.
func (a *Agent) watchLoop() {
	var index uint64
	b := &retry.Backoff{Min: time.Second, Max: 30 * time.Second, Jitter: 0.1}
	for a.ctx.Err() == nil {
		var out structs.NetListResponse
		req := &structs.NetListRequest{Kind: structs.NetKindPort, HostID: a.cfg.HostID,
			Caller: structs.NetCaller{Admin: true}}
		req.MinQueryIndex, req.MaxQueryTime = index, 5*time.Minute
		if err := a.call("Net.List", req, &out); err != nil {
			if a.ctx.Err() != nil {
				return
			}
			wait := b.Next()
			a.logger.Warn("cannot watch the host's ports", "error", err, "retry_in", wait)
			if !a.sleep(wait) {
				return
			}
			continue
		}
		b.Reset()
		if out.Index != index {
			index = out.Index
			a.Resync()
		}
	}
}

// applyLoop builds the desired state and applies it on every kick and
// every ResyncInterval.
func (a *Agent) applyLoop() {
	t := time.NewTicker(a.cfg.ResyncInterval)
	defer t.Stop()
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-a.kick:
		case <-t.C:
		}
		d, err := BuildDesired(a.cfg.RPC, a.cfg.HostID)
		if err != nil {
			a.logger.Warn("cannot read the host's networking", "error", err)
			continue
		}
		a.watchNetworks(d)
		if err := a.cfg.Plane.Apply(a.ctx, d); err != nil && a.ctx.Err() == nil {
			a.logger.Error("dataplane apply failed; retrying at the next pass", "error", err)
		}
	}
}

// leaseLoop reports lease changes; the first report, and one every
// ResyncInterval, is a full one.
func (a *Agent) leaseLoop() {
	t := time.NewTicker(a.cfg.LeaseInterval)
	defer t.Stop()
	lastFull := time.Time{}
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-t.C:
		}
		full := a.reported == nil || time.Since(lastFull) >= a.cfg.ResyncInterval
		if err := a.reportLeases(full); err != nil {
			if a.ctx.Err() == nil {
				a.logger.Warn("cannot report DHCP leases", "error", err)
			}
			continue
		}
		if full {
			lastFull = time.Now()
		}
	}
}

// reportLeases reads the lease files and reports what changed (all of
// them when full). A port keeps one lease: its first address's.
func (a *Agent) reportLeases(full bool) error {
	leases, err := a.cfg.Plane.Leases()
	if err != nil {
		return err
	}
	now := map[string]structs.PortLease{}
	for _, l := range leases {
		if _, dup := now[l.PortID]; dup {
			continue
		}
		now[l.PortID] = structs.PortLease{PortID: l.PortID, NetworkID: l.NetworkID, HostID: a.cfg.HostID,
			MACAddress: l.MAC, IPAddress: l.IP, Hostname: l.Hostname, ExpiresAt: l.Expires}
	}
	req := &structs.NetLeaseReportRequest{HostID: a.cfg.HostID, Full: full,
		WriteRequest: structs.WriteRequest{AuthToken: a.cfg.NodeSecret}}
	for id, l := range now {
		if old, ok := a.reported[id]; full || !ok || old != l {
			c := l
			req.Leases = append(req.Leases, &c)
		}
	}
	for id := range a.reported {
		if _, ok := now[id]; !ok {
			req.Released = append(req.Released, id)
		}
	}
	if !full && len(req.Leases) == 0 && len(req.Released) == 0 {
		return nil
	}
	if err := a.call("NetLease.Report", req, &structs.WriteMeta{}); err != nil {
		return err
	}
	a.reported = now
	return nil
}

// call makes an RPC that Stop cuts short.
func (a *Agent) call(method string, args, reply any) error {
	done := make(chan error, 1)
	go func() { done <- a.cfg.RPC.RPC(method, args, reply) }()
	select {
	case err := <-done:
		return err
	case <-a.ctx.Done():
		return a.ctx.Err()
	}
}

// sleep waits d or until Stop; it reports whether the agent still runs.
func (a *Agent) sleep(d time.Duration) bool { return retry.SleepContext(a.ctx, d) }
