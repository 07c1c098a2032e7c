package libvirt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	golibvirt "github.com/digitalocean/go-libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/stratus-cloud/stratus/virt"
)

const gib = 1 << 30

// qcow2Magic starts every qcow2 file.
var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// isLibvirtError reports whether err is libvirt's error code.
func isLibvirtError(err error, code golibvirt.ErrorNumber) bool {
	var lerr golibvirt.Error
	return errors.As(err, &lerr) && lerr.Code == uint32(code)
}

// pool returns the driver's storage pool on connection lv, defining,
// building and starting it the first time.
func (d *Driver) pool(lv *golibvirt.Libvirt) (golibvirt.StoragePool, error) {
	d.poolMu.Lock()
	defer d.poolMu.Unlock()
	p, err := lv.StoragePoolLookupByName(d.cfg.PoolName)
	if isLibvirtError(err, golibvirt.ErrNoStoragePool) {
		p, err = d.definePool(lv)
	}
	if err != nil {
		return p, fmt.Errorf("storage pool %s: %w", d.cfg.PoolName, err)
	}
	active, err := lv.StoragePoolIsActive(p)
	if err != nil {
		return p, fmt.Errorf("storage pool %s: %w", d.cfg.PoolName, err)
	}
	if active == 0 {
		if err := lv.StoragePoolCreate(p, 0); err != nil {
			return p, fmt.Errorf("start storage pool %s: %w", d.cfg.PoolName, err)
		}
	}
	return p, nil
}

// definePool defines the dir pool at ImagesDir and makes it start with
// libvirtd. It also makes the console and snapshot directories.
func (d *Driver) definePool(lv *golibvirt.Libvirt) (golibvirt.StoragePool, error) {
	for _, dir := range []string{d.cfg.ImagesDir, d.cfg.ConsoleDir, d.cfg.SnapshotDir} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return golibvirt.StoragePool{}, err
		}
	}
	doc, err := (&libvirtxml.StoragePool{
		Type:   "dir",
		Name:   d.cfg.PoolName,
		Target: &libvirtxml.StoragePoolTarget{Path: d.cfg.ImagesDir},
	}).Marshal()
	if err != nil {
		return golibvirt.StoragePool{}, err
	}
	p, err := lv.StoragePoolDefineXML(doc, 0)
	if err != nil {
		return p, fmt.Errorf("define: %w", err)
	}
	if err := lv.StoragePoolBuild(p, golibvirt.StoragePoolBuildNew); err != nil {
		return p, fmt.Errorf("build: %w", err)
	}
	if err := lv.StoragePoolSetAutostart(p, 1); err != nil {
		return p, fmt.Errorf("autostart: %w", err)
	}
	d.cfg.Logger.Info("defined storage pool", "pool", d.cfg.PoolName, "path", d.cfg.ImagesDir)
	return p, nil
}

// createVolume creates a qcow2 volume of capacity bytes, as an overlay
// on base when it is set, and returns its path. It never replaces a
// volume: one of the same name fails with errVolumeExists (attempt.go).
func (d *Driver) createVolume(lv *golibvirt.Libvirt, p golibvirt.StoragePool, name string, capacity uint64, base *metaImage) (string, error) {
	if err := d.checkFree(lv, p, name); err != nil {
		return "", err
	}
	vol := &libvirtxml.StorageVolume{
		Name:     name,
		Capacity: &libvirtxml.StorageVolumeSize{Unit: "bytes", Value: capacity},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "qcow2"}},
	}
	if base != nil && base.Base != "" {
		vol.BackingStore = &libvirtxml.StorageVolumeBackingStore{
			Path:   base.Base,
			Format: &libvirtxml.StorageVolumeTargetFormat{Type: base.Format},
		}
	}
	doc, err := vol.Marshal()
	if err != nil {
		return "", err
	}
	v, err := lv.StorageVolCreateXML(p, doc, 0)
	if err != nil {
		return "", fmt.Errorf("create volume %s: %w", name, err)
	}
	path, err := lv.StorageVolGetPath(v)
	if err != nil {
		return "", fmt.Errorf("volume %s: %w", name, err)
	}
	return path, nil
}

// deleteVolume deletes a volume; a missing one is not an error.
func (d *Driver) deleteVolume(lv *golibvirt.Libvirt, p golibvirt.StoragePool, name string) error {
	v, err := lv.StorageVolLookupByName(p, name)
	if isLibvirtError(err, golibvirt.ErrNoStorageVol) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("volume %s: %w", name, err)
	}
	if err := lv.StorageVolDelete(v, 0); err != nil && !isLibvirtError(err, golibvirt.ErrNoStorageVol) {
		return fmt.Errorf("delete volume %s: %w", name, err)
	}
	return nil
}

// volumeCapacity returns a volume's size as the guest sees it.
func (d *Driver) volumeCapacity(lv *golibvirt.Libvirt, p golibvirt.StoragePool, name string) (uint64, error) {
	v, err := lv.StorageVolLookupByName(p, name)
	if err != nil {
		return 0, fmt.Errorf("volume %s: %w", name, err)
	}
	_, capacity, _, err := lv.StorageVolGetInfo(v)
	if err != nil {
		return 0, fmt.Errorf("volume %s: %w", name, err)
	}
	return capacity, nil
}

