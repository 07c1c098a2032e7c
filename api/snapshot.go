package api

import (
	"net/http"
	"net/url"
)

// SnapshotOptions describe the image a snapshot creates.
type SnapshotOptions struct {
	// Name is the new image's name; required.
	Name string
	// BackupType, when set, makes the snapshot a backup of that type
	// ("daily", "weekly", …) and Rotation how many of the instance's
	// backups of that type the servers keep, deleting older ones.
	BackupType string `json:",omitempty"`
	Rotation   int    `json:",omitempty"`
	// Properties are added to the image's properties.
	Properties map[string]string `json:",omitempty"`
}

// SnapshotResult is the answer of Snapshot.
type SnapshotResult struct {
	// ImageID is the new image: queued until the instance's agent has
	// uploaded the snapshot, then active.
	ImageID string
	// RequestID names the InstanceAction that records the snapshot.
	RequestID string
	// Instance is the instance in its image_snapshot task.
	Instance *Instance
}

// Snapshot copies an instance's root disk into a new image (Nova's
// createImage, or createBackup with a BackupType). The servers carry it
// out asynchronously, as Perform's operations.
func (i *Instances) Snapshot(id string, opts *SnapshotOptions) (*SnapshotResult, *WriteMeta, error) {
	var out SnapshotResult
	wm, err := i.c.write(http.MethodPost, "/v1/instances/"+url.PathEscape(id)+"/snapshot", nil, opts, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// The snapshot operations, as InstanceAction.Action and Task.Op name
// them; start them with Snapshot.
const (
	OpCreateImage  = "createImage"
	OpCreateBackup = "createBackup"
)
