package virt

import (
	"context"
	"time"
)

// Driver is the core every backend implements. Every method is
// idempotent where that makes sense: Spawn of an instance that already
// exists returns its info, Destroy of a missing instance succeeds.
type Driver interface {
	// Name is the driver's name ("fake", "libvirt", …).
	Name() string
	// Capabilities says which optional operations work.
	Capabilities() Capabilities
	// HostInfo fingerprints the host for registration.
	HostInfo(ctx context.Context) (*HostInfo, error)
	// Spawn creates and starts an instance. On failure everything it
	// created is removed again.
	Spawn(ctx context.Context, spec *InstanceSpec) (*InstanceInfo, error)
	// Destroy stops and removes an instance and its local resources.
	Destroy(ctx context.Context, id string) error
	// PowerOn starts a stopped instance.
	PowerOn(ctx context.Context, id string) error
	// PowerOff stops an instance, gracefully within timeout, then hard.
	PowerOff(ctx context.Context, id string, timeout time.Duration) error
	// Reboot restarts an instance: soft asks the guest, hard resets.
	Reboot(ctx context.Context, id string, hard bool) error
	// GetInfo reads an instance's state; ErrNotFound if it is unknown.
	GetInfo(ctx context.Context, id string) (*InstanceInfo, error)
	// ListInstances returns the ids of every instance the driver manages
	// on this host, running or not.
	ListInstances(ctx context.Context) ([]string, error)
}

// Pauser can freeze an instance in memory.
type Pauser interface {
	Pause(ctx context.Context, id string) error
	Unpause(ctx context.Context, id string) error
}

// Suspender can save an instance's memory to disk and restore it.
type Suspender interface {
	Suspend(ctx context.Context, id string) error
	Resume(ctx context.Context, id string) error
}

// Rescuer can boot an instance from a rescue image with its own disk
// attached, and back again (Nova's rescue/unrescue). Rescuing a stopped
// instance boots it; while rescued, GetInfo reports its power state as
// usual.
type Rescuer interface {
	// Rescue reboots the instance from r's image (its own when r.Image
	// is empty), its disks laid out as r says (RescueSpec).
	Rescue(ctx context.Context, id string, r RescueSpec) error
	// Unrescue reboots it from its own disk; it ends RUNNING.
	Unrescue(ctx context.Context, id string) error
}

// Resizer can change an instance's flavor on the same host, in place.
type Resizer interface {
	// Resize gives instance id spec's flavor (its ID empty or id),
	// keeping its disks' content and its power state: root and
	// ephemeral disks grow to the new sizes and never shrink (a smaller
	// one fails with ErrDiskShrink before anything changes; VMware keeps
	// the disk at its size). Resizing to the flavor the instance has
	// changes nothing on libvirt and fake, so a repeated call is
	// harmless there.
	Resize(ctx context.Context, id string, spec *InstanceSpec) error
}

// LiveMigrator can move a running (or paused) instance to another host.
type LiveMigrator interface {
	// LiveMigrate sends the instance to destination, a backend-specific
	// address of the other host. On success the instance no longer
	// exists here; on failure it is still here, as it was.
	LiveMigrate(ctx context.Context, id string, destination string) error
}

// LiveMigrationTarget is where a live migration goes, with what its
// destination's agent prepared before it starts.
type LiveMigrationTarget struct {
	// URI is LiveMigrate's destination.
	URI string
	// ImagePath is the destination's local file of the instance's image
	// (its image cache's), fetched there before the migration; "" when
	// the destination prepared nothing, and the driver then copies the
	// whole disk unless it finds the image at the source's path there.
	ImagePath string
}

// PreparedLiveMigrator is a LiveMigrator that uses what the destination
// prepared: with the image there, only what the guest wrote is copied.
type PreparedLiveMigrator interface {
	// LiveMigrateTo is LiveMigrate to to.URI, using to.ImagePath.
	LiveMigrateTo(ctx context.Context, id string, to LiveMigrationTarget) error
}

