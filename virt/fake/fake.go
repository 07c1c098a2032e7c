package fake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/stratus-cloud/stratus/virt"
)

// ErrInjected is what an injected failure returns when FailNext or
// FailAlways was given a nil error. The fake's other errors are virt's
// (ErrNotFound, ErrNotSupported, ErrInvalidState).
var ErrInjected = errors.New("fake: injected failure")

// Config describes the simulated host. Zero fields take the defaults
// noted beside them.
type Config struct {
	HostName string // default "fake-host"
	VCPUs    int64  // default 16
	MemoryMB int64  // default 32768
	DiskGB   int64  // default 500
	Arch     string // default "x86_64"
	CPUModel string // default "fake-cpu"

	HypervisorType    string // default "fake"
	HypervisorVersion string // default "1.0"

	// CustomResources are devices as CUSTOM_* resource classes with their
	// counts, e.g. {"CUSTOM_FPGA": 2}.
	CustomResources map[string]int64
	Traits          []string
	Attributes      map[string]string

	// Latencies, zero by default: an operation sleeps this long before it
	// takes effect, and returns the context's error if ctx ends first
	// (leaving the instance as it was). PowerLatency covers every power
	// transition: PowerOn, PowerOff, Reboot, Pause, Unpause, Suspend and
	// Resume, Rescue and Unrescue. MigrateLatency covers LiveMigrate.
	SpawnLatency, DestroyLatency, PowerLatency, MigrateLatency time.Duration

	// StatePath, with Open, keeps the instances in a file so they
	// survive a restart of the agent, as a real hypervisor's do.
	StatePath string

	// SharedDir, when set, is storage this host shares with the fake
	// hosts given the same directory (libvirt's shared_storage): every
	// instance's disks are also files there, under names of their own
	// spawn's attempt (shared.go), which an evacuation finds
	// (SharedDisks).
	SharedDir string
	// SnapshotDir, when set, is where Snapshot writes the root disk's
	// data (what WriteDisk or a move put there), so that a shelve's
	// snapshot carries it and an unshelve restores it; without it, or
	// for a disk that holds nothing, Snapshot writes no file.
	SnapshotDir string
}

// Driver is the fake driver. It implements virt.Driver, virt.Pauser,
// virt.Suspender, virt.Rescuer, virt.Resizer, virt.LiveMigrator,
// virt.Snapshotter, virt.ConsoleOutputer, virt.RemoteConsoler and
// virt.EventSource. All methods are safe for concurrent use.
type Driver struct {
	cfg Config

	mu         sync.Mutex
	instances  map[string]*instance
	serial     int // next instance's number: DriverRef and console port
	calls      map[string]int
	failNext   map[string][]error
	failAlways map[string]error
	// migrated records where LiveMigrate sent each instance, for
	// MigratedTo; it is test bookkeeping and not persisted.
	migrated map[string]virt.LiveMigrationTarget
	// reimaged records the image each volume was last reimaged from,
	// for Reimaged; test bookkeeping, not persisted.
	reimaged map[string]string
	// persistent is set by Open: every change is saved to StatePath.
	persistent bool
	// events carries SetPowerState's changes to Events' reader.
	events chan virt.InstanceEvent
}

// instance is the fake's whole record of one instance.
type instance struct {
	spec  virt.InstanceSpec // deep copy of what Spawn or Resize got
	power int
	n     int // serial number within this driver
	boots int // how many times the guest booted, for the console log
	// rescued is set while the guest runs from rescueImage (Rescue).
	rescued     bool
	rescueImage string
	// rescueDevice and rescueBus are a stable rescue's layout (the
	// rescue disk added as that device on that bus, the instance's disk
	// staying first); both empty for the legacy layout.
	rescueDevice, rescueBus string
	// passwords and crashDumps record SetAdminPassword and
	// TriggerCrashDump (guest.go); they are not persisted.
	passwords  map[string]string
	crashDumps int
	// disks are what the guest "wrote" to each disk, by role (disks.go).
	disks map[string][]byte
	// attempt names the instance's files on shared storage (shared.go);
	// empty without Config.SharedDir.
	attempt string
	// volumes are the hot-plugged volumes (volumes.go); not persisted.
	volumes []virt.Volume
	// volumeSizes are the sizes ResizeVolume gave the volumes' disks.
	volumeSizes map[string]int64
}

