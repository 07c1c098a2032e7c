package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// An unshelve of an offloaded instance restores its root disk from the
// shelve's snapshot (Allocation.RestoreImageID): the image comes through
// the image cache like any image, and a full copy of it becomes the root
// disk, so nothing depends on the image once the instance runs; then the
// image is deleted, as Nova's compute deletes it after an unshelve.

var qcow2Magic = []byte{'Q', 'F', 'I', 0xfb}

// restoredDisks returns the root disk an unshelve builds from the
// shelve's snapshot, or nil when there is none to restore: no snapshot,
// or a driver or agent that builds disks from no image data (the fake),
// which then builds from the instance's image as before.
func (r *runner) restoredDisks(imageID string) ([]virt.ImportedDisk, error) {
	if _, ok := r.c.driver.(virt.DiskMover); !ok || r.c.cfg.ImageFiles == nil {
		r.logger.Warn("this host cannot restore the shelve's snapshot; building from the instance's image", "image_id", imageID)
		return nil, nil
	}
	src, err := r.c.imagePath(imageID)
	if err != nil {
		return nil, fmt.Errorf("the shelve's snapshot image %s: %w", imageID, err)
	}
	if src == "" {
		return nil, fmt.Errorf("the shelve's snapshot image %s is gone or has no data", imageID)
	}
	format, err := diskFormat(src)
	if err != nil {
		return nil, err
	}
	dir := r.c.stagingDir(r.allocID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	dst := filepath.Join(dir, virt.DiskRoleRoot)
	if err := copyThrough(src, dst); err != nil {
		return nil, fmt.Errorf("copy the shelve's snapshot: %w", err)
	}
	return []virt.ImportedDisk{{Role: virt.DiskRoleRoot, Format: format, Path: dst}}, nil
}

// diskFormat reads a disk file's format from its header.
func diskFormat(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	hdr := make([]byte, 4)
	if _, err := io.ReadFull(f, hdr); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if bytes.Equal(hdr, qcow2Magic) {
		return "qcow2", nil
	}
	return "raw", nil
}

// copyThrough copies src to dst through dst.part, renamed into place.
func copyThrough(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	part := dst + ".part"
	out, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(part, dst)
}

// dropRestoredImage deletes the shelve's snapshot once the instance runs
// from its copy.
func (r *runner) dropRestoredImage(imageID string) {
	var reply structs.GenericResponse
	err := r.c.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: imageID}, &reply)
	if err != nil && structs.KindOf(err) != structs.KindNotFound && r.c.ctx.Err() == nil {
		r.logger.Warn("cannot delete the shelve's snapshot image", "image_id", imageID, "error", err)
		return
	}
	r.logger.Info("deleted the shelve's snapshot image", "image_id", imageID)
}
