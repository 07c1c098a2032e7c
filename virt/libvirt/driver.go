package libvirt

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/virt"
)

// errNotOurs means a domain has the name of one of our instances but
// not our metadata: it was defined by someone else.
var errNotOurs = errors.New("a domain of that name exists but is not a Stratus instance of this driver")

// Driver is the libvirt driver: it runs instances as QEMU/KVM domains of
// one libvirtd. It implements virt.Driver, virt.Pauser, virt.Suspender,
// virt.Resizer, virt.Rescuer, virt.LiveMigrator, virt.Snapshotter,
// virt.ConsoleOutputer, virt.RemoteConsoler, virt.VolumeAttacher
// (volumes.go), virt.Diagnoser (diagnostics.go) and virt.EventSource. All
// methods are safe for concurrent use; the operations on one instance are
// serialised.
type Driver struct {
	cfg    Config
	prefix string // of our domains' names
	conn   *connection
	events chan virt.InstanceEvent
	locks  keyedLocks
	poolMu sync.Mutex

	// hostMu guards what the current connection told about the host.
	hostMu   sync.Mutex
	virtType string
	arch     string

	// ops counts operations in flight, for Close; closing (under opsMu)
	// refuses new ones.
	opsMu     sync.Mutex
	ops       sync.WaitGroup
	closing   bool
	closeOnce sync.Once

	// failStep, set by tests, fails a spawn at the named step.
	failStep func(step string) error
	// legacyNames, set by tests, makes spawns name volumes as before
	// attempts existed, to build the domains an upgrade finds.
	legacyNames bool
}

var (
	_ virt.Driver               = (*Driver)(nil)
	_ virt.Pauser               = (*Driver)(nil)
	_ virt.Suspender            = (*Driver)(nil)
	_ virt.Resizer              = (*Driver)(nil)
	_ virt.Rescuer              = (*Driver)(nil)
	_ virt.LiveMigrator         = (*Driver)(nil)
	_ virt.PreparedLiveMigrator = (*Driver)(nil)
	_ virt.Snapshotter          = (*Driver)(nil)
	_ virt.ConsoleOutputer      = (*Driver)(nil)
	_ virt.RemoteConsoler       = (*Driver)(nil)
	_ virt.EventSource          = (*Driver)(nil)
	_ virt.VolumeAttacher       = (*Driver)(nil)
	_ virt.Diagnoser            = (*Driver)(nil)
)

// eventBuffer is how many unread events Events holds before dropping.
const eventBuffer = 1024

// New returns a driver for the libvirtd at cfg.URI. It does not wait for
// libvirtd: it dials in the background, and keeps dialling with backoff
// whenever the connection is lost; operations wait up to
// cfg.ReconnectWait for a connection, then fail with an error wrapping
// ErrUnavailable. Close releases it.
func New(cfg Config) (*Driver, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	uri, err := url.Parse(cfg.URI)
	if err != nil {
		return nil, fmt.Errorf("libvirt: uri %q: %w", cfg.URI, err)
	}
	d := &Driver{
		cfg:    cfg,
		prefix: "stratus-",
		events: make(chan virt.InstanceEvent, eventBuffer),
	}
	if cfg.Namespace != "" {
		d.prefix = "stratus-" + cfg.Namespace + "-"
	}
	d.conn = newConnection(uri, cfg.Logger.Named("libvirt"), d.onEvent, d.onConnect)
	return d, nil
}

// Close stops the dialler, waits for the operations in flight and closes
// the event channel. Domains keep running. Later calls fail with
// ErrClosed.
func (d *Driver) Close() error {
	d.closeOnce.Do(func() {
		d.opsMu.Lock()
		d.closing = true
		d.opsMu.Unlock()
		d.conn.close()
		d.ops.Wait()
		close(d.events)
	})
	return nil
}

// Name returns "libvirt".
func (d *Driver) Name() string { return "libvirt" }

