package agent

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/drivers"
)

// newDriver builds the configured virt driver for one host whose local
// state lives in dir. Simulated hosts always get the fake driver.
func newDriver(cfg *ClientConfig, hostName, dir string, simulated bool, logger hclog.Logger) (virt.Driver, error) {
	opts := drivers.Options{Driver: cfg.Driver, Logger: logger}
	if simulated {
		opts.Driver = "fake"
	}
	switch opts.Driver {
	case "libvirt":
		opts.Libvirt = libvirtOptions(cfg.Libvirt)
	case "vmware", "ironic":
		// A remote manager (agent/drivers_remote.go).
		return newRemoteDriver(cfg, logger)
	case "fake":
		// Finalize checked the duration.
		latency, _ := time.ParseDuration(cfg.FakeSpawnLatency)
		// The fake hypervisor keeps its guests in a file so that, like
		// a real one, it outlives a restart of the agent.
		opts.Fake = drivers.Fake{HostName: hostName, SpawnLatency: latency,
			StatePath: filepath.Join(dir, "fake-hypervisor.json")}
	}
	// New does not wait for the backend: libvirt dials in the
	// background and registration retries until HostInfo answers.
	return drivers.New(opts)
}

// libvirtOptions are the driver options of a libvirt block (nil: all
// defaults).
func libvirtOptions(lc *LibvirtConfig) drivers.Libvirt {
	if lc == nil {
		return drivers.Libvirt{}
	}
	// Finalize checked the duration.
	reboot, _ := time.ParseDuration(lc.SoftRebootTimeout)
	return drivers.Libvirt{URI: lc.URI, VNCListen: lc.VNCListen, ImagesDir: lc.ImagesDir,
		VirtType: lc.VirtType, MigrationURI: lc.MigrationURI, SharedStorage: lc.SharedStorage, Namespace: lc.Namespace,
		SoftRebootTimeout: reboot}
}

// startHosts starts the hypervisor agent for this machine and any
// simulated hosts. Registration retries in the background, so an agent
// may start before the servers are reachable.
func (a *Agent) startHosts() error {
	cfg := a.config
	// One node secret authenticates every host of this agent.
	secret, err := client.LoadOrCreateNodeSecret(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("start hosts: %w", err)
	}
	pool, poolGB, err := a.openStoragePool()
	if err != nil {
		return fmt.Errorf("start hosts: %w", err)
	}
	names := []string{cfg.NodeName}
	for i := 1; i <= cfg.Client.SimulatedHosts; i++ {
		names = append(names, fmt.Sprintf("%s-sim-%03d", cfg.NodeName, i))
	}
	for i, name := range names {
		dir := filepath.Join(cfg.DataDir, "client")
		if i > 0 {
			dir = filepath.Join(cfg.DataDir, "simulated", name)
		}
		drv, err := newDriver(cfg.Client, name, dir, i > 0, a.logger.Named("client").With("host", name))
		if err != nil {
			return err
		}
		// A driver of many hosts (Ironic's nodes) gets one agent per
		// host (agent/hosts_multi.go).
		if mh, ok := drv.(virt.MultiHost); ok && i == 0 {
			a.drivers = append(a.drivers, a.startMultiHost(mh, dir))
			continue
		}
		if closer, ok := drv.(io.Closer); ok {
			a.drivers = append(a.drivers, closer)
		}
		// Drivers that build disks from image data get the image cache.
		// So does a storage host, for volumes made from images.
		var files client.ImageFiles
		var c *client.Client
		storageHere := i == 0 && pool != nil
		if drv.Name() != "fake" || storageHere {
			if files, err = a.newImageCache(dir, func() map[string]bool { return c.ImagesInUse() }); err != nil {
				return fmt.Errorf("start host %s: %w", name, err)
			}
		}
		var hostPoolGB int64
		var backend, backendName string
		if storageHere {
			hostPoolGB = poolGB
			backend, backendName = cfg.Client.Storage.Backend, cfg.Client.Storage.BackendName
		}
		ceph, err := a.cephAttach(drv)
		if err != nil {
			return fmt.Errorf("start host %s: %w", name, err)
		}
		c, err = client.New(client.Config{
			DataDir: dir, NodeName: cfg.NodeName, HostName: name, Region: cfg.Region, AZ: cfg.AZ,
			NodeSecret: secret, IntroToken: a.introToken, Driver: drv, RPC: a.nodeRPC(), Logger: a.logger.Named("client").With("host", name),
			ImageFiles: files, ImageUploader: snapshotUploader{d: a.imageData}, DiskExportURL: a.diskExportURL(), DiskHTTP: a.internodeClient(0),
			CPUAllocationRatio: cfg.Client.CPUAllocationRatio, RAMAllocationRatio: cfg.Client.RAMAllocationRatio,
			DiskAllocationRatio: cfg.Client.DiskAllocationRatio, ReservedMemoryMB: cfg.Client.ReservedHostMemoryMB,
			ReservedVCPUs: cfg.Client.ReservedHostCPUs, ReservedDiskGB: cfg.Client.ReservedHostDiskGB,
			TunnelIP: a.tunnelIP(i), StorageCapacityGB: hostPoolGB, StorageNBDAddress: a.storageNBDAddress(storageHere),
			StorageBackend: backend, StorageBackendName: backendName, Ceph: ceph, NBDClientTLS: a.nbdClientTLS(),
		})
		if err != nil {
			return fmt.Errorf("start host %s: %w", name, err)
		}
		a.clients = append(a.clients, c)
		a.diskExports.add(c)
		if i == 0 {
			if err := a.startDataplane(c, dir); err != nil {
				return err
			}
		}
		if storageHere {
			if err := a.startStorage(c, pool, files, secret); err != nil {
				return fmt.Errorf("start host %s: %w", name, err)
			}
		}
		a.runHost(name, c, drv, files)
	}
	return nil
}

// runHost runs host c's agent, and its image pre-cacher when it has an
// image cache, until shutdown.
func (a *Agent) runHost(name string, c *client.Client, drv virt.Driver, files client.ImageFiles) {
	if cache, ok := files.(*imagecache.Cache); ok {
		p := imagecache.NewPrecacher(a.nodeRPC(), c.HostID, cache, a.logger.Named("precache").With("host", name), a.shutdownCh)
		a.bgWG.Add(1)
		go func() {
			defer a.bgWG.Done()
			p.Run()
		}()
	}
	a.hostDrivers = append(a.hostDrivers, hostDriver{client: c, driver: drv})
	a.bgWG.Add(1)
	go func() {
		defer a.bgWG.Done()
		if err := c.Start(); err != nil {
			a.logger.Error("hypervisor agent stopped", "host", name, "error", err)
		}
	}()
}