// growVolume enlarges a volume to capacity bytes (qemu-img resize).
func (d *Driver) growVolume(lv *golibvirt.Libvirt, p golibvirt.StoragePool, name string, capacity uint64) error {
	v, err := lv.StorageVolLookupByName(p, name)
	if err != nil {
		return fmt.Errorf("volume %s: %w", name, err)
	}
	if err := lv.StorageVolResize(v, capacity, 0); err != nil {
		return fmt.Errorf("resize volume %s: %w", name, err)
	}
	return nil
}

// imageFile is what the driver learned about a base image file.
type imageFile struct {
	format      string // "qcow2" or "raw"
	virtualSize uint64 // the disk size the guest sees
}

// inspectImage reads a local image's format and virtual size from its
// header. A qcow2 image with a backing file of its own is refused: it
// would point outside the cache.
func inspectImage(path string) (*imageFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	hdr := make([]byte, 32)
	n, err := io.ReadFull(f, hdr)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if n == len(hdr) && bytes.Equal(hdr[:4], qcow2Magic) {
		if binary.BigEndian.Uint64(hdr[8:16]) != 0 {
			return nil, fmt.Errorf("%s is a qcow2 image with a backing file; flatten it first (qemu-img convert)", path)
		}
		return &imageFile{format: "qcow2", virtualSize: binary.BigEndian.Uint64(hdr[24:32])}, nil
	}
	if st.Size() == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	return &imageFile{format: "raw", virtualSize: uint64(st.Size())}, nil
}

// cacheBase makes sure the pool holds a copy of the image file src and
// returns it. The copy is named after the file's path, size and
// modification time, so a changed file is copied again; it is written
// beside its final name and renamed into place, so a half-written copy is
// never used. Cached bases are shared by every instance built on them and
// are not removed with them.
func (d *Driver) cacheBase(lv *golibvirt.Libvirt, p golibvirt.StoragePool, imageID, src string) (*metaImage, *imageFile, error) {
	if !filepath.IsAbs(src) {
		return nil, nil, fmt.Errorf("image path %q (image property %s) must be absolute", src, ImagePathProperty)
	}
	st, err := os.Stat(src)
	if err != nil {
		return nil, nil, fmt.Errorf("image %s: %w", src, err)
	}
	info, err := inspectImage(src)
	if err != nil {
		return nil, nil, fmt.Errorf("image %s: %w", src, err)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", src, st.Size(), st.ModTime().UnixNano()))
	name := "base-" + hex.EncodeToString(sum[:10]) + "." + info.format
	dst := filepath.Join(d.cfg.ImagesDir, name)
	unlock := d.locks.lock("base:" + name)
	defer unlock()
	if _, err := os.Stat(dst); errors.Is(err, os.ErrNotExist) {
		if err := copyFile(src, dst); err != nil {
			return nil, nil, fmt.Errorf("cache image %s: %w", src, err)
		}
		d.cfg.Logger.Info("cached base image", "source", src, "base", dst)
	} else if err != nil {
		return nil, nil, err
	}
	if _, err := lv.StorageVolLookupByName(p, name); err != nil {
		if err := lv.StoragePoolRefresh(p, 0); err != nil {
			return nil, nil, fmt.Errorf("refresh storage pool: %w", err)
		}
	}
	return &metaImage{ID: imageID, Source: src, Base: dst, Format: info.format}, info, nil
}

// copyFile copies src to dst through a temporary file renamed into place.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// convertImage writes a standalone qcow2 copy of the disk src (its
// backing chain flattened) to dst, through a temporary file. -U reads the
// disk while QEMU holds it; callers pause the guest for a consistent copy.
func convertImage(ctx context.Context, src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".part"
	cmd := exec.CommandContext(ctx, "qemu-img", "convert", "-U", "-O", "qcow2", src, tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("qemu-img convert: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return os.Rename(tmp, dst)
}

// baseImage returns the base of a new instance's root disk: the agent's
// cached image file spec.ImagePath, used in place as the overlay's
// backing file (raw or qcow2, as the file's header says), or else the
// pool's copy of the local file the image property stratus_image_path
// names (a fallback for images the image service holds no data for).
func (d *Driver) baseImage(lv *golibvirt.Libvirt, p golibvirt.StoragePool, spec *virt.InstanceSpec) (*metaImage, *imageFile, error) {
	src := spec.ImagePath
	if src == "" {
		return d.cacheBase(lv, p, spec.ImageID, spec.ImageProperties[ImagePathProperty])
	}
	if !filepath.IsAbs(src) {
		return nil, nil, fmt.Errorf("image %s: cached file %q is not an absolute path", spec.ImageID, src)
	}
	info, err := inspectImage(src)
	if err != nil {
		return nil, nil, fmt.Errorf("image %s: %w", spec.ImageID, err)
	}
	return &metaImage{ID: spec.ImageID, Source: src, Base: src, Format: info.format}, info, nil
}
