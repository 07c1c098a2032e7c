package libvirt

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/virt"
)

// Disks moving between hosts (virt.DiskMover). The source hands out its
// qcow2 volumes as they are: a root disk is an overlay on the image, so
// only what the guest wrote travels, and the destination points the
// overlay at its own copy of the image (qemu-img rebase -u: the data is
// the same, only the file name of the backing changes). The destination
// takes the fetched files into its pool under its own attempt's names,
// never over an existing file, and grows them to its flavor's sizes.

// moveRoles maps the driver's disk roles that move to virt's. Swap is
// built afresh at its new size: a cold move reboots the guest, and
// nothing in swap outlives a boot.
var moveRoles = []struct{ own, role string }{
	{diskRoot, virt.DiskRoleRoot},
	{diskEphemeral, virt.DiskRoleEphemeral},
}

// ExportDisks lists a shut-off instance's root and ephemeral disks.
func (d *Driver) ExportDisks(ctx context.Context, id string) ([]virt.ExportedDisk, error) {
	var out []virt.ExportedDisk
	err := d.withDomain(ctx, "ExportDisks", id, func(ctx context.Context, lv *golibvirt.Libvirt, dom golibvirt.Domain, m *instanceMeta, s domState) error {
		if s.state != golibvirt.DomainShutoff || s.managedSave {
			return virt.InvalidState("export the disks of", s.power)
		}
		if m.Rescue != nil {
			return fmt.Errorf("%w: the instance is rescued", virt.ErrInvalidState)
		}
		for _, r := range moveRoles {
			disk := m.disk(r.own)
			if disk == nil {
				continue
			}
			path := disk.Path
			base := ""
			if r.own == diskRoot && m.Image != nil && m.Image.Base != "" {
				// A root disk restored from a snapshot stands alone,
				// whatever image the instance was built from.
				backed, err := hasBackingFile(path)
				if err != nil {
					return fmt.Errorf("the %s disk: %w", r.role, err)
				}
				if backed {
					base = m.Image.ID
				}
			}
			out = append(out, virt.ExportedDisk{Role: r.role, Format: "qcow2", BackingImageID: base, File: d.poolFile(path),
				Open: func() (io.ReadSeekCloser, error) { return os.Open(path) }})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// importVolume makes the fetched disk imp the pool's volume name, an
// overlay on base when the disk was one on the source, grown to
// capacity bytes if it is smaller; it returns the volume's path.
func (d *Driver) importVolume(lv *golibvirt.Libvirt, p golibvirt.StoragePool, name string, capacity uint64, base *metaImage, imp *virt.ImportedDisk) (string, error) {
	if imp.Format != "qcow2" {
		return "", fmt.Errorf("import the %s disk: format %q, want qcow2", imp.Role, imp.Format)
	}
	if err := d.checkFree(lv, p, name); err != nil {
		return "", err
	}
	dst := filepath.Join(d.cfg.ImagesDir, name)
	src := imp.Path
	if imp.Shared {
		// Another host's file (evacuate.go, sharedpool.go): only ever
		// read.
		src = dst + ".import"
		cloned, err := cloneFile(imp.Path, src)
		if err != nil {
			return "", fmt.Errorf("copy the shared %s disk: %w", imp.Role, err)
		}
		defer os.Remove(src)
		d.cfg.Logger.Info("copied a disk inside the shared pool", "role", imp.Role, "from", filepath.Base(imp.Path), "to", name, "cloned", cloned)
	}
	if imp.BackingImageID != "" {
		if base == nil || base.Base == "" {
			return "", fmt.Errorf("import the %s disk: it is an overlay on image %s, whose data this host does not have", imp.Role, imp.BackingImageID)
		}
		if base.ID != imp.BackingImageID {
			return "", fmt.Errorf("import the %s disk: it is an overlay on image %s, not on the instance's image %s", imp.Role, imp.BackingImageID, base.ID)
		}
		if err := qemuImg("rebase", "-u", "-f", "qcow2", "-F", base.Format, "-b", base.Base, src); err != nil {
			return "", fmt.Errorf("import the %s disk: %w", imp.Role, err)
		}
	}
	if err := linkOrCopy(src, dst); err != nil {
		return "", fmt.Errorf("import the %s disk: %w", imp.Role, err)
	}
	if err := lv.StoragePoolRefresh(p, 0); err != nil {
		return "", fmt.Errorf("refresh storage pool: %w", err)
	}
	v, err := lv.StorageVolLookupByName(p, name)
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", name, err)
	}
	path, err := lv.StorageVolGetPath(v)
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", name, err)
	}
	if have, err := d.volumeCapacity(lv, p, name); err != nil {
		return "", err
	} else if have < capacity {
		if err := d.growVolume(lv, p, name, capacity); err != nil {
			return "", err
		}
	}
	return path, nil
}

// linkOrCopy puts src's data at dst, which must not exist: a hard link
// where both are on one file system, else a copy through a temporary
// file linked into place. A link never replaces a file, so neither does
// this.
func linkOrCopy(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	tmp := dst + ".import"
	if err := copyFile(src, tmp); err != nil {
		return err
	}
	defer os.Remove(tmp)
	return os.Link(tmp, dst)
}

// qemuImg runs qemu-img with args.
func qemuImg(args ...string) error {
	out, err := exec.Command("qemu-img", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("qemu-img %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

// importedDisk returns spec's fetched disk of the driver's role own.
func importedDisk(spec *virt.InstanceSpec, own string) *virt.ImportedDisk {
	for _, r := range moveRoles {
		if r.own == own {
			return spec.ImportedDisk(r.role)
		}
	}
	return nil
}

// hasBackingFile reports whether the qcow2 file at path is an overlay.
func hasBackingFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	hdr := make([]byte, 16)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return false, fmt.Errorf("read the header of %s: %w", path, err)
	}
	if !bytes.Equal(hdr[:4], qcow2Magic) {
		return false, nil
	}
	return binary.BigEndian.Uint64(hdr[8:16]) != 0, nil
}
