package structs

import (
	"fmt"
	"strconv"
	"strings"
)

// Snapshot operations (Nova's createImage and createBackup server
// actions): the instance's agent copies its root disk with the driver's
// Snapshotter and uploads it as the data of an image the API created
// queued beforehand.
const (
	OpCreateImage  = "createImage"
	OpCreateBackup = "createBackup"
	// ActionSnapshot asks the agent for the copy and upload; its
	// argument (SnapshotArg) names the image.
	ActionSnapshot = "snapshot"
)

// Task states of a snapshot, as Nova names them.
const (
	TaskImageSnapshot      = "image_snapshot"
	TaskImageBackup        = "image_backup"
	TaskImagePendingUpload = "image_pending_upload"
	TaskImageUploading     = "image_uploading"
)

// Image properties a snapshot's image carries, as Nova sets them.
const (
	ImagePropImageType   = "image_type" // "snapshot" or "backup"
	ImagePropInstanceID  = "instance_uuid"
	ImagePropBaseImage   = "base_image_ref"
	ImagePropBackupType  = "backup_type"
	ImagePropOwnerUserID = "user_id"
	ImageTypeSnapshot    = "snapshot"
	ImageTypeBackup      = "backup"
)

// SnapshotArg is what an ActionSnapshot asks of the agent.
type SnapshotArg struct {
	// ImageID is the queued image that receives the data.
	ImageID string
	// Rotation, for a backup (Rotation >= 0 and Backup set), is how many
	// backups of the image's backup_type to keep for the instance once
	// this one is active; older ones are deleted.
	Backup   bool
	Rotation int
}

// String encodes the argument for Allocation.ActionArg: the image id,
// followed by ";rotation=N" for a backup.
func (a SnapshotArg) String() string {
	if !a.Backup {
		return a.ImageID
	}
	return a.ImageID + ";rotation=" + strconv.Itoa(a.Rotation)
}

// ParseSnapshotArg decodes Allocation.ActionArg of an ActionSnapshot.
func ParseSnapshotArg(s string) (SnapshotArg, error) {
	id, rest, backup := strings.Cut(s, ";")
	if id == "" {
		return SnapshotArg{}, fmt.Errorf("snapshot argument %q names no image", s)
	}
	arg := SnapshotArg{ImageID: id}
	if !backup {
		return arg, nil
	}
	n, ok := strings.CutPrefix(rest, "rotation=")
	r, err := strconv.Atoi(n)
	if !ok || err != nil || r < 0 {
		return SnapshotArg{}, fmt.Errorf("snapshot argument %q: bad rotation", s)
	}
	arg.Backup, arg.Rotation = true, r
	return arg, nil
}

// SnapshotImage is the queued image record a snapshot of inst fills, as
// Nova builds it: private, owned by the instance's project, qcow2, with
// the instance's image properties (Stratus' own stratus_* ones and an
// earlier backup's markers left out), props on top, and the snapshot's
// instance_uuid, user_id and base_image_ref.
func SnapshotImage(inst *Instance, name, userID string, props map[string]string) *Image {
	all := map[string]string{}
	for k, v := range inst.ImageProperties {
		if !strings.HasPrefix(k, "stratus_") && k != ImagePropBackupType && k != ImagePropImageType {
			all[k] = v
		}
	}
	for k, v := range props {
		all[k] = v
	}
	all[ImagePropInstanceID] = inst.ID
	if userID != "" {
		all[ImagePropOwnerUserID] = userID
	}
	if inst.ImageID != "" {
		all[ImagePropBaseImage] = inst.ImageID
	}
	img := &Image{Name: name, Visibility: ImagePrivate, Owner: inst.ProjectID,
		DiskFormat: "qcow2", ContainerFormat: "bare", Properties: all}
	if inst.Flavor != nil {
		img.MinDisk = inst.Flavor.RootGB
	}
	return img
}

// SnapshotProgressRequest is an agent's word that a snapshot reached a
// step: TaskImagePendingUpload once the disk is copied,
// TaskImageUploading while its data goes to the servers. It names the
// allocation and the ActionSeq of the snapshot's action, so a late or
// repeated report of an earlier snapshot changes nothing.
type SnapshotProgressRequest struct {
	InstanceID string
	AllocID    string
	ActionSeq  uint64
	TaskState  string
	WriteRequest
}

// SnapshotProgressEntry records a SnapshotProgressRequest.
type SnapshotProgressEntry struct {
	InstanceID string
	AllocID    string
	ActionSeq  uint64
	TaskState  string
}
