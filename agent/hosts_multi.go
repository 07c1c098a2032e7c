package agent

import (
	"context"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/virt"
)

// multiHostInterval is how often a multi-host driver's hosts are listed
// again to start the agents of new ones.
const multiHostInterval = 30 * time.Second

// multiHost runs one hypervisor agent per host of a virt.MultiHost
// driver (Ironic: per node), each with the driver scoped to its host and
// a data dir of its own (<client dir>/hosts/<key>), so each registers,
// heartbeats and watches the allocations of its own host. New hosts are
// picked up by listing again every multiHostInterval; a host that
// disappears keeps its agent (its fingerprint fails until it is back).
type multiHost struct {
	a      *Agent
	drv    virt.MultiHost
	dir    string
	logger hclog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	clients map[string]*client.Client
}

// startMultiHost starts the agents of a multi-host driver in the
// background; closing the result stops them (and closes the driver).
func (a *Agent) startMultiHost(drv virt.MultiHost, dir string) io.Closer {
	ctx, cancel := context.WithCancel(context.Background())
	m := &multiHost{a: a, drv: drv, dir: dir, logger: a.logger.Named("client"),
		ctx: ctx, cancel: cancel, clients: make(map[string]*client.Client)}
	m.wg.Add(1)
	go m.run()
	return m
}

// run lists the hosts now and every multiHostInterval until closed.
func (m *multiHost) run() {
	defer m.wg.Done()
	t := time.NewTicker(multiHostInterval)
	defer t.Stop()
	wait := time.Second
	for {
		if err := m.sync(); err != nil {
			m.logger.Warn("listing the driver's hosts failed; retrying", "error", err, "retry_in", wait)
			select {
			case <-m.ctx.Done():
				return
			case <-time.After(wait):
			}
			wait = min(2*wait, multiHostInterval)
			continue
		}
		wait = time.Second
		select {
		case <-m.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sync starts an agent for every listed host that has none.
func (m *multiHost) sync() error {
	ctx, cancel := context.WithTimeout(m.ctx, time.Minute)
	defer cancel()
	keys, err := m.drv.Hosts(ctx)
	if err != nil {
		return err
	}
	cfg := m.a.config
	for _, key := range keys {
		m.mu.Lock()
		_, known := m.clients[key]
		m.mu.Unlock()
		if known || m.ctx.Err() != nil {
			continue
		}
		drv, err := m.drv.Host(key)
		if err != nil {
			return err
		}
		logger := m.logger.With("host_key", key)
		// The agent's one node secret serves all its hosts.
		secret, err := client.LoadOrCreateNodeSecret(cfg.DataDir)
		if err != nil {
			return err
		}
		c, err := client.New(client.Config{
			DataDir: filepath.Join(m.dir, "hosts", key), NodeName: cfg.NodeName, Region: cfg.Region, AZ: cfg.AZ,
			NodeSecret: secret, IntroToken: m.a.introToken, Driver: drv, RPC: m.a.nodeRPC(), Logger: logger,
			CPUAllocationRatio: cfg.Client.CPUAllocationRatio, RAMAllocationRatio: cfg.Client.RAMAllocationRatio,
			DiskAllocationRatio: cfg.Client.DiskAllocationRatio, ReservedMemoryMB: cfg.Client.ReservedHostMemoryMB,
			ReservedVCPUs: cfg.Client.ReservedHostCPUs, ReservedDiskGB: cfg.Client.ReservedHostDiskGB,
		})
		if err != nil {
			return err
		}
		m.mu.Lock()
		if m.ctx.Err() != nil {
			m.mu.Unlock()
			_ = c.Shutdown()
			return nil
		}
		m.clients[key] = c
		m.wg.Add(1)
		m.mu.Unlock()
		logger.Info("starting the agent of a host of the driver", "driver", drv.Name())
		go func() {
			defer m.wg.Done()
			if err := c.Start(); err != nil && m.ctx.Err() == nil {
				logger.Error("hypervisor agent stopped", "error", err)
			}
		}()
	}
	return nil
}

// Close stops every agent, waits for them and closes the driver.
func (m *multiHost) Close() error {
	m.mu.Lock()
	m.cancel()
	clients := make([]*client.Client, 0, len(m.clients))
	for _, c := range m.clients {
		clients = append(clients, c)
	}
	m.mu.Unlock()
	for _, c := range clients {
		_ = c.Shutdown()
	}
	m.wg.Wait()
	if closer, ok := m.drv.(io.Closer); ok {
		return closer.Close()
	}
	return nil
}
