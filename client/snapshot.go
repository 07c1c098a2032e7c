package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// snapshot carries out an ActionSnapshot (createImage, createBackup):
// the driver copies the root disk to a file, which is streamed to the
// servers as the data of the queued image the action names; the image
// is then active. A backup then deletes the instance's oldest backups of
// its type beyond the rotation. A snapshot that fails deletes its image,
// as Nova does. Repeating it after a restart is safe: an image already
// active is not uploaded again.
func (r *runner) snapshot() error {
	arg, err := structs.ParseSnapshotArg(r.alloc.ActionArg)
	if err != nil {
		return err
	}
	err = r.snapshotTo(arg)
	if err != nil && r.c.ctx.Err() == nil {
		var reply structs.GenericResponse
		if derr := r.c.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: arg.ImageID}, &reply); derr != nil &&
			structs.KindOf(derr) != structs.KindNotFound {
			r.logger.Warn("cannot delete the image of a failed snapshot", "image_id", arg.ImageID, "error", derr)
		}
	}
	return err
}

func (r *runner) snapshotTo(arg structs.SnapshotArg) error {
	ctx, d, id := r.c.ctx, r.c.driver, r.alloc.InstanceID
	sn, err := optional[virt.Snapshotter](d, d.Capabilities().Snapshot, structs.HostCapabilitySnapshot)
	if err != nil {
		return err
	}
	if r.c.cfg.ImageUploader == nil {
		return errors.New("this agent cannot upload images")
	}
	img, err := r.c.imageRecord(arg.ImageID)
	switch {
	case err != nil:
		return err
	case img == nil:
		return fmt.Errorf("image %s was deleted before its snapshot was taken", arg.ImageID)
	case img.Status == structs.ImageActive:
		r.logger.Info("snapshot already uploaded", "image_id", img.ID)
		return r.rotateBackups(arg, img)
	}
	r.logger.Info("taking a snapshot", "image_id", img.ID)
	path, err := sn.Snapshot(ctx, id, img.ID)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	body, size, err := r.snapshotData(path)
	if err != nil {
		return err
	}
	defer body.Close()
	defer os.Remove(path)
	r.snapshotProgress(structs.TaskImagePendingUpload)
	r.snapshotProgress(structs.TaskImageUploading)
	r.logger.Info("uploading the snapshot", "image_id", img.ID, "bytes", size)
	if err := r.c.cfg.ImageUploader.Upload(ctx, img.ID, size, body); err != nil {
		return fmt.Errorf("upload the snapshot: %w", err)
	}
	r.logger.Info("snapshot uploaded", "image_id", img.ID, "bytes", size)
	return r.rotateBackups(arg, img)
}

// snapshotProgress reports the snapshot's step, for its instance's
// task_state. It is a courtesy: a failure is logged, and the snapshot
// goes on.
func (r *runner) snapshotProgress(taskState string) {
	a := r.alloc
	var reply structs.GenericResponse
	err := r.c.call("Instance.SnapshotProgress", &structs.SnapshotProgressRequest{InstanceID: a.InstanceID, AllocID: a.ID,
		ActionSeq: a.ActionSeq, TaskState: taskState, WriteRequest: r.c.writeRequest()}, &reply)
	if err != nil && r.c.ctx.Err() == nil {
		r.logger.Warn("cannot report the snapshot's progress", "task_state", taskState, "error", err)
	}
}

// snapshotData opens the snapshot file the driver wrote. The fake
// driver writes none (its guests have no disks): its snapshot is an
// empty qcow2 disk of the instance's root disk size.
func (r *runner) snapshotData(path string) (io.ReadCloser, int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && r.c.driver.Name() == "fake" {
		root := int64(1)
		if r.inst != nil && r.inst.Flavor != nil && r.inst.Flavor.RootGB > 0 {
			root = int64(r.inst.Flavor.RootGB)
		}
		data := imagestore.EmptyQCOW2(root << 30)
		return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("open the snapshot: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("open the snapshot: %w", err)
	}
	return f, st.Size(), nil
}

// rotateBackups keeps the newest arg.Rotation backups of the instance
// with img's backup_type and deletes the others, as Nova's backup
// rotation does. It does nothing for a plain snapshot.
func (r *runner) rotateBackups(arg structs.SnapshotArg, img *structs.Image) error {
	if !arg.Backup {
		return nil
	}
	var list structs.ImageListResponse
	if err := r.c.call("Image.List", &structs.ImageListRequest{}, &list); err != nil {
		return fmt.Errorf("backup rotation: %w", err)
	}
	backups := backupsOf(list.Images, r.alloc.InstanceID, img.Properties[structs.ImagePropBackupType])
	for i, b := range backups {
		if i < arg.Rotation || b.ID == img.ID && arg.Rotation > 0 {
			continue
		}
		r.logger.Info("backup rotation: deleting an old backup", "image_id", b.ID, "rotation", arg.Rotation)
		var reply structs.GenericResponse
		err := r.c.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: b.ID}, &reply)
		if err != nil && structs.KindOf(err) != structs.KindNotFound {
			return fmt.Errorf("backup rotation: delete image %s: %w", b.ID, err)
		}
	}
	return nil
}

// backupsOf returns the backups of an instance with a backup type among
// images, newest first (Nova's rotation order).
func backupsOf(images []*structs.Image, instanceID, backupType string) []*structs.Image {
	var out []*structs.Image
	for _, im := range images {
		p := im.Properties
		if p[structs.ImagePropImageType] == structs.ImageTypeBackup && p[structs.ImagePropInstanceID] == instanceID &&
			p[structs.ImagePropBackupType] == backupType && im.Status != structs.ImageDeleted {
			out = append(out, im)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedAt != out[j].CreatedAt {
			return out[i].CreatedAt > out[j].CreatedAt
		}
		return out[i].ID > out[j].ID
	})
	return out
}