var (
	_ virt.Driver               = (*Driver)(nil)
	_ virt.Pauser               = (*Driver)(nil)
	_ virt.Suspender            = (*Driver)(nil)
	_ virt.Rescuer              = (*Driver)(nil)
	_ virt.Resizer              = (*Driver)(nil)
	_ virt.LiveMigrator         = (*Driver)(nil)
	_ virt.PreparedLiveMigrator = (*Driver)(nil)
	_ virt.SharedDiskFinder     = (*Driver)(nil)
	_ virt.SharedPool           = (*Driver)(nil)
	_ virt.Snapshotter          = (*Driver)(nil)
	_ virt.ConsoleOutputer      = (*Driver)(nil)
	_ virt.RemoteConsoler       = (*Driver)(nil)
	_ virt.EventSource          = (*Driver)(nil)
)

// New returns a fake driver for a clean host described by cfg.
func New(cfg Config) *Driver {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	defN := func(n *int64, v int64) {
		if *n <= 0 {
			*n = v
		}
	}
	def(&cfg.HostName, "fake-host")
	def(&cfg.Arch, "x86_64")
	def(&cfg.CPUModel, "fake-cpu")
	def(&cfg.HypervisorType, "fake")
	def(&cfg.HypervisorVersion, "1.0")
	defN(&cfg.VCPUs, 16)
	defN(&cfg.MemoryMB, 32768)
	defN(&cfg.DiskGB, 500)
	cfg.CustomResources = maps.Clone(cfg.CustomResources)
	cfg.Traits = slices.Clone(cfg.Traits)
	cfg.Attributes = maps.Clone(cfg.Attributes)
	return &Driver{
		cfg:       cfg,
		instances: make(map[string]*instance),
		calls:     make(map[string]int),
		events:    make(chan virt.InstanceEvent, eventBuffer),
	}
}

// Name returns "fake".
func (d *Driver) Name() string { return "fake" }

// Capabilities reports Pause, Suspend, Rescue, Resize, Migrate (its
// disks move with the instance, disks.go), LiveMigrate, Snapshot,
// ConsoleOutput and RemoteConsole; the fake cannot hot-plug volumes.
func (d *Driver) Capabilities() virt.Capabilities {
	return virt.Capabilities{
		Pause:         true,
		Suspend:       true,
		Rescue:        true,
		Resize:        true,
		Migrate:       true,
		LiveMigrate:   true,
		Snapshot:      true,
		ConsoleOutput: true,
		RemoteConsole: true,
		// Hot-plugged NICs are recorded in the spec (interfaces.go).
		AttachInterface: true,
		// Hot-plugged volumes are recorded, not opened (volumes.go).
		AttachVolume: true,
		// Guest passwords and crash dumps (guest.go).
		SetPassword: true,
		CrashDump:   true,
	}
}

// HostInfo returns the host described by Config; maps and slices are
// copies the caller may keep.
func (d *Driver) HostInfo(ctx context.Context) (*virt.HostInfo, error) {
	if err := d.begin(ctx, "HostInfo", 0); err != nil {
		return nil, fmt.Errorf("fake HostInfo: %w", err)
	}
	c := &d.cfg
	return &virt.HostInfo{
		Hostname:          c.HostName,
		Arch:              c.Arch,
		CPUModel:          c.CPUModel,
		VCPUs:             c.VCPUs,
		MemoryMB:          c.MemoryMB,
		DiskGB:            c.DiskGB,
		HypervisorType:    c.HypervisorType,
		HypervisorVersion: c.HypervisorVersion,
		CustomResources:   maps.Clone(c.CustomResources),
		Traits:            slices.Clone(c.Traits),
		Attributes:        maps.Clone(c.Attributes),
	}, nil
}

