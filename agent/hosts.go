package agent

import (
	"fmt"
	"path/filepath"

	"github.com/stratus-cloud/stratus/agent/client"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// newDriver builds the configured virt driver for one host.
func newDriver(name, hostName string) (virt.Driver, error) {
	switch name {
	case "fake":
		return fake.New(fake.Config{HostName: hostName}), nil
	default:
		return nil, fmt.Errorf("virt driver %q is not available (available: fake)", name)
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
		drv, err := newDriver(cfg.Client.Driver, name)
		if err != nil {
			return err
		}
		dir := filepath.Join(cfg.DataDir, "client")
		if i > 0 {
			dir = filepath.Join(cfg.DataDir, "simulated", name)
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
