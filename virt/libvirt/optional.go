package libvirt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

// Pause freezes a RUNNING instance's virtual CPUs (→ PAUSED). Pausing a
// PAUSED instance is a no-op; any other state fails with virt.ErrInvalidState.
func (d *Driver) Pause(ctx context.Context, id string) error {
	return d.withDomain(ctx, "Pause", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		switch s.power {
		case virt.PowerPaused:
			return nil
		case virt.PowerRunning:
			return lv.DomainSuspend(dom)
		}
		return invalid("pause", s.power)
	})
}

// Unpause thaws a PAUSED instance (→ RUNNING). Unpausing a RUNNING
// instance is a no-op; any other state fails with virt.ErrInvalidState.
func (d *Driver) Unpause(ctx context.Context, id string) error {
	return d.withDomain(ctx, "Unpause", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		switch s.power {
		case virt.PowerRunning:
			return nil
		case virt.PowerPaused:
			return lv.DomainResume(dom)
		}
		return invalid("unpause", s.power)
	})
}

// Suspend saves a RUNNING instance's memory to disk and stops it, with
// libvirt's managed save (→ SUSPENDED). Suspending a suspended instance
// is a no-op; any other state fails with virt.ErrInvalidState.
func (d *Driver) Suspend(ctx context.Context, id string) error {
	return d.withDomain(ctx, "Suspend", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		switch {
		case s.managedSave:
			return nil
		case s.power == virt.PowerRunning:
			return lv.DomainManagedSave(dom, 0)
		}
		return invalid("suspend", s.power)
	})
}

// Resume restores a suspended instance from its managed save (→
// RUNNING). Resuming a RUNNING instance is a no-op; any other state fails
// with virt.ErrInvalidState.
func (d *Driver) Resume(ctx context.Context, id string) error {
	return d.withDomain(ctx, "Resume", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		switch {
		case s.power == virt.PowerRunning:
			return nil
		case s.managedSave:
			return lv.DomainCreate(dom)
		case s.state == golibvirt.DomainPmsuspended:
			return lv.DomainPmWakeup(dom, 0)
		}
		return invalid("resume", s.power)
	})
}

// redefine replaces a domain's persistent definition with the one of
// record m (same name and UUID).
func (d *Driver) redefine(lv *golibvirt.Libvirt, m *instanceMeta) error {
	virtType, arch, err := d.hostType(lv)
	if err != nil {
		return err
	}
	doc, err := d.domainXML(m, virtType, arch)
	if err != nil {
		return err
	}
	if _, err := lv.DomainDefineXML(doc); err != nil {
		return fmt.Errorf("redefine domain: %w", err)
	}
	return nil
}

// clone deep-copies a record.
func (m *instanceMeta) clone() *instanceMeta {
	c := *m
	c.Disks = slices.Clone(m.Disks)
	return &c
}

// Resize gives an instance the flavor of spec (VCPUs, MemoryMB, RootGB,
// EphemeralGB, SwapMB) in place, keeping its power state and what the
// guest wrote: a running instance is shut down (through ACPI, within
// SoftRebootTimeout), its domain defined again with the new CPUs and
// memory, its root and ephemeral disks grown (libvirt's volume resize,
// qemu-img resize; they never shrink: a smaller size than the flavor's
// fails and changes nothing, and a root disk already larger than the new
// root_gb, as an image's can be, is left as it is), its swap disk made
// anew, and it boots again. Resizing a running or stopped instance to
// the flavor it has is a no-op. A PAUSED, SUSPENDED or rescued instance
// fails with virt.ErrInvalidState. spec's ID must be empty or id.
func (d *Driver) Resize(ctx context.Context, id string, spec *virt.InstanceSpec) error {
	if spec != nil && spec.ID == "" {
		s := *spec
		s.ID = id
		spec = &s
	}
	if err := validate(spec); err != nil {
		return fmt.Errorf("libvirt Resize %q: %w", id, err)
	}
	if spec.ID != id {
		return fmt.Errorf("libvirt Resize %q: invalid spec: ID %q", id, spec.ID)
	}
	return d.withDomain(ctx, "Resize", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if s.power == virt.PowerPaused || s.power == virt.PowerSuspend {
			return invalid("resize", s.power)
		}
		if m.Rescue != nil {
			return fmt.Errorf("libvirt: %w: cannot resize a rescued instance", virt.ErrInvalidState)
		}
		if m.Flavor == flavorOf(spec) {
			return nil // done already: a repeated call must not reboot the guest
		}
		old := m.Flavor
		if spec.RootGB < old.RootGB || spec.EphemeralGB < old.EphemeralGB {
			return fmt.Errorf("%w: root %d→%d GB, ephemeral %d→%d GB", virt.ErrDiskShrink, old.RootGB, spec.RootGB, old.EphemeralGB, spec.EphemeralGB)
		}
		p, err := d.pool(lv)
		if err != nil {
			return err
		}
		running := s.active()
		if running {
			if err := d.stop(ctx, lv, dom, m.hasOS(), d.cfg.SoftRebootTimeout); err != nil {
				return err
			}
		}
		nm := m.clone()
		nm.Flavor = flavorOf(spec)
		if err := d.resizeDisks(lv, p, nm, old); err != nil {
			if running {
				_ = lv.DomainCreate(dom)
			}
			return err
		}
		if err := d.redefine(lv, nm); err != nil {
			if running {
				_ = lv.DomainCreate(dom)
			}
			return err
		}
		if running {
			return lv.DomainCreate(dom)
		}
		return nil
	})
}

