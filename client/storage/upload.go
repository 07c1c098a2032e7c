package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stratus-cloud/stratus/structs"
)

// ImageUploader streams data to the servers' image stores as the data
// of a queued image, which then becomes active.
type ImageUploader interface {
	Upload(ctx context.Context, imageID string, size int64, body io.Reader) error
}

// VolumeImageWriter is a backend that writes a volume's data to a file
// in an image format (os-volume_upload_image).
type VolumeImageWriter interface {
	// WriteVolumeImage writes volume v's data to dst in qemu-img's
	// format (raw, qcow2, vpc…), readable while an instance uses v.
	WriteVolumeImage(ctx context.Context, v *structs.Volume, format, dst string) error
}

// qemuFormats maps Glance's disk formats to qemu-img's, as Cinder's
// image_utils does.
var qemuFormats = map[string]string{"vhd": "vpc", "ploop": "parallels"}

// uploadImage carries out an uploading volume: its data is written to a
// file in the image's disk format and streamed to the servers as the
// data of the queued image, and the volume goes back to in-use if it
// has attachments, else available. A failed upload deletes the image
// (as Cinder's volume manager does) and puts the volume back all the
// same, with the error. An image already active (a restart after the
// upload) is not uploaded again.
func (a *Agent) uploadImage(ctx context.Context, v *structs.Volume) {
	back := structs.VolumeAvailable
	if len(v.Attachments) > 0 {
		back = structs.VolumeInUse
	}
	if v.Upload == nil {
		a.finishVolume(v, back, back, "", errors.New("the volume is uploading into no image"))
		return
	}
	err := a.copyToImage(ctx, v)
	if err != nil && ctx.Err() != nil {
		return // stopped: the next run starts over
	}
	if err != nil {
		var reply structs.GenericResponse
		derr := a.cfg.RPC.RPC("Image.Delete", &structs.ImageDeleteRequest{ImageID: v.Upload.ImageID,
			WriteRequest: structs.WriteRequest{Region: a.cfg.Region, AuthToken: a.cfg.NodeSecret}}, &reply)
		if derr != nil && structs.KindOf(derr) != structs.KindNotFound {
			a.log.Warn("cannot delete the image of a failed upload", "image_id", v.Upload.ImageID, "error", derr)
		}
	}
	a.finishVolume(v, back, back, "", err)
}

// copyToImage writes the volume's data in the image's format under the
// work directory and uploads it.
func (a *Agent) copyToImage(ctx context.Context, v *structs.Volume) error {
	up := v.Upload
	w, ok := a.cfg.Backend.(VolumeImageWriter)
	if !ok || a.cfg.Uploader == nil {
		return fmt.Errorf("upload volume %s: this storage host cannot upload images", v.ID)
	}
	var img structs.SingleImageResponse
	err := a.cfg.RPC.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: up.ImageID,
		QueryOptions: structs.QueryOptions{Region: a.cfg.Region, AuthToken: a.cfg.NodeSecret}}, &img)
	switch {
	case err != nil:
		return fmt.Errorf("upload volume %s: read image %s: %w", v.ID, up.ImageID, err)
	case img.Image.Status == structs.ImageActive:
		a.log.Info("volume already uploaded", "volume_id", v.ID, "image_id", up.ImageID)
		return nil
	case img.Image.Status != structs.ImageQueued:
		return fmt.Errorf("upload volume %s: image %s is %s, not queued", v.ID, up.ImageID, img.Image.Status)
	}
	format := up.DiskFormat
	if f, ok := qemuFormats[format]; ok {
		format = f
	}
	if err := os.MkdirAll(a.cfg.WorkDir, 0o700); err != nil {
		return fmt.Errorf("upload volume %s: %w", v.ID, err)
	}
	dst := filepath.Join(a.cfg.WorkDir, "upload-"+safeID(v.ID)+"-"+safeID(up.ImageID)+"."+format)
	defer os.Remove(dst)
	if err := w.WriteVolumeImage(ctx, v, format, dst); err != nil {
		return fmt.Errorf("upload volume %s: %w", v.ID, err)
	}
	f, err := os.Open(dst)
	if err != nil {
		return fmt.Errorf("upload volume %s: %w", v.ID, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("upload volume %s: %w", v.ID, err)
	}
	a.log.Info("uploading a volume", "volume_id", v.ID, "image_id", up.ImageID, "format", up.DiskFormat, "bytes", st.Size())
	if err := a.cfg.Uploader.Upload(ctx, up.ImageID, st.Size(), f); err != nil {
		return fmt.Errorf("upload volume %s into image %s: %w", v.ID, up.ImageID, err)
	}
	return nil
}

// WriteVolumeImage converts the volume's file; -U reads it while an
// instance (or the NBD server of its attachment) holds it open.
func (p *FilePool) WriteVolumeImage(ctx context.Context, v *structs.Volume, format, dst string) error {
	src := p.VolumePath(v.ID)
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("volume file: %w", err)
	}
	tmp := dst + ".part"
	args := []string{"convert", "-q", "-U"}
	if v.Format != "" {
		args = append(args, "-f", v.Format)
	}
	if err := p.run(ctx, append(args, "-O", format, src, tmp)...); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// WriteVolumeImage reads the volume's RBD image through QEMU's rbd
// driver.
func (b *RBD) WriteVolumeImage(ctx context.Context, v *structs.Volume, format, dst string) error {
	tmp := dst + ".part"
	if err := b.run(ctx, b.qemuImg, "convert", "-q", "-f", "raw", "-O", format, b.qemuTarget(RBDVolumeImage(v.ID)), tmp); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}