// Spawn creates a RUNNING instance. Spawn of an id that exists returns
// its current info and creates nothing. An invalid spec (nil, empty ID,
// VCPUs or MemoryMB below 1), an injected failure or the end of ctx
// during SpawnLatency leave nothing behind.
func (d *Driver) Spawn(ctx context.Context, spec *virt.InstanceSpec) (*virt.InstanceInfo, error) {
	id := ""
	if spec != nil {
		id = spec.ID
	}
	if err := d.begin(ctx, "Spawn", d.cfg.SpawnLatency); err != nil {
		return nil, wrap("Spawn", id, err)
	}
	if err := validate(spec); err != nil {
		return nil, wrap("Spawn", id, err)
	}
	disks, err := importDisks(spec)
	if err != nil {
		return nil, wrap("Spawn", id, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if in, ok := d.instances[id]; ok {
		return in.info(), nil
	}
	// The spawn's data volumes are attached from the first boot; the
	// root volume stays in the spec (RootVolume).
	in := &instance{spec: cloneSpec(spec), power: virt.PowerRunning, n: d.serial, boots: 1, disks: disks,
		volumes: slices.Clone(spec.Volumes)}
	if d.cfg.SharedDir != "" {
		in.attempt = newAttempt()
	}
	if err := d.writeSharedLocked(id, in); err != nil {
		_ = d.removeSharedLocked(id, in)
		return nil, wrap("Spawn", id, err)
	}
	d.serial++
	d.instances[id] = in
	if err := d.saveLocked(); err != nil {
		delete(d.instances, id)
		_ = d.removeSharedLocked(id, in)
		return nil, wrap("Spawn", id, err)
	}
	return in.info(), nil
}

// Destroy removes an instance; a missing id is not an error.
func (d *Driver) Destroy(ctx context.Context, id string) error {
	if err := d.begin(ctx, "Destroy", d.cfg.DestroyLatency); err != nil {
		return wrap("Destroy", id, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if in, ok := d.instances[id]; ok {
		// Only this host's own files: another host's on shared storage
		// are never deleted here.
		if err := d.removeSharedLocked(id, in); err != nil {
			return wrap("Destroy", id, err)
		}
	}
	delete(d.instances, id)
	if err := d.saveLocked(); err != nil {
		return wrap("Destroy", id, err)
	}
	return nil
}

// PowerOn starts an instance from any state; it is a no-op on a RUNNING one.
func (d *Driver) PowerOn(ctx context.Context, id string) error {
	return d.transition(ctx, "PowerOn", id, func(in *instance) error {
		in.setPower(virt.PowerRunning)
		return nil
	})
}

// PowerOff stops an instance from any state; it is a no-op on a stopped
// one. The fake's guests always shut down at once, so timeout is unused.
func (d *Driver) PowerOff(ctx context.Context, id string, timeout time.Duration) error {
	return d.transition(ctx, "PowerOff", id, func(in *instance) error {
		in.setPower(virt.PowerShutdown)
		return nil
	})
}

// Reboot restarts an instance. A soft reboot asks the guest, so, as in
// Nova, it needs a RUNNING instance and fails with virt.ErrInvalidState
// otherwise; a hard reboot resets from any state and ends RUNNING.
func (d *Driver) Reboot(ctx context.Context, id string, hard bool) error {
	return d.transition(ctx, "Reboot", id, func(in *instance) error {
		if !hard && in.power != virt.PowerRunning {
			return invalid(in, "soft reboot")
		}
		in.power = virt.PowerRunning
		in.boots++
		return nil
	})
}

// GetInfo returns an instance's state, or an error wrapping
// virt.ErrNotFound.
func (d *Driver) GetInfo(ctx context.Context, id string) (*virt.InstanceInfo, error) {
	if err := d.begin(ctx, "GetInfo", 0); err != nil {
		return nil, wrap("GetInfo", id, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return nil, wrap("GetInfo", id, virt.ErrNotFound)
	}
	return in.info(), nil
}

// ListInstances returns the ids of all instances, sorted.
func (d *Driver) ListInstances(ctx context.Context) ([]string, error) {
	if err := d.begin(ctx, "ListInstances", 0); err != nil {
		return nil, fmt.Errorf("fake ListInstances: %w", err)
	}
	d.mu.Lock()
	ids := slices.Collect(maps.Keys(d.instances))
	d.mu.Unlock()
	slices.Sort(ids)
	return ids, nil
}

// Spec returns a copy of the spec an instance was last spawned or
// resized with, or an error wrapping virt.ErrNotFound. It is a test hook,
// not part of virt.Driver, and neither counts as a call nor fails by
// injection.
func (d *Driver) Spec(id string) (*virt.InstanceSpec, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return nil, wrap("Spec", id, virt.ErrNotFound)
	}
	s := cloneSpec(&in.spec)
	return &s, nil
}

// transition runs fn on instance id under the lock, after counting the
// call, applying injected failures and waiting PowerLatency.
func (d *Driver) transition(ctx context.Context, op, id string, fn func(*instance) error) error {
	return d.withInstance(ctx, op, id, d.cfg.PowerLatency, fn)
}

// withInstance is transition with an explicit latency.
func (d *Driver) withInstance(ctx context.Context, op, id string, latency time.Duration, fn func(*instance) error) error {
	if err := d.begin(ctx, op, latency); err != nil {
		return wrap(op, id, err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return wrap(op, id, virt.ErrNotFound)
	}
	if err := fn(in); err != nil {
		return wrap(op, id, err)
	}
	if err := d.saveLocked(); err != nil {
		return wrap(op, id, err)
	}
	return nil
}

// info is the instance's virt view; callers hold d.mu.
func (in *instance) info() *virt.InstanceInfo {
	return &virt.InstanceInfo{
		ID:         in.spec.ID,
		PowerState: in.power,
		DriverRef:  fmt.Sprintf("instance-%08x", in.n),
	}
}

// setPower moves the instance to state, counting a boot when a stopped
// guest starts.
func (in *instance) setPower(state int) {
	if state == virt.PowerRunning && stopped(in.power) {
		in.boots++
	}
	in.power = state
}

// stopped reports whether a guest in this state is not running at all.
func stopped(state int) bool {
	return state == virt.PowerShutdown || state == virt.PowerCrashed || state == virt.PowerNoState
}

// invalid is virt.ErrInvalidState with the operation and current state.
func invalid(in *instance, what string) error {
	return fmt.Errorf("fake: %w", virt.InvalidState(what, in.power))
}

// validate rejects specs the fake cannot build.
func validate(spec *virt.InstanceSpec) error {
	switch {
	case spec == nil:
		return errors.New("invalid spec: nil")
	case spec.ID == "":
		return errors.New("invalid spec: empty ID")
	case spec.VCPUs < 1:
		return fmt.Errorf("invalid spec: VCPUs %d, want at least 1", spec.VCPUs)
	case spec.MemoryMB < 1:
		return fmt.Errorf("invalid spec: MemoryMB %d, want at least 1", spec.MemoryMB)
	case spec.RootVolume != nil && !validVolume(spec.RootVolume):
		// As libvirt's: a root volume is a file or a network disk.
		return fmt.Errorf("invalid spec: root volume %q needs an id and either a path or a network source with a name and a host", spec.RootVolume.ID)
	}
	return nil
}

// validVolume reports whether v names a volume the way the libvirt
// driver accepts one: an id and either a path or a network source with
// a name and servers.
func validVolume(v *virt.Volume) bool {
	if v.ID == "" || (v.Path == "") == (v.Network == nil) {
		return false
	}
	return v.Network == nil || (v.Network.Name != "" && len(v.Network.Hosts) > 0)
}

// cloneVolume deep-copies a volume (its network source).
func cloneVolume(v virt.Volume) virt.Volume {
	if v.Network != nil {
		n := *v.Network
		n.Hosts = slices.Clone(n.Hosts)
		v.Network = &n
	}
	return v
}

// cloneSpec deep-copies a spec so callers cannot change it under us.
func cloneSpec(s *virt.InstanceSpec) virt.InstanceSpec {
	c := *s
	c.ImageProperties = maps.Clone(s.ImageProperties)
	c.ExtraSpecs = maps.Clone(s.ExtraSpecs)
	c.Metadata = maps.Clone(s.Metadata)
	c.UserData = slices.Clone(s.UserData)
	// The config drive is recorded as given (Spec returns it).
	c.ConfigDrive = slices.Clone(s.ConfigDrive)
	// Fetched disks are files the spawn took over, not part of the spec.
	c.Disks = nil
	if s.RootVolume != nil {
		rv := cloneVolume(*s.RootVolume)
		c.RootVolume = &rv
	}
	c.Volumes = make([]virt.Volume, 0, len(s.Volumes))
	for _, v := range s.Volumes {
		c.Volumes = append(c.Volumes, cloneVolume(v))
	}
	if s.Volumes == nil {
		c.Volumes = nil
	}
	c.NICs = slices.Clone(s.NICs)
	for i := range c.NICs {
		c.NICs[i].IPs = slices.Clone(s.NICs[i].IPs)
	}
	return c
}

// wrap prefixes an error with the operation and instance id.
func wrap(op, id string, err error) error {
	return fmt.Errorf("fake %s %q: %w", op, id, err)
}