// Snapshotter can capture an instance's root disk as an image.
type Snapshotter interface {
	Snapshot(ctx context.Context, id string, imageName string) (imagePath string, err error)
}

// ConsoleOutputer returns the instance's serial console log.
type ConsoleOutputer interface {
	ConsoleOutput(ctx context.Context, id string, tailLines int) (string, error)
}

// RemoteConsoler returns where a graphical or serial console listens.
type RemoteConsoler interface {
	RemoteConsole(ctx context.Context, id string, kind string) (*Console, error)
}

// VolumeAttacher can hot-plug block devices.
type VolumeAttacher interface {
	AttachVolume(ctx context.Context, id string, vol *Volume) error
	DetachVolume(ctx context.Context, id string, volumeID string) error
}

// VolumeSwapper can move an attached volume's data to another volume
// while the guest runs (Nova's swap volume): the guest keeps the same
// device, now backed by the new volume, and the old one is left
// detached with its data as it was.
type VolumeSwapper interface {
	SwapVolume(ctx context.Context, id, oldVolumeID string, vol *Volume) error
}

// VolumeReimager can rewrite a volume's file on this host from an image
// (a rebuild that reimages the boot volume, Nova 2.93) while no guest
// uses it: the volume keeps its size, format and path.
type VolumeReimager interface {
	ReimageVolume(ctx context.Context, vol *Volume, imagePath string) error
}

// InterfaceAttacher can hot-plug network interfaces.
type InterfaceAttacher interface {
	AttachInterface(ctx context.Context, id string, nic *NIC) error
	DetachInterface(ctx context.Context, id string, portID string) error
}

// EventSource is a driver that reports power-state changes as they
// happen on the hypervisor — a guest that shut itself down, an operator's
// `virsh destroy` — so the agent notices them at once instead of at its
// next power-sync poll.
type EventSource interface {
	// Events returns the driver's event channel, the same one on every
	// call. Events are hints: the driver drops them when the channel is
	// full, and the receiver reads the authoritative state with GetInfo.
	// The channel is closed when the driver is closed, or never.
	Events() <-chan InstanceEvent
}

// MultiHost is a driver that fronts several hosts of its own, each its
// own resource provider — Ironic's bare-metal nodes. The agent runs one
// host agent (registration, heartbeats, allocation watcher) per key that
// Hosts lists, each with the driver that Host scopes to that key, and
// lists again from time to time to pick up new hosts. The driver itself
// (unscoped) still works across all its hosts.
type MultiHost interface {
	// Hosts lists the keys of the hosts behind the driver, sorted.
	Hosts(ctx context.Context) ([]string, error)
	// Host returns the driver of the host with that key: its HostInfo
	// fingerprints that host alone and it spawns only there.
	Host(key string) (Driver, error)
}

// InstanceEvent says an instance's power state changed on the hypervisor.
type InstanceEvent struct {
	// ID is the instance's id.
	ID string
	// PowerState is its new power state (a Power* constant) as the
	// backend reported it; PowerNoState when it was removed.
	PowerState int
}

// Capabilities lists what a driver can do beyond the core.
type Capabilities struct {
	// Migrate says the driver is a DiskMover (disks.go): a resize or
	// cold migration to another host carries the instance's disks.
	Pause, Suspend, Rescue, Resize, Migrate, LiveMigrate bool
	Snapshot, ConsoleOutput, RemoteConsole               bool
	AttachVolume, AttachInterface                        bool
	// SetPassword and CrashDump are PasswordSetter and CrashDumper
	// (guest.go).
	SetPassword, CrashDump bool
}