// Capabilities reports Pause, Suspend (managed save), Resize, Rescue,
// Snapshot, ConsoleOutput and RemoteConsole (VNC), and LiveMigrate when
// Config.MigrationURI says the hosts' libvirtds can reach each other.
// Hot-plugging volumes and interfaces is offered; cold migration of
// disks is not.
func (d *Driver) Capabilities() virt.Capabilities {
	return virt.Capabilities{
		Pause:         true,
		Suspend:       true,
		Resize:        true,
		Migrate:       true,
		Rescue:        true,
		LiveMigrate:   d.cfg.MigrationURI != "",
		Snapshot:      true,
		ConsoleOutput: true,
		RemoteConsole: true,
		// Hot-plugged NICs (interfaces.go) and volumes (volumes.go).
		AttachInterface: true,
		AttachVolume:    true,
		// Guest passwords and crash dumps (guest.go).
		SetPassword: true,
		CrashDump:   true,
	}
}

// Events reports the power-state changes of this driver's instances as
// libvirtd announces them (one lifecycle-event subscription per
// connection), within milliseconds of the change. The channel is closed
// by Close.
func (d *Driver) Events() <-chan virt.InstanceEvent { return d.events }

// onConnect forgets what the previous connection said about the host.
func (d *Driver) onConnect(*golibvirt.Libvirt) {
	d.hostMu.Lock()
	d.virtType, d.arch = "", ""
	d.hostMu.Unlock()
}

// onEvent turns a lifecycle event of one of our domains into an
// InstanceEvent; it never blocks.
func (d *Driver) onEvent(ev golibvirt.DomainEventLifecycleMsg) {
	id, ok := d.instanceID(ev.Dom.Name)
	if !ok {
		return
	}
	var power int
	switch golibvirt.DomainEventType(ev.Event) {
	case golibvirt.DomainEventStarted, golibvirt.DomainEventResumed:
		power = virt.PowerRunning
	case golibvirt.DomainEventSuspended:
		power = virt.PowerPaused
	case golibvirt.DomainEventStopped:
		power = virt.PowerShutdown
		if golibvirt.DomainEventStoppedDetailType(ev.Detail) == golibvirt.DomainEventStoppedSaved {
			power = virt.PowerSuspend
		}
	case golibvirt.DomainEventShutdown:
		power = virt.PowerShutdown
	case golibvirt.DomainEventPmsuspended:
		power = virt.PowerSuspend
	case golibvirt.DomainEventCrashed:
		power = virt.PowerCrashed
	case golibvirt.DomainEventUndefined:
		power = virt.PowerNoState
	default: // defined: no change of power
		return
	}
	select {
	case d.events <- virt.InstanceEvent{ID: id, PowerState: power}:
	default:
	}
}

// run carries out fn on a connection, holding instance id's lock when
// id is set. It runs in a goroutine of its own so that ctx bounds the
// caller's wait even if libvirtd stops answering; an operation the caller
// gave up on still finishes (or fails) before the next one on the same
// instance starts. A call cut short by a lost connection is made again on
// the next one: every operation is written to be repeatable.
func (d *Driver) run(ctx context.Context, op, id string, fn func(ctx context.Context, lv *golibvirt.Libvirt) error) error {
	return d.call(ctx, op, id, true, fn)
}

// read is run for operations that only read: they take no lock, so they
// never wait behind a long operation on the instance.
func (d *Driver) read(ctx context.Context, op, id string, fn func(ctx context.Context, lv *golibvirt.Libvirt) error) error {
	return d.call(ctx, op, id, false, fn)
}

func (d *Driver) call(ctx context.Context, op, id string, lock bool, fn func(ctx context.Context, lv *golibvirt.Libvirt) error) error {
	d.opsMu.Lock()
	if d.closing {
		d.opsMu.Unlock()
		return fmt.Errorf("libvirt %s: %w", op, ErrClosed)
	}
	d.ops.Add(1)
	d.opsMu.Unlock()
	done := make(chan error, 1)
	go func() {
		defer d.ops.Done()
		if lock && id != "" {
			defer d.locks.lock(id)()
		}
		done <- d.withConn(ctx, fn)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		if id == "" {
			return fmt.Errorf("libvirt %s: %w", op, err)
		}
		return fmt.Errorf("libvirt %s %q: %w", op, id, err)
	}
	return nil
}