// flavorOf is the record of a spec's flavor.
func flavorOf(spec *virt.InstanceSpec) metaFlavor {
	return metaFlavor{VCPUs: spec.VCPUs, MemoryMB: spec.MemoryMB, RootGB: spec.RootGB,
		EphemeralGB: spec.EphemeralGB, SwapMB: spec.SwapMB}
}

// resizeDisks brings an instance's volumes to the sizes of its new
// flavor (in nm) from the old one.
func (d *Driver) resizeDisks(lv *golibvirt.Libvirt, p golibvirt.StoragePool, nm *instanceMeta, old metaFlavor) error {
	f := nm.Flavor
	nm.ensureAttempt()
	if root := nm.disk(diskRoot); root != nil && f.RootGB > old.RootGB {
		cur, err := d.volumeCapacity(lv, p, root.Volume)
		if err != nil {
			return err
		}
		if want := uint64(f.RootGB) * gib; want > cur {
			if err := d.growVolume(lv, p, root.Volume, want); err != nil {
				return err
			}
		}
	}
	if f.EphemeralGB > old.EphemeralGB {
		if eph := nm.disk(diskEphemeral); eph != nil {
			if err := d.growVolume(lv, p, eph.Volume, uint64(f.EphemeralGB)*gib); err != nil {
				return err
			}
		} else {
			path, err := d.createOwnVolume(lv, p, nm, diskEphemeral, uint64(f.EphemeralGB)*gib, nil)
			if err != nil {
				return err
			}
			nm.setDisk(metaDisk{Role: diskEphemeral, Volume: d.diskVolume(nm, diskEphemeral), Path: path})
		}
	}
	if f.SwapMB != old.SwapMB {
		if swap := nm.disk(diskSwap); swap != nil {
			if err := d.deleteVolume(lv, p, swap.Volume); err != nil {
				return err
			}
		}
		nm.dropDisk(diskSwap)
		if f.SwapMB > 0 {
			name := d.diskVolume(nm, diskSwap)
			path, err := d.createOwnVolume(lv, p, nm, diskSwap, uint64(f.SwapMB)<<20, nil)
			if err != nil {
				return err
			}
			nm.setDisk(metaDisk{Role: diskSwap, Volume: name, Path: path})
		}
	}
	return nil
}

