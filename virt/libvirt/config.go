package libvirt

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Defaults of the Config fields left zero.
const (
	DefaultURI               = "qemu:///system"
	DefaultImagesDir         = "/var/lib/stratus/libvirt/images"
	DefaultVNCListen         = "127.0.0.1"
	DefaultPoolName          = "stratus"
	DefaultSoftRebootTimeout = 60 * time.Second
	DefaultReconnectWait     = 15 * time.Second
)

// ImagePathProperty is the image property that names a local file (raw
// or qcow2) an instance boots from when InstanceSpec.ImagePath (the
// agent's cached copy of the image's data) is empty — a fallback for
// images the image service holds no data for:
// InstanceSpec.ImageProperties["stratus_image_path"]. Without either the
// instance gets an empty root disk of its flavor's size: QEMU runs, but
// the guest finds no operating system.
const ImagePathProperty = "stratus_image_path"

// Config configures a Driver. Zero values take the defaults noted beside
// the fields.
type Config struct {
	// URI is libvirtd's connection URI (default qemu:///system, through
	// /var/run/libvirt/libvirt-sock): qemu+unix:///system?socket=PATH
	// for another socket, qemu+tcp://HOST[:PORT]/system for TCP.
	URI string
	// Namespace isolates drivers that share one libvirtd (tests, several
	// simulated hosts): each sees only the domains and the storage pool
	// of its own namespace. Empty in production. Letters, digits and
	// dashes, at most 40.
	Namespace string
	// ImagesDir is the directory of the driver's storage pool (a libvirt
	// "dir" pool): cached base images and the instances' disks (default
	// /var/lib/stratus/libvirt/images). It must be on the host libvirtd
	// runs on, which is also the agent's: base images are copied into it
	// and snapshots read from it directly.
	ImagesDir string
	// ConsoleDir holds the serial console logs (default: "console"
	// beside ImagesDir).
	ConsoleDir string
	// SnapshotDir receives Snapshot's images (default: "snapshots"
	// beside ImagesDir).
	SnapshotDir string
	// PoolName names the storage pool (default "stratus", or
	// "stratus-<namespace>").
	PoolName string
	// VNCListen is the address every guest's VNC server binds, on a port
	// libvirt picks (default 127.0.0.1). RemoteConsole reports it, so it
	// must be reachable by whoever proxies consoles.
	VNCListen string
	// VirtType is the domain type: "kvm", "qemu" (TCG emulation), or
	// empty to use kvm when libvirtd offers it (/dev/kvm usable) and
	// qemu otherwise.
	VirtType string
	// MigrationURI is how other hosts' libvirtds reach this one for live
	// migration, e.g. qemu+tcp://10.0.0.12/system. It is published as the
	// host attribute migration_uri, and setting it turns on the
	// LiveMigrate capability: it says libvirtd listens for its peers and
	// the hosts share ImagesDir and ConsoleDir paths.
	MigrationURI string
	// SharedStorage says the hosts live migration moves instances
	// between see the same files at the same paths in ImagesDir and
	// ConsoleDir (NFS, a cluster file system, or one machine's disk):
	// LiveMigrate then copies no disks and leaves the files in place,
	// and tells libvirt the migration is safe (VIR_MIGRATE_UNSAFE:
	// libvirt cannot tell shared storage from a local disk). Without it,
	// LiveMigrate copies the disks to the destination. With it, an
	// evacuation's destination finds the instance's disks in the pool
	// and builds on copies of them (virt.SharedDiskFinder).
	SharedStorage bool
	// SoftRebootTimeout is how long a soft reboot or a resize waits for
	// the guest to shut down cleanly before forcing it (default 60s).
	SoftRebootTimeout time.Duration
	// ReconnectWait is how long an operation waits for a lost connection
	// to libvirtd to come back before it fails (default 15s).
	ReconnectWait time.Duration
	// HostName overrides the host name libvirtd reports.
	HostName string
	// Logger receives connection and clean-up messages (default: none).
	Logger hclog.Logger
}

var namespaceRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,39}$`)

// withDefaults checks cfg and fills in its defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.URI == "" {
		cfg.URI = DefaultURI
	}
	if _, err := url.Parse(cfg.URI); err != nil {
		return cfg, fmt.Errorf("libvirt: uri %q: %w", cfg.URI, err)
	}
	if cfg.Namespace != "" && !namespaceRE.MatchString(cfg.Namespace) {
		return cfg, fmt.Errorf("libvirt: namespace %q: want up to 40 letters, digits and dashes", cfg.Namespace)
	}
	if cfg.ImagesDir == "" {
		cfg.ImagesDir = DefaultImagesDir
	}
	if !filepath.IsAbs(cfg.ImagesDir) {
		return cfg, fmt.Errorf("libvirt: images dir %q must be an absolute path", cfg.ImagesDir)
	}
	cfg.ImagesDir = filepath.Clean(cfg.ImagesDir)
	if cfg.ConsoleDir == "" {
		cfg.ConsoleDir = filepath.Join(filepath.Dir(cfg.ImagesDir), "console")
	}
	if cfg.SnapshotDir == "" {
		cfg.SnapshotDir = filepath.Join(filepath.Dir(cfg.ImagesDir), "snapshots")
	}
	if !filepath.IsAbs(cfg.ConsoleDir) || !filepath.IsAbs(cfg.SnapshotDir) {
		return cfg, errors.New("libvirt: console and snapshot dirs must be absolute paths")
	}
	if cfg.PoolName == "" {
		cfg.PoolName = DefaultPoolName
		if cfg.Namespace != "" {
			cfg.PoolName += "-" + cfg.Namespace
		}
	}
	if cfg.VNCListen == "" {
		cfg.VNCListen = DefaultVNCListen
	}
	switch cfg.VirtType {
	case "", "kvm", "qemu":
	default:
		return cfg, fmt.Errorf("libvirt: virt type %q: want kvm, qemu or empty", cfg.VirtType)
	}
	if cfg.SoftRebootTimeout <= 0 {
		cfg.SoftRebootTimeout = DefaultSoftRebootTimeout
	}
	if cfg.ReconnectWait <= 0 {
		cfg.ReconnectWait = DefaultReconnectWait
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return cfg, nil
}