// withConn calls fn with the current connection, again on the next
// connection if this one is lost during the call (three tries at most).
func (d *Driver) withConn(ctx context.Context, fn func(ctx context.Context, lv *golibvirt.Libvirt) error) error {
	for try := 1; ; try++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		lv, err := d.conn.get(ctx, d.cfg.ReconnectWait)
		if err != nil {
			return err
		}
		err = fn(ctx, lv)
		if !connLost(lv, err) {
			return err
		}
		if try == 3 {
			return fmt.Errorf("%w: the connection was lost during the operation: %v", ErrUnavailable, err)
		}
		d.cfg.Logger.Debug("connection to libvirtd lost during an operation; retrying it", "error", err)
	}
}

// lookup finds an instance's domain; virt.ErrNotFound if it has none.
func (d *Driver) lookup(lv *golibvirt.Libvirt, id string) (golibvirt.Domain, error) {
	dom, err := lv.DomainLookupByName(d.domainName(id))
	if isLibvirtError(err, golibvirt.ErrNoDomain) {
		return dom, virt.ErrNotFound
	}
	return dom, err
}

// meta reads an instance's record from its domain's persistent
// definition; errNotOurs if it has none of ours.
func (d *Driver) meta(lv *golibvirt.Libvirt, dom golibvirt.Domain) (*instanceMeta, error) {
	doc, err := lv.DomainGetMetadata(dom, int32(golibvirt.DomainMetadataElement), []string{MetadataURI}, golibvirt.DomainAffectConfig)
	if isLibvirtError(err, golibvirt.ErrNoDomainMetadata) {
		return nil, errNotOurs
	}
	if err != nil {
		return nil, err
	}
	m, err := parseMeta(doc)
	if err != nil {
		return nil, err
	}
	if m.Namespace != d.cfg.Namespace || d.domainName(m.ID) != dom.Name {
		return nil, errNotOurs
	}
	return m, nil
}

// domState is a domain's state as libvirt and as virt see it.
type domState struct {
	state       golibvirt.DomainState
	power       int
	managedSave bool
}

// active reports whether the domain has a QEMU process.
func (s domState) active() bool {
	return s.state != golibvirt.DomainShutoff && s.state != golibvirt.DomainNostate
}

// state reads a domain's state. A stopped domain with a managed save
// image is suspended.
func (d *Driver) state(lv *golibvirt.Libvirt, dom golibvirt.Domain) (domState, error) {
	st, _, err := lv.DomainGetState(dom, 0)
	if err != nil {
		return domState{}, err
	}
	s := domState{state: golibvirt.DomainState(st)}
	switch s.state {
	case golibvirt.DomainRunning, golibvirt.DomainBlocked:
		s.power = virt.PowerRunning
	case golibvirt.DomainPaused:
		s.power = virt.PowerPaused
	case golibvirt.DomainShutdown:
		s.power = virt.PowerShutdown
	case golibvirt.DomainShutoff:
		s.power = virt.PowerShutdown
		saved, err := lv.DomainHasManagedSaveImage(dom, 0)
		if err != nil {
			return s, err
		}
		if saved == 1 {
			s.power, s.managedSave = virt.PowerSuspend, true
		}
	case golibvirt.DomainCrashed:
		s.power = virt.PowerCrashed
	case golibvirt.DomainPmsuspended:
		s.power = virt.PowerSuspend
	default:
		s.power = virt.PowerNoState
	}
	return s, nil
}

// info is the virt view of an instance's domain.
func (d *Driver) info(lv *golibvirt.Libvirt, dom golibvirt.Domain, id string) (*virt.InstanceInfo, error) {
	s, err := d.state(lv, dom)
	if err != nil {
		return nil, err
	}
	return &virt.InstanceInfo{ID: id, PowerState: s.power, DriverRef: dom.Name}, nil
}

