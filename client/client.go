package client

import (
	"context"
	"errors"
	"github.com/stratus-cloud/stratus/internal/retry"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// errShutdown is returned by calls cut short because the client is
// shutting down.
var errShutdown = structs.Errorf(structs.KindUnavailable, "client is shutting down")

// Client is the hypervisor agent of one host.
type Client struct {
	cfg    Config
	logger hclog.Logger
	driver virt.Driver
	state  *stateDB
	hostID string

	// ctx ends at Shutdown; driver calls and loops watch it.
	ctx    context.Context
	cancel context.CancelFunc

	reporter *reporter

	// Timings the tests shorten.
	backoffMin, backoffMax time.Duration
	maxQueryTime           time.Duration
	defaultHeartbeatTTL    time.Duration

	// regMu guards the registration record.
	regMu      sync.Mutex
	registered *structs.Host
	ttl        time.Duration

	runnersMu sync.Mutex
	runners   map[string]*runner

	mu           sync.Mutex
	started      bool
	shutdown     bool
	wg           sync.WaitGroup
	shutdownOnce sync.Once
	shutdownErr  error
}

// New checks cfg, opens DataDir/state.db and loads (or creates) the host
// id. It starts nothing: call Start.
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	st, err := openState(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	id, err := st.hostID()
	if err != nil {
		_ = st.close()
		return nil, err
	}
	if cfg.NodeSecret == "" {
		if cfg.NodeSecret, err = LoadOrCreateNodeSecret(cfg.DataDir); err != nil {
			_ = st.close()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		cfg:                 cfg,
		logger:              cfg.Logger.Named("client").With("host_id", id),
		driver:              cfg.Driver,
		state:               st,
		hostID:              id,
		ctx:                 ctx,
		cancel:              cancel,
		backoffMin:          time.Second,
		backoffMax:          30 * time.Second,
		maxQueryTime:        5 * time.Minute,
		defaultHeartbeatTTL: 20 * time.Second,
		runners:             make(map[string]*runner),
	}
	c.reporter = newReporter(c)
	return c, nil
}

// HostID returns the host's id, persisted in state.db.
func (c *Client) HostID() string { return c.hostID }

// NodeSecret returns the secret the client authenticates with, for the
// other parts of the agent that report about its host (the dataplane).
func (c *Client) NodeSecret() string { return c.cfg.NodeSecret }

// Start registers the host, retrying with backoff until it works, then
// starts the heartbeat, allocation watcher, reporter, power-sync and
// volume-size loops, and the event loop of a driver that is a virt.EventSource. It
// blocks until the host is registered; it returns an error if
// Shutdown is called first, the client was already started, or the host
// record is invalid (KindInvalid). Run it in a goroutine when the
// servers may not be reachable yet.
func (c *Client) Start() error {
	c.mu.Lock()
	switch {
	case c.shutdown:
		c.mu.Unlock()
		return errShutdown
	case c.started:
		c.mu.Unlock()
		return structs.Errorf(structs.KindConflict, "client already started")
	}
	c.started = true
	c.mu.Unlock()

	b := c.newBackoff()
	for {
		err := c.register()
		if err == nil {
			break
		}
		if c.ctx.Err() != nil {
			return errShutdown
		}
		if structs.KindOf(err) == structs.KindInvalid {
			// A bad host record (no name, a negative inventory) does
			// not fix itself: fail instead of retrying forever.
			return err
		}
		wait := b.Next()
		c.logger.Warn("registration failed; retrying", "error", err, "retry_in", wait)
		if !c.sleep(wait) {
			return errShutdown
		}
	}
	loops := []func(){c.reporter.run, c.heartbeatLoop, c.watchAllocs, c.powerSyncLoop, c.interfaceLoop, c.watchVolumeSizes}
	if es, ok := c.driver.(virt.EventSource); ok {
		events := es.Events()
		loops = append(loops, func() { c.eventLoop(events) })
	}
	for _, loop := range loops {
		if !c.goTracked(loop) {
			return errShutdown
		}
	}
	c.logger.Info("client started", "node", c.cfg.NodeName)
	return nil
}

// Shutdown stops every loop and runner and closes state.db. Instances
// are left running. It is idempotent and safe to call concurrently with
// Start.
func (c *Client) Shutdown() error {
	c.shutdownOnce.Do(func() {
		c.mu.Lock()
		c.shutdown = true
		c.cancel()
		c.mu.Unlock()
		c.wg.Wait()
		c.shutdownErr = c.state.close()
		c.logger.Info("client shut down")
	})
	return c.shutdownErr
}

// goTracked runs f in a goroutine Shutdown waits for; it returns false
// (running nothing) once shutdown has begun.
func (c *Client) goTracked(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shutdown {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// call makes an RPC but returns errShutdown as soon as the client shuts
// down, so a blocking query never holds up Shutdown. The reply must not
// be read after errShutdown: the call may still complete in the
// background (the goroutine ends when the transport returns).
func (c *Client) call(method string, args, reply any) error {
	if c.ctx.Err() != nil {
		return errShutdown
	}
	done := make(chan error, 1)
	go func() { done <- c.cfg.RPC.RPC(method, args, reply) }()
	select {
	case err := <-done:
		return err
	case <-c.ctx.Done():
		return errShutdown
	}
}

// sleep waits d or until shutdown; it reports whether the client is
// still running.
func (c *Client) sleep(d time.Duration) bool { return retry.SleepContext(c.ctx, d) }

// newBackoff is the backoff of the client's retry loops: backoffMin,
// doubling up to backoffMax, ±10 %.
func (c *Client) newBackoff() *retry.Backoff {
	return &retry.Backoff{Min: c.backoffMin, Max: c.backoffMax, Jitter: 0.1}
}

// runner returns the runner of an allocation, or nil.
func (c *Client) runner(allocID string) *runner {
	c.runnersMu.Lock()
	defer c.runnersMu.Unlock()
	return c.runners[allocID]
}

// runnerList returns the current runners.
func (c *Client) runnerList() []*runner {
	c.runnersMu.Lock()
	defer c.runnersMu.Unlock()
	out := make([]*runner, 0, len(c.runners))
	for _, r := range c.runners {
		out = append(out, r)
	}
	return out
}

// handOver gives an allocation (and its instance) to its runner, creating
// the runner if it is new.
func (c *Client) handOver(alloc *structs.Allocation, inst *structs.Instance) {
	c.runnersMu.Lock()
	defer c.runnersMu.Unlock()
	r := c.runners[alloc.ID]
	if r == nil {
		r = newRunner(c, alloc.ID, alloc.InstanceID)
		if !c.goTracked(r.run) {
			return
		}
		c.runners[alloc.ID] = r
	}
	r.update(alloc, inst)
}

// dropAlloc tells the runner of an allocation that no longer exists to
// destroy its instance and stop.
func (c *Client) dropAlloc(allocID string) {
	c.runnersMu.Lock()
	r := c.runners[allocID]
	delete(c.runners, allocID)
	c.runnersMu.Unlock()
	if r != nil {
		r.vanish()
	}
}

// instanceInUse reports whether a live (non-terminal) runner other than
// except manages instance id, so one allocation never destroys the
// instance of another.
func (c *Client) instanceInUse(id string, except *runner) bool {
	c.runnersMu.Lock()
	defer c.runnersMu.Unlock()
	for _, r := range c.runners {
		if r != except && r.manages(id) {
			return true
		}
	}
	return false
}

// isNotFound reports whether a driver error means the instance is gone.
func isNotFound(err error) bool { return errors.Is(err, virt.ErrNotFound) }