// InstanceSpec is everything a driver needs to build an instance.
type InstanceSpec struct {
	ID          string
	Name        string
	VCPUs       int
	MemoryMB    int
	RootGB      int
	EphemeralGB int
	SwapMB      int
	ImageID     string
	// ImagePath is the local file of the image's data (raw or qcow2),
	// from the agent's image cache; "" when the instance has no image
	// or the image service holds no data for it. Drivers that build
	// disks from images use it as the base (libvirt: the backing file).
	ImagePath string
	// ImageProperties and ExtraSpecs carry hw:… hints for the backend.
	ImageProperties map[string]string
	ExtraSpecs      map[string]string
	Metadata        map[string]string
	UserData        []byte
	// ConfigDrive is the instance's config drive, an ISO 9660 image
	// labelled config-2 (virt/configdrive), nil for none. A driver that
	// can attaches it as a read-only CD-ROM.
	ConfigDrive []byte
	// NICs are the instance's ports in order (eth0 first): what the
	// host's dataplane wires and the guest sees as its interfaces.
	NICs []NIC
	// Disks, when set, are the instance's disks fetched from the host a
	// resize or cold migration moves it from: the driver builds the new
	// instance on them (DiskMover) instead of on fresh disks.
	Disks []ImportedDisk
	// RootVolume, when set, is the volume the instance boots from (Nova's
	// boot from volume): its file is the root disk, which the driver
	// neither builds nor deletes; ImagePath is unused then. Volumes are
	// the data volumes attached from the first boot, as AttachVolume
	// attaches them.
	RootVolume *Volume
	Volumes    []Volume
}

// InstanceInfo is a driver's view of one instance.
type InstanceInfo struct {
	ID         string
	PowerState int
	// DriverRef is the backend's own name for it (domain name, VM moref).
	DriverRef string
}

// HostInfo is a host's fingerprint.
type HostInfo struct {
	Hostname          string
	Arch              string
	CPUModel          string
	VCPUs             int64
	MemoryMB          int64
	DiskGB            int64
	HypervisorType    string
	HypervisorVersion string
	// CustomResources are devices as CUSTOM_* resource classes
	// (accelerators, GPUs, FPGAs) with their counts.
	CustomResources map[string]int64
	Traits          []string
	Attributes      map[string]string
}

// Console is where a remote console listens.
type Console struct {
	Kind string // "vnc", "spice", "serial", "mks"
	Host string
	Port int
	// Path is set instead of Host and Port when the console is a local
	// character device or unix socket (a serial console's pty).
	Path string
}

// Volume is a block device to attach: a file or block device on this
// host (Path), or a disk QEMU reaches over the network (Network).
type Volume struct {
	ID     string
	Path   string
	Device string
	// Network, when set, is where a volume that is not on this host is
	// served; Path is empty then.
	Network *NetworkDisk
}

// NetworkDisk is a volume QEMU opens over the network: a storage
// agent's NBD export or a Ceph RBD image. Such a disk is always raw to
// QEMU.
type NetworkDisk struct {
	// Protocol is NetworkNBD or NetworkRBD.
	Protocol string
	// Name is the NBD export's name, or the RBD image as "pool/image".
	Name string
	// Hosts are the servers as "host:port": the NBD server, or Ceph's
	// monitors.
	Hosts []string
	// TLS asks QEMU for NBD over TLS with the x509 credentials the
	// host's libvirt is configured with (qemu.conf nbd_tls).
	TLS bool
	// User and SecretUUID authenticate to the server: the cephx user
	// and the libvirt secret holding its key. The key itself is never
	// in the domain's XML or metadata.
	User       string
	SecretUUID string
}

// Network disk protocols, libvirt's names.
const (
	NetworkNBD = "nbd"
	NetworkRBD = "rbd"
)

// NIC is a network interface to attach.
type NIC struct {
	PortID string
	MAC    string
	Bridge string
	// NetworkID and IPs (the port's fixed IPs) are what a dataplane
	// needs to put the interface on its network and answer its DHCP.
	NetworkID string
	IPs       []string
}
