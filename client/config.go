package client

import (
	"errors"
	"net/http"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// RPC is how the agent reaches the servers. Errors carry their kind as a
// text prefix (see structs.KindOf).
type RPC interface {
	RPC(method string, args, reply any) error
}

// Defaults of the Config fields left zero.
const (
	DefaultPowerSyncInterval   = 10 * time.Second
	DefaultFingerprintInterval = 30 * time.Second
	DefaultReportInterval      = 200 * time.Millisecond
)

// Config configures a Client. Zero values take the defaults noted beside
// the fields.
type Config struct {
	// DataDir holds state.db (bbolt). Required.
	DataDir string
	// NodeName is the gossip member name of the agent process; it
	// becomes Host.GossipMember.
	NodeName string
	// HostName is the host's name (default: the driver's
	// HostInfo.Hostname, else NodeName).
	HostName string
	// Region and AZ place the host.
	Region, AZ string
	// NodeSecret authenticates the agent to the servers on every call
	// about its host (default: LoadOrCreateNodeSecret(DataDir)). An
	// agent of several hosts passes the same one to each.
	NodeSecret string
	// IntroToken, when set, gives the node introduction token a
	// registration carries (the servers need one, with ACLs on, for a
	// host they do not know yet); "" for none.
	IntroToken func(hostName string) string

	// TunnelIP is the host's tunnel endpoint (VTEP) registered with it
	// (structs.Host.TunnelIP); "" when the host wires no overlay.
	TunnelIP string

	// Driver drives the local hypervisor. Required.
	Driver virt.Driver
	// RPC reaches the servers. Required.
	RPC RPC
	// Logger receives the agent's logs (default: discard).
	Logger hclog.Logger
	// ImageFiles, when set, resolves instances' images to local files
	// (virt.InstanceSpec.ImagePath) before spawns, rebuilds and
	// rescues; nil for drivers that need no image data (fake).
	ImageFiles ImageFiles
	// DiskExportURL is where other agents reach this one's disk export
	// (client/diskxfer, served by ExportDisks): the base URL, ending in
	// diskxfer.MountPath. It is published as the host attribute
	// disk_export_url; "" means this host cannot send disks, so the
	// servers refuse to resize or migrate its instances to another host.
	DiskExportURL string
	// DiskHTTP is the HTTP client that fetches disks from other agents
	// (nil: http.DefaultClient).
	DiskHTTP *http.Client
	// ImageUploader sends snapshots (createImage, createBackup) to the
	// servers; nil refuses them.
	ImageUploader ImageUploader

	// StorageCapacityGB, above 0, makes the host a storage host with a
	// volume pool of that size (HostCapabilityVolumes); the storage
	// agent (client/storage) drives its volumes.
	StorageCapacityGB int64
	// StorageNBDAddress is where the storage host serves its volumes to
	// instances on other hosts (HostAttrStorageNBDAddress); empty when
	// it serves none.
	StorageNBDAddress string
	// StorageBackend and StorageBackendName are what keeps the storage
	// host's volumes (structs.VolumeBackendFile when empty, or
	// VolumeBackendRBD) and its backend's name, which volume types
	// choose (HostAttrStorageBackend, HostAttrStorageBackendName).
	StorageBackend, StorageBackendName string
	// Ceph, when set, is how this host's instances reach RBD volumes.
	Ceph *CephAttach
	// NBDClientTLS, when set, is the agent's client certificate, with
	// which it opens a storage host's NBD export itself (qemu-img) to
	// reimage a boot volume kept on another host.
	NBDClientTLS *NBDClientTLS

	// Allocation ratios (Nova's defaults: CPU 4.0, RAM 1.0, disk 1.0).
	CPUAllocationRatio, RAMAllocationRatio, DiskAllocationRatio float64
	// ReservedMemoryMB is kept for the host itself (default 512, capped
	// at half the host's memory; a negative value reserves nothing).
	// ReservedVCPUs and ReservedDiskGB default to 0.
	ReservedMemoryMB, ReservedVCPUs, ReservedDiskGB int64

	// PowerSyncInterval is how often the power states of the instances
	// are compared with what was reported (default 10s).
	PowerSyncInterval time.Duration
	// FingerprintInterval is how often the host is fingerprinted again;
	// it is registered again only when its record changed (default 30s).
	FingerprintInterval time.Duration
	// ReportInterval is the batch window of the status reports (default
	// 200ms).
	ReportInterval time.Duration
}

// withDefaults checks cfg and returns a copy with the defaults filled in.
func (cfg Config) withDefaults() (Config, error) {
	var errs []error
	if cfg.DataDir == "" {
		errs = append(errs, errors.New("data dir is required"))
	}
	if cfg.Driver == nil {
		errs = append(errs, errors.New("a virt driver is required"))
	}
	if cfg.RPC == nil {
		errs = append(errs, errors.New("an RPC client is required"))
	}
	if cfg.CPUAllocationRatio < 0 || cfg.RAMAllocationRatio < 0 || cfg.DiskAllocationRatio < 0 {
		errs = append(errs, errors.New("allocation ratios must not be negative"))
	}
	if cfg.ReservedVCPUs < 0 || cfg.ReservedDiskGB < 0 {
		errs = append(errs, errors.New("reserved vcpus and disk must not be negative"))
	}
	if cfg.PowerSyncInterval < 0 || cfg.FingerprintInterval < 0 || cfg.ReportInterval < 0 {
		errs = append(errs, errors.New("intervals must not be negative"))
	}
	if cfg.TunnelIP != "" {
		if err := structs.ValidTunnelIP(cfg.TunnelIP); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return cfg, structs.Errorf(structs.KindInvalid, "client config: %v", errors.Join(errs...))
	}

	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	setF := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	setF(&cfg.CPUAllocationRatio, structs.DefaultCPUAllocationRatio)
	setF(&cfg.RAMAllocationRatio, structs.DefaultRAMAllocationRatio)
	setF(&cfg.DiskAllocationRatio, structs.DefaultDiskAllocationRatio)
	switch {
	case cfg.ReservedMemoryMB == 0:
		cfg.ReservedMemoryMB = structs.DefaultReservedMemoryMB
	case cfg.ReservedMemoryMB < 0:
		cfg.ReservedMemoryMB = 0
	}
	setD := func(p *time.Duration, v time.Duration) {
		if *p == 0 {
			*p = v
		}
	}
	setD(&cfg.PowerSyncInterval, DefaultPowerSyncInterval)
	setD(&cfg.FingerprintInterval, DefaultFingerprintInterval)
	setD(&cfg.ReportInterval, DefaultReportInterval)
	return cfg, nil
}