// Rescue boots an instance from a rescue disk: first, with its own root
// disk attached second (Nova's legacy rescue), or, for a stable rescue
// (r.Stable), added as r's device on r's bus and first in the boot
// order, every disk of the instance staying where it was. The rescue
// disk is a fresh overlay on r.Image when it is an absolute path to a
// local image file, on the instance's own image when r.Image is empty,
// and empty (nothing to boot, like the instance itself) for an instance
// built without an image; other image ids fail until the image service
// can resolve them. A RUNNING or stopped instance ends RUNNING and
// rescued; a PAUSED or suspended one fails with virt.ErrInvalidState.
// Rescuing a rescued instance is a no-op.
func (d *Driver) Rescue(ctx context.Context, id string, r virt.RescueSpec) error {
	imageID := r.Image
	return d.withDomain(ctx, "Rescue", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) (err error) {
		switch {
		case m.Rescue != nil:
			return nil
		case s.power == virt.PowerPaused || s.power == virt.PowerSuspend:
			return invalid("rescue", s.power)
		}
		layout, err := m.rescueLayout(r)
		if err != nil {
			return err
		}
		p, err := d.pool(lv)
		if err != nil {
			return err
		}
		rescue := &metaImage{ID: imageID}
		size := uint64(gib)
		switch {
		case imageID == "" && m.Image != nil:
			rescue = m.Image
			if file, err := inspectImage(m.Image.Base); err == nil {
				size = max(size, file.virtualSize)
			}
		case imageID == "":
		case filepath.IsAbs(imageID):
			img, file, err := d.cacheBase(lv, p, "", imageID)
			if err != nil {
				return err
			}
			rescue, size = img, max(size, file.virtualSize)
		default:
			return fmt.Errorf("rescue image %q: until the image service serves images, give a local image path, or nothing for the instance's own image", imageID)
		}
		var undo reverter
		defer func() {
			if err != nil {
				undo.revert(d.cfg.Logger, id)
			}
		}()
		rm := m.clone()
		rm.ensureAttempt()
		name := d.diskVolume(rm, diskRescue)
		path, err := d.createOwnVolume(lv, p, rm, diskRescue, size, rescue)
		if err != nil {
			return err
		}
		undo.add("delete rescue volume", func() error { return d.deleteVolume(lv, p, name) })
		if s.active() {
			if err := d.stop(ctx, lv, dom, false, 0); err != nil {
				return err
			}
			undo.add("start the instance again", func() error { return lv.DomainCreate(dom) })
		}
		rm.Rescue, rm.RescueDevice, rm.RescueBus = rescue, layout.Device, layout.Bus
		rm.setDisk(metaDisk{Role: diskRescue, Volume: name, Path: path})
		if err := d.redefine(lv, rm); err != nil {
			return err
		}
		undo.add("restore the domain's definition", func() error { return d.redefine(lv, m) })
		if err := lv.DomainCreate(dom); err != nil {
			return fmt.Errorf("boot the rescue disk: %w", err)
		}
		return nil
	})
}

// Unrescue boots a rescued instance from its own disk again and deletes
// the rescue disk; it ends RUNNING whatever its power state was.
// Unrescuing an instance that is not rescued is a no-op.
func (d *Driver) Unrescue(ctx context.Context, id string) error {
	return d.withDomain(ctx, "Unrescue", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if m.Rescue == nil {
			return nil
		}
		if s.managedSave {
			if err := lv.DomainManagedSaveRemove(dom, 0); err != nil {
				return err
			}
		}
		if s.active() {
			if err := d.stop(ctx, lv, dom, false, 0); err != nil {
				return err
			}
		}
		nm := m.clone()
		nm.Rescue, nm.RescueDevice, nm.RescueBus = nil, "", ""
		rescueVol := ""
		if rd := nm.disk(diskRescue); rd != nil {
			rescueVol = rd.Volume
		}
		nm.dropDisk(diskRescue)
		if err := d.redefine(lv, nm); err != nil {
			return err
		}
		p, err := d.pool(lv)
		if err != nil {
			return err
		}
		if rescueVol != "" {
			if err := d.deleteVolume(lv, p, rescueVol); err != nil {
				d.cfg.Logger.Warn("cannot delete the rescue disk", "instance_id", id, "error", err)
			}
		}
		return lv.DomainCreate(dom)
	})
}

