package vmware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"

	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vmdk"

	"github.com/stratus-cloud/stratus/virt"
)

// imageFile is the local image file a spec boots from: the agent's
// cached copy, else the stratus_image_path property, else "".
func imageFile(spec *virt.InstanceSpec) string {
	if spec.ImagePath != "" {
		return spec.ImagePath
	}
	return spec.ImageProperties[ImagePathProperty]
}

// imageKind reads a disk image's format from its magic: "raw", "qcow2"
// or "vmdk" (a sparse VMDK).
func imageKind(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	switch {
	case bytes.Equal(magic, []byte("QFI\xfb")):
		return "qcow2", nil
	case bytes.Equal(magic, []byte("KDMV")):
		return "vmdk", nil
	}
	return "raw", nil
}

// rawImage returns a raw copy of an image file: the file itself when it
// is raw, a qcow2 image converted with qemu-img into a temporary file
// (removed by cleanup) — the driver uploads images as the flat extent of
// a VMDK, which must be raw. Sparse VMDKs are refused.
func rawImage(ctx context.Context, file string) (raw string, cleanup func(), err error) {
	kind, err := imageKind(file)
	if err != nil {
		return "", nil, err
	}
	switch kind {
	case "raw":
		return file, func() {}, nil
	case "qcow2":
	default:
		return "", nil, fmt.Errorf("%s is a %s image: the vmware driver needs raw or qcow2 images (or a template VM named by the image property %s)", file, kind, TemplateProperty)
	}
	qemuImg, err := exec.LookPath("qemu-img")
	if err != nil {
		return "", nil, fmt.Errorf("%s is a qcow2 image and converting it to raw needs qemu-img (Debian: qemu-utils): %w", file, err)
	}
	tmp, err := os.CreateTemp("", "stratus-vmware-*.raw")
	if err != nil {
		return "", nil, err
	}
	_ = tmp.Close()
	cleanup = func() { _ = os.Remove(tmp.Name()) }
	out, err := exec.CommandContext(ctx, qemuImg, "convert", "-f", "qcow2", "-O", "raw", file, tmp.Name()).CombinedOutput()
	if err != nil {
		cleanup()
		return "", nil, fmt.Errorf("convert %s to raw: %w: %s", file, err, bytes.TrimSpace(out))
	}
	return tmp.Name(), cleanup, nil
}

// configDrive uploads the spec's config drive into the VM's folder and
// returns the devices that attach it as a CD-ROM on an IDE controller
// of its own; none without a config drive.
func (d *Driver) configDrive(ctx context.Context, i *inv, spec *virt.InstanceSpec, devs object.VirtualDeviceList) ([]types.BaseVirtualDeviceConfigSpec, error) {
	if len(spec.ConfigDrive) == 0 {
		return nil, nil
	}
	fm := object.NewFileManager(i.vc)
	if err := fm.MakeDirectory(ctx, i.ds.Path(spec.ID), i.dc, true); err != nil {
		return nil, fmt.Errorf("vmware: make the folder of %s: %w", spec.ID, err)
	}
	iso := path.Join(spec.ID, "configdrive.iso")
	if err := i.ds.Upload(ctx, bytes.NewReader(spec.ConfigDrive), iso, uploadParams(int64(len(spec.ConfigDrive)))); err != nil {
		return nil, fmt.Errorf("vmware: upload the config drive of %s: %w", spec.ID, err)
	}
	ide, err := devs.CreateIDEController()
	if err != nil {
		return nil, fmt.Errorf("vmware: config drive of %s: %w", spec.ID, err)
	}
	devs = append(devs, ide)
	cdrom, err := devs.CreateCdrom(ide.(*types.VirtualIDEController))
	if err != nil {
		return nil, fmt.Errorf("vmware: config drive of %s: %w", spec.ID, err)
	}
	cdrom = devs.InsertIso(cdrom, i.ds.Path(iso))
	return []types.BaseVirtualDeviceConfigSpec{
		&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: ide},
		&types.VirtualDeviceConfigSpec{Operation: types.VirtualDeviceConfigSpecOperationAdd, Device: cdrom},
	}, nil
}