// invalid is virt.ErrInvalidState naming the operation and the state.
func invalid(what string, power int) error {
	return fmt.Errorf("libvirt: %w", virt.InvalidState(what, power))
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// validate rejects specs the driver cannot build.
func validate(spec *virt.InstanceSpec) error {
	switch {
	case spec == nil:
		return errors.New("invalid spec: nil")
	case spec.ID == "":
		return errors.New("invalid spec: empty ID")
	case !idRE.MatchString(spec.ID):
		return fmt.Errorf("invalid spec: ID %q: want up to 100 letters, digits, dots, dashes and underscores", spec.ID)
	case spec.VCPUs < 1:
		return fmt.Errorf("invalid spec: VCPUs %d, want at least 1", spec.VCPUs)
	case spec.MemoryMB < 1:
		return fmt.Errorf("invalid spec: MemoryMB %d, want at least 1", spec.MemoryMB)
	case spec.RootGB < 0 || spec.EphemeralGB < 0 || spec.SwapMB < 0:
		return errors.New("invalid spec: negative disk size")
	}
	if bus := spec.ImageProperties["hw_disk_bus"]; bus != "" && diskTargets[bus] == nil {
		return fmt.Errorf("invalid spec: hw_disk_bus %q: want virtio, sata or ide", bus)
	}
	return nil
}

// Spawn defines and starts a domain for spec: qcow2 disks in the pool
// (the root disk an overlay on spec.ImagePath, the agent's cached copy of
// the image, or on the file the image property stratus_image_path names,
// or empty; ephemeral and swap disks from
// the flavor), a serial console logged to a file, VNC, and the metadata
// that ties it to the instance. Spawn of an instance that exists returns
// its info and creates nothing. If any step fails, everything the spawn
// created is removed again (a cached base image stays cached).
func (d *Driver) Spawn(ctx context.Context, spec *virt.InstanceSpec) (*virt.InstanceInfo, error) {
	id := ""
	if spec != nil {
		id = spec.ID
	}
	if err := validate(spec); err != nil {
		return nil, fmt.Errorf("libvirt Spawn %q: %w", id, err)
	}
	var info *virt.InstanceInfo
	err := d.run(ctx, "Spawn", id, func(ctx context.Context, lv *golibvirt.Libvirt) error {
		dom, err := d.lookup(lv, id)
		switch {
		case err == nil:
			if _, err := d.meta(lv, dom); err != nil {
				return fmt.Errorf("domain %s: %w", dom.Name, err)
			}
			info, err = d.info(lv, dom, id)
			return err
		case !errors.Is(err, virt.ErrNotFound):
			return err
		}
		info, err = d.spawn(lv, spec)
		return err
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// step fails a spawn at a step when a test asks for it.
func (d *Driver) step(name string) error {
	if d.failStep == nil {
		return nil
	}
	return d.failStep(name)
}

// spawn builds a new instance; on failure it removes what it made.
func (d *Driver) spawn(lv *golibvirt.Libvirt, spec *virt.InstanceSpec) (_ *virt.InstanceInfo, err error) {
	id := spec.ID
	var undo reverter
	defer func() {
		if err != nil {
			undo.revert(d.cfg.Logger, id)
		}
	}()
	p, err := d.pool(lv)
	if err != nil {
		return nil, err
	}
	// What an earlier spawn cut short left behind (createVolume never
	// replaces a volume).
	if err := d.sweepVolumes(lv, p, id); err != nil {
		return nil, err
	}
	virtType, arch, err := d.hostType(lv)
	if err != nil {
		return nil, err
	}
	m := &instanceMeta{
		ID: id, Name: spec.Name, Namespace: d.cfg.Namespace,
		Created: time.Now().UTC().Format(time.RFC3339),
		Attempt: d.spawnAttempt(),
		Flavor: metaFlavor{VCPUs: spec.VCPUs, MemoryMB: spec.MemoryMB, RootGB: spec.RootGB,
			EphemeralGB: spec.EphemeralGB, SwapMB: spec.SwapMB},
		DiskBus:    spec.ImageProperties["hw_disk_bus"],
		Machine:    spec.ImageProperties["hw_machine_type"],
		ConsoleLog: filepath.Join(d.cfg.ConsoleDir, d.domainName(id)+".log"),
		NICs:       nicsMeta(spec.NICs),
	}
	if err := bootVolumes(m, spec); err != nil {
		return nil, err
	}
	if err := d.spawnDisks(lv, p, m, spec, &undo); err != nil {
		return nil, err
	}
	if len(spec.ConfigDrive) > 0 {
		if err := d.createConfigDrive(lv, p, m, spec.ConfigDrive, &undo); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(d.cfg.ConsoleDir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Remove(m.ConsoleLog); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	undo.add("remove console log", func() error { return removeFile(m.ConsoleLog) })
	dom, err := d.defineAndStart(lv, m, virtType, arch, &undo)
	if err != nil {
		return nil, err
	}
	d.cfg.Logger.Info("spawned instance", "instance_id", id, "domain", dom.Name, "virt_type", virtType)
	return d.info(lv, dom, id)
}

// spawnDisks makes the instance's root, ephemeral and swap disks in the
// pool, each a volume of this spawn attempt's name: imported when a move
// carried it here (diskmove.go), else new, the root on its image's base
// and at least the image's size. A volume-booted instance has no root
// disk to make.
func (d *Driver) spawnDisks(lv *golibvirt.Libvirt, p golibvirt.StoragePool, m *instanceMeta, spec *virt.InstanceSpec, undo *reverter) error {
	rootSize := uint64(spec.RootGB) * gib
	switch {
	case m.RootVolume != nil:
		rootSize = 0 // the volume is the root disk
	case spec.ImagePath != "" || spec.ImageProperties[ImagePathProperty] != "":
		if err := d.step("base"); err != nil {
			return err
		}
		img, file, err := d.baseImage(lv, p, spec)
		if err != nil {
			return err
		}
		m.Image = img
		rootSize = max(rootSize, file.virtualSize)
	case rootSize == 0:
		rootSize = gib // no image, no root_gb: a small empty disk
	}
	disks := []struct {
		role string
		size uint64
		base *metaImage
	}{
		{diskRoot, rootSize, m.Image},
		{diskEphemeral, uint64(spec.EphemeralGB) * gib, nil},
		{diskSwap, uint64(spec.SwapMB) << 20, nil},
	}
	for _, disk := range disks {
		if disk.size == 0 {
			continue
		}
		if err := d.step(disk.role); err != nil {
			return err
		}
		name := d.diskVolume(m, disk.role)
		var path string
		var err error
		if imp := importedDisk(spec, disk.role); imp != nil {
			path, err = d.importVolume(lv, p, name, disk.size, disk.base, imp)
		} else {
			path, err = d.createVolume(lv, p, name, disk.size, disk.base)
		}
		if err != nil {
			return err
		}
		undo.add("delete volume "+name, func() error { return d.deleteVolume(lv, p, name) })
		m.setDisk(metaDisk{Role: disk.role, Volume: name, Path: path})
	}
	return nil
}

// defineAndStart defines the instance's domain, with its bridges made
// under bridgeMu so a concurrent release cannot remove one between, and
// starts it.
func (d *Driver) defineAndStart(lv *golibvirt.Libvirt, m *instanceMeta, virtType, arch string, undo *reverter) (golibvirt.Domain, error) {
	if err := d.step("define"); err != nil {
		return golibvirt.Domain{}, err
	}
	doc, err := d.domainXML(m, virtType, arch)
	if err != nil {
		return golibvirt.Domain{}, err
	}
	bridgeMu.Lock()
	if err := ensureBridges(context.Background(), m.NICs); err != nil {
		bridgeMu.Unlock()
		return golibvirt.Domain{}, err
	}
	dom, err := lv.DomainDefineXML(doc)
	bridgeMu.Unlock()
	undo.add("release bridges", func() error { return releaseBridges(context.Background(), lv, m.NICs) })
	if err != nil {
		return golibvirt.Domain{}, fmt.Errorf("define domain: %w", err)
	}
	undo.add("undefine domain", func() error { return d.undefine(lv, dom) })
	if err := d.step("start"); err != nil {
		return golibvirt.Domain{}, err
	}
	if err := lv.DomainCreate(dom); err != nil {
		return golibvirt.Domain{}, fmt.Errorf("start domain: %w", err)
	}
	undo.add("destroy domain", func() error { return d.destroyDomain(lv, dom) })
	return dom, d.step("started")
}

// undefine removes a domain's definition with its managed save image,
// snapshots, checkpoints and NVRAM.
func (d *Driver) undefine(lv *golibvirt.Libvirt, dom golibvirt.Domain) error {
	err := lv.DomainUndefineFlags(dom, golibvirt.DomainUndefineManagedSave|golibvirt.DomainUndefineSnapshotsMetadata|
		golibvirt.DomainUndefineNvram|golibvirt.DomainUndefineCheckpointsMetadata)
	if isLibvirtError(err, golibvirt.ErrNoDomain) {
		return nil
	}
	return err
}

// ignoreNotRunning drops the error of stopping a domain that is not
// running (it stopped meanwhile).
func ignoreNotRunning(err error) error {
	if isLibvirtError(err, golibvirt.ErrOperationInvalid) {
		return nil
	}
	return err
}

// removeFile removes a file; a missing one is not an error.
func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Destroy stops an instance's domain, deletes the volumes its metadata
// names (and no others: on shared storage, the instance's copy on
// another host has volumes of its own), undefines it with its managed
// save image, NVRAM, snapshot and checkpoint metadata, and removes its
// console log. The volumes go before the definition, so a destroy cut
// short is finished by the next. A missing instance is not an error;
// without shared storage, the volumes of the instance no domain records
// (a spawn cut short) are still deleted.
func (d *Driver) Destroy(ctx context.Context, id string) error {
	return d.run(ctx, "Destroy", id, func(ctx context.Context, lv *golibvirt.Libvirt) error {
		consoleLog := filepath.Join(d.cfg.ConsoleDir, d.domainName(id)+".log")
		p, err := lv.StoragePoolLookupByName(d.cfg.PoolName)
		havePool := err == nil
		if err != nil && !isLibvirtError(err, golibvirt.ErrNoStoragePool) {
			return err
		}
		dom, err := d.lookup(lv, id)
		switch {
		case err == nil:
			m, err := d.meta(lv, dom)
			if err != nil {
				return fmt.Errorf("domain %s: %w", dom.Name, err)
			}
			if m.ConsoleLog != "" {
				consoleLog = m.ConsoleLog
			}
			if err := d.destroyDefined(ctx, lv, dom, m, p, havePool); err != nil {
				return err
			}
		case !errors.Is(err, virt.ErrNotFound):
			return err
		}
		if havePool {
			if err := d.sweepVolumes(lv, p, id); err != nil {
				return err
			}
		}
		return removeFile(consoleLog)
	})
}

// destroyDefined stops and removes an instance's domain with the volumes
// its record m names.
func (d *Driver) destroyDefined(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, p golibvirt.StoragePool, havePool bool) error {
	// A NIC whose hot-unplug the guest ignored is only live.
	nics := append(liveNICs(lv, dom), m.NICs...)
	if err := d.destroyDomain(lv, dom); err != nil && !isLibvirtError(err, golibvirt.ErrNoDomain) {
		return fmt.Errorf("stop domain: %w", err)
	}
	if havePool {
		if err := d.deleteDisks(lv, p, m); err != nil {
			return err
		}
	}
	if err := d.undefine(lv, dom); err != nil {
		return fmt.Errorf("undefine domain: %w", err)
	}
	if err := releaseBridges(ctx, lv, nics); err != nil {
		d.cfg.Logger.Warn("cannot remove an unused bridge", "instance_id", m.ID, "error", err)
	}
	return nil
}

// GetInfo returns an instance's power state, or an error wrapping
// virt.ErrNotFound.
func (d *Driver) GetInfo(ctx context.Context, id string) (*virt.InstanceInfo, error) {
	var info *virt.InstanceInfo
	err := d.read(ctx, "GetInfo", id, func(ctx context.Context, lv *golibvirt.Libvirt) error {
		dom, err := d.lookup(lv, id)
		if err != nil {
			return err
		}
		info, err = d.info(lv, dom, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// ListInstances returns, sorted, the ids of the domains that carry this
// driver's metadata (and namespace), running or not.
func (d *Driver) ListInstances(ctx context.Context) ([]string, error) {
	var ids []string
	err := d.read(ctx, "ListInstances", "", func(ctx context.Context, lv *golibvirt.Libvirt) error {
		ids = nil
		doms, _, err := lv.ConnectListAllDomains(1, 0)
		if err != nil {
			return err
		}
		for _, dom := range doms {
			if _, ok := d.instanceID(dom.Name); !ok {
				continue
			}
			m, err := d.meta(lv, dom)
			switch {
			case errors.Is(err, errNotOurs), isLibvirtError(err, golibvirt.ErrNoDomain):
				continue // not ours, or gone meanwhile
			case err != nil:
				return fmt.Errorf("domain %s: %w", dom.Name, err)
			}
			ids = append(ids, m.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return ids, nil
}
