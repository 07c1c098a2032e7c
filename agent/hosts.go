package agent

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/stratus-cloud/stratus/agent/client"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// newDriver builds the configured virt driver for one host whose local
// state lives in dir.
func newDriver(cfg *ClientConfig, hostName, dir string) (virt.Driver, error) {
	switch cfg.Driver {
	case "fake":
		// Finalize checked the duration.
		latency, _ := time.ParseDuration(cfg.FakeSpawnLatency)
		// The fake hypervisor keeps its guests in a file so that, like
		// a real one, it outlives a restart of the agent.
		return fake.Open(fake.Config{HostName: hostName, SpawnLatency: latency,
			StatePath: filepath.Join(dir, "fake-hypervisor.json")})
	default:
		return nil, fmt.Errorf("virt driver %q is not available (available: fake)", cfg.Driver)
	}
}

// startHosts starts the hypervisor agent for this machine and any
// simulated hosts. Registration retries in the background, so an agent
// may start before the servers are reachable.
func (a *Agent) startHosts() error {
	cfg := a.config
	names := []string{cfg.NodeName}
	for i := 1; i <= cfg.Client.SimulatedHosts; i++ {
		names = append(names, fmt.Sprintf("%s-sim-%03d", cfg.NodeName, i))
	}
	for i, name := range names {
		dir := filepath.Join(cfg.DataDir, "client")
		if i > 0 {
			dir = filepath.Join(cfg.DataDir, "simulated", name)
		}
		drv, err := newDriver(cfg.Client, name, dir)
		if err != nil {
			return err
		}
		c, err := client.New(client.Config{
			DataDir: dir, NodeName: cfg.NodeName, HostName: name, Region: cfg.Region, AZ: cfg.AZ,
			Driver: drv, RPC: a.rpc, Logger: a.logger.Named("client").With("host", name),
			CPUAllocationRatio: cfg.Client.CPUAllocationRatio, RAMAllocationRatio: cfg.Client.RAMAllocationRatio,
			DiskAllocationRatio: cfg.Client.DiskAllocationRatio, ReservedMemoryMB: cfg.Client.ReservedHostMemoryMB,
			ReservedVCPUs: cfg.Client.ReservedHostCPUs, ReservedDiskGB: cfg.Client.ReservedHostDiskGB,
		})
		if err != nil {
			return fmt.Errorf("start host %s: %w", name, err)
		}
		a.clients = append(a.clients, c)
		a.bgWG.Add(1)
		go func() {
			defer a.bgWG.Done()
			if err := c.Start(); err != nil {
				a.logger.Error("hypervisor agent stopped", "host", name, "error", err)
			}
		}()
	}
	return nil
}