// Snapshot writes a standalone qcow2 copy of the instance's root disk
// (qemu-img convert, backing chain flattened) to
// SnapshotDir/<id>/<imageName>.qcow2 and returns its path. A running
// guest is paused during the copy, so the image is consistent, and
// resumed after. imageName must be non-empty and contain no slash.
func (d *Driver) Snapshot(ctx context.Context, id string, imageName string) (string, error) {
	if imageName == "" || imageName == "." || imageName == ".." || strings.ContainsAny(imageName, `/\`) {
		return "", fmt.Errorf("libvirt Snapshot %q: invalid image name %q", id, imageName)
	}
	var path string
	err := d.withDomain(ctx, "Snapshot", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		root := m.disk(diskRoot)
		if root == nil && m.RootVolume != nil {
			if m.RootVolume.Network != nil {
				return fmt.Errorf("the root volume %s is reached over the network (%s), which this driver does not snapshot; snapshot the volume instead",
					m.RootVolume.ID, m.RootVolume.Network.Protocol)
			}
			// Booted from a volume: the image is the volume's content.
			root = &metaDisk{Role: diskRoot, Path: m.RootVolume.Path}
		}
		if root == nil {
			return fmt.Errorf("instance has no root disk")
		}
		dst := filepath.Join(d.cfg.SnapshotDir, id, imageName+".qcow2")
		if s.state == golibvirt.DomainRunning || s.state == golibvirt.DomainBlocked {
			if err := lv.DomainSuspend(dom); err != nil {
				return fmt.Errorf("pause for the snapshot: %w", err)
			}
			defer func() {
				if err := lv.DomainResume(dom); err != nil {
					d.cfg.Logger.Error("cannot resume the guest after its snapshot", "instance_id", id, "error", err)
				}
			}()
		}
		if err := convertImage(context.WithoutCancel(ctx), root.Path, dst); err != nil {
			return err
		}
		path = dst
		return nil
	})
	if err != nil {
		return "", err
	}
	return path, nil
}

// consoleTail is how much of the end of a console log ConsoleOutput
// reads.
const consoleTail = 64 << 10

// ansiRE matches the terminal escape sequences firmware and consoles
// write.
var ansiRE = regexp.MustCompile(`\x1b(\[[0-9;?]*[ -/]*[@-~]|[()#][0-9A-Za-z]|[0-~])`)

// ConsoleOutput returns the end of the instance's serial console log
// (the last 64 KiB at most), terminal escape sequences and carriage
// returns removed; tailLines > 0 keeps only the last tailLines lines. A
// guest that has not written anything yet has an empty log.
func (d *Driver) ConsoleOutput(ctx context.Context, id string, tailLines int) (string, error) {
	var out string
	err := d.read(ctx, "ConsoleOutput", id, func(ctx context.Context, lv *golibvirt.Libvirt) error {
		dom, err := d.lookup(lv, id)
		if err != nil {
			return err
		}
		m, err := d.meta(lv, dom)
		if err != nil {
			return fmt.Errorf("domain %s: %w", dom.Name, err)
		}
		raw, err := readTail(m.ConsoleLog, consoleTail)
		if err != nil {
			return err
		}
		out = cleanConsole(raw, tailLines)
		return nil
	})
	if err != nil {
		return "", err
	}
	return out, nil
}

// readTail reads the last n bytes of a file; a missing file is empty.
func readTail(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := max(st.Size()-n, 0)
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// cleanConsole turns raw console bytes into text lines.
func cleanConsole(raw []byte, tailLines int) string {
	text := ansiRE.ReplaceAllString(string(raw), "")
	text = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= ' ' && r != 0x7f) {
			return r
		}
		return -1
	}, strings.ToValidUTF8(text, "?"))
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return ""
	}
	lines := strings.Split(text, "\n")
	if tailLines > 0 && len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.Join(lines, "\n") + "\n"
}

// RemoteConsole returns where a RUNNING or PAUSED instance's VNC server
// listens (Config.VNCListen, on the port libvirt picked at boot), or, for
// kind "serial", the pty of its serial console (which also logs to the
// console log). Other kinds fail with virt.ErrNotSupported. A stopped
// instance has no console (virt.ErrInvalidState).
func (d *Driver) RemoteConsole(ctx context.Context, id string, kind string) (*virt.Console, error) {
	var c *virt.Console
	err := d.read(ctx, "RemoteConsole", id, func(ctx context.Context, lv *golibvirt.Libvirt) error {
		dom, err := d.lookup(lv, id)
		if err != nil {
			return err
		}
		if kind != "vnc" && kind != "serial" {
			return fmt.Errorf("console kind %q: %w", kind, virt.ErrNotSupported)
		}
		s, err := d.state(lv, dom)
		if err != nil {
			return err
		}
		if s.power != virt.PowerRunning && s.power != virt.PowerPaused {
			return invalid("open a console of", s.power)
		}
		doc, err := lv.DomainGetXMLDesc(dom, 0)
		if err != nil {
			return err
		}
		var live libvirtxml.Domain
		if err := live.Unmarshal(doc); err != nil {
			return fmt.Errorf("domain XML: %w", err)
		}
		if kind == "serial" {
			c, err = serialConsole(&live)
			return err
		}
		if live.Devices != nil {
			for _, g := range live.Devices.Graphics {
				if g.VNC != nil && g.VNC.Port > 0 {
					host := g.VNC.Listen
					if host == "" {
						host = d.cfg.VNCListen
					}
					c = &virt.Console{Kind: "vnc", Host: host, Port: g.VNC.Port}
					return nil
				}
			}
		}
		return fmt.Errorf("domain %s has no VNC server listening", dom.Name)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// LiveMigrate moves a RUNNING or PAUSED instance to the libvirtd at
// destination — a libvirt URI such as qemu+tcp://10.0.0.12/system (what
// the destination publishes as migration_uri), or a host name, which
// means qemu+tcp://<host>/system — peer to peer, live, keeping it defined
// there and undefining it here. With Config.SharedStorage the disks stay
// where they are, used by the destination from then on; otherwise they
// are copied onto volumes prepared in the destination's pool of the same
// name (blockmigrate.go: incrementally when the destination can open the
// image, which LiveMigrateTo names; the destination needs no shared
// storage, only the same ConsoleDir path) and on success its volumes and
// console log here are deleted. The driver itself connects to the
// destination's libvirtd to prepare the volumes; the migration is peer to
// peer (this libvirtd connects to the destination's). On failure it stays here as it was, and the prepared volumes
// are deleted. It needs Config.MigrationURI (the LiveMigrate capability);
// without it, it fails with virt.ErrNotSupported.
func (d *Driver) LiveMigrate(ctx context.Context, id string, destination string) error {
	return d.LiveMigrateTo(ctx, id, virt.LiveMigrationTarget{URI: destination})
}

// LiveMigrateTo is LiveMigrate to to.URI onto the image file the
// destination's agent prepared (to.ImagePath): the destination's root
// overlay is built on it, so a block migration copies only what the
// guest wrote (virt.PreparedLiveMigrator).
func (d *Driver) LiveMigrateTo(ctx context.Context, id string, to virt.LiveMigrationTarget) error {
	destination := to.URI
	if !d.Capabilities().LiveMigrate {
		return fmt.Errorf("libvirt LiveMigrate %q: live migration needs migration_uri configured: %w", id, virt.ErrNotSupported)
	}
	return d.withDomain(ctx, "LiveMigrate", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if destination == "" {
			return errors.New("empty destination")
		}
		if s.power != virt.PowerRunning && s.power != virt.PowerPaused {
			return invalid("live-migrate", s.power)
		}
		dconn := destination
		if !strings.Contains(dconn, "://") {
			dconn = "qemu+tcp://" + destination + "/system"
		}
		flags := golibvirt.MigrateLive | golibvirt.MigratePeer2peer | golibvirt.MigratePersistDest |
			golibvirt.MigrateUndefineSource | golibvirt.MigrateAutoConverge
		if err := d.performLive(lv, dom, m, dconn, to.ImagePath, flags); err != nil { // blockmigrate.go
			return err
		}
		if d.cfg.SharedStorage {
			return nil // the destination runs from the same files
		}
		// The guest runs there now: what it left here is garbage.
		if p, err := lv.StoragePoolLookupByName(d.cfg.PoolName); err == nil {
			if err := d.deleteDisks(lv, p, m); err != nil {
				d.cfg.Logger.Warn("cannot delete a migrated instance's volume", "instance_id", id, "error", err)
			}
		}
		if err := removeFile(m.ConsoleLog); err != nil {
			d.cfg.Logger.Warn("cannot delete a migrated instance's console log", "instance_id", id, "error", err)
		}
		return nil
	})
}

// serialConsole is the pty of a running domain's first serial port.
func serialConsole(live *libvirtxml.Domain) (*virt.Console, error) {
	if live.Devices != nil {
		for _, sp := range live.Devices.Serials {
			if sp.Source != nil && sp.Source.Pty != nil && sp.Source.Pty.Path != "" {
				return &virt.Console{Kind: "serial", Path: sp.Source.Pty.Path}, nil
			}
		}
	}
	return nil, fmt.Errorf("domain %s has no serial console pty", live.Name)
}
