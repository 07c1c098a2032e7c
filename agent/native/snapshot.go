package native

import (
	"maps"
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// instanceSnapshotBody is the body of POST /v1/instances/{id}/snapshot.
type instanceSnapshotBody struct {
	// Name is the new image's name; required.
	Name string
	// BackupType, when set, makes the snapshot a backup of that type
	// (Nova's createBackup), and Rotation how many of the instance's
	// backups of that type to keep.
	BackupType string
	Rotation   int
	// Properties are added to the image's properties.
	Properties map[string]string
}

// instanceSnapshotJSON answers POST /v1/instances/{id}/snapshot: the
// queued image that receives the snapshot (active once the instance's
// agent uploaded it), the instance action that records it, and the
// instance in its image_snapshot task.
type instanceSnapshotJSON struct {
	ImageID   string
	RequestID string
	Instance  *Instance
}

// instanceSnapshot snapshots an instance into a new image, as the Nova
// API's createImage and createBackup do.
func (a *API) instanceSnapshot(w http.ResponseWriter, q *request) (any, error) {
	var body instanceSnapshotBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	name := strings.TrimSpace(body.Name)
	switch {
	case name == "" || len(name) > 255:
		return nil, structs.Errorf(structs.KindInvalid, "a Name of 1 to 255 characters is required")
	case body.Rotation < 0:
		return nil, structs.Errorf(structs.KindInvalid, "Rotation must not be negative")
	case body.Rotation > 0 && body.BackupType == "":
		return nil, structs.Errorf(structs.KindInvalid, "Rotation applies to backups only: set BackupType")
	}
	get := structs.InstanceSpecificRequest{InstanceID: q.param("id")}
	var found structs.SingleInstanceResponse
	if err := q.rpc.RPC("Instance.Get", &get, &found); err != nil {
		return nil, err
	}
	if found.Instance == nil {
		return nil, notFound("instance", get.InstanceID)
	}
	inst := found.Instance
	props := maps.Clone(body.Properties)
	if props == nil {
		props = map[string]string{}
	}
	op := structs.OpCreateImage
	props[structs.ImagePropImageType] = structs.ImageTypeSnapshot
	if body.BackupType != "" {
		op = structs.OpCreateBackup
		props[structs.ImagePropImageType] = structs.ImageTypeBackup
		props[structs.ImagePropBackupType] = body.BackupType
	}
	create := structs.ImageCreateRequest{Image: structs.SnapshotImage(inst, name, "", props)}
	var created structs.SingleImageResponse
	if err := q.rpc.RPC("Image.Create", &create, &created); err != nil {
		return nil, err
	}
	task := &structs.InstanceTaskRequest{InstanceID: inst.ID, Op: op, ImageID: created.Image.ID, Rotation: body.Rotation}
	task.ProjectID, task.UserID, task.Admin = q.caller()
	out, err := a.submitTask(q, task)
	imageID := created.Image.ID
	if err != nil || out.ImageID != "" && out.ImageID != imageID {
		// Refused, or a retry (same Idempotency-Key) of a snapshot that
		// started before: the image made for this request gets no data.
		del := structs.ImageDeleteRequest{ImageID: imageID}
		var gone structs.GenericResponse
		_ = q.rpc.RPC("Image.Delete", &del, &gone)
		if err != nil {
			return nil, err
		}
		imageID = out.ImageID
	}
	setIndex(w, out.Index)
	resp := &instanceSnapshotJSON{ImageID: imageID, RequestID: out.RequestID}
	if out.Instance != nil {
		resp.Instance = newInstance(out.Instance)
	}
	return resp, nil
}