// removeFolder deletes an instance's datastore folder, if any: what a
// failed spawn copied or uploaded before its VM existed.
func (d *Driver) removeFolder(ctx context.Context, id string) {
	i, err := d.session(ctx)
	if err != nil {
		return
	}
	if _, err := i.ds.Stat(ctx, id); err != nil {
		return
	}
	t, err := object.NewFileManager(i.vc).DeleteDatastoreFile(ctx, i.ds.Path(id), i.dc)
	if err := wait(ctx, "remove folder of "+id, t, err); err != nil {
		d.logger.Warn("removing the folder of a failed spawn failed", "instance", id, "error", err)
	}
}

// uploadParams are a PUT of n bytes of binary data.
func uploadParams(n int64) *soap.Upload {
	p := soap.DefaultUpload
	p.ContentLength = n
	return &p
}

// copyImage makes the instance's root disk from an image file: the image
// is uploaded once (as raw) into the datastore's cache as the flat extent
// of a preallocated VMDK, then copied to the instance's folder and
// extended to rootKB when that is larger. It returns the copy's
// datastore path and capacity in KiB.
func (d *Driver) copyImage(ctx context.Context, i *inv, spec *virt.InstanceSpec, src string, rootKB int64) (string, int64, error) {
	if !filepath.IsAbs(src) {
		return "", 0, fmt.Errorf("vmware: image path %q (image property %s) must be absolute", src, ImagePathProperty)
	}
	name := spec.ImageID
	if name == "" {
		name = "image-" + filepath.Base(src)
	}
	cached := path.Join(DefaultImageCacheFolder, name, name+".vmdk")
	vdm := object.NewVirtualDiskManager(i.vc)
	capacity, err := d.diskCapacity(ctx, i, cached)
	if errors.As(err, new(object.DatastoreNoSuchFileError)) || errors.As(err, new(object.DatastoreNoSuchDirectoryError)) || os.IsNotExist(err) {
		capacity, err = d.cacheImage(ctx, i, vdm, spec, src, cached)
	}
	if err != nil {
		return "", 0, err
	}
	dst := i.ds.Path(path.Join(spec.ID, spec.ID+"-root.vmdk"))
	fm := object.NewFileManager(i.vc)
	if err := fm.MakeDirectory(ctx, i.ds.Path(spec.ID), i.dc, true); err != nil {
		return "", 0, fmt.Errorf("vmware: make the folder of %s: %w", spec.ID, err)
	}
	t, err := vdm.CopyVirtualDisk(ctx, i.ds.Path(cached), i.dc, dst, i.dc, nil, true)
	if err := wait(ctx, "copy image to "+dst, t, err); err != nil {
		return "", 0, err
	}
	kb := (capacity + 1023) >> 10
	if rootKB > kb {
		t, err := vdm.ExtendVirtualDisk(ctx, dst, i.dc, rootKB, nil)
		if err := wait(ctx, "extend "+dst, t, err); err != nil {
			return "", 0, err
		}
		kb = rootKB
	}
	return dst, kb, nil
}

// cacheImage uploads an image file into the datastore's cache and
// returns its capacity in bytes.
func (d *Driver) cacheImage(ctx context.Context, i *inv, vdm *object.VirtualDiskManager, spec *virt.InstanceSpec, src, cached string) (int64, error) {
	raw, cleanup, err := rawImage(ctx, src)
	if err != nil {
		return 0, fmt.Errorf("vmware: image of %s: %w", spec.ID, err)
	}
	defer cleanup()
	st, err := os.Stat(raw)
	if err != nil {
		return 0, fmt.Errorf("vmware: image of %s: %w", spec.ID, err)
	}
	if err := d.uploadImage(ctx, i, vdm, raw, cached, st.Size()); err != nil {
		return 0, err
	}
	return d.diskCapacity(ctx, i, cached)
}

// diskCapacity reads a VMDK's capacity in bytes from its descriptor.
func (d *Driver) diskCapacity(ctx context.Context, i *inv, file string) (int64, error) {
	if _, err := i.ds.Stat(ctx, file); err != nil {
		return 0, err
	}
	rc, _, err := i.ds.Download(ctx, file, &soap.DefaultDownload)
	if err != nil {
		return 0, fmt.Errorf("vmware: read %s: %w", file, err)
	}
	defer rc.Close()
	desc, err := vmdk.ParseDescriptor(io.LimitReader(rc, 1<<20))
	if err != nil {
		return 0, fmt.Errorf("vmware: parse the descriptor %s: %w", file, err)
	}
	return desc.Capacity(), nil
}
