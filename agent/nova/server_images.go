package nova

import (
	"maps"
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// Nova's policy rules of the snapshot actions.
const (
	createImageRule  = serverRule + "create_image"
	createBackupRule = "os_compute_api:os-create-backup"
)

func init() {
	serverActions["createImage"] = &serverActionSpec{rule: createImageRule,
		schema: func(int) *schema { return createImageSchema }, do: actCreateImage}
	serverActions["createBackup"] = &serverActionSpec{rule: createBackupRule,
		schema: func(int) *schema { return createBackupSchema }, do: actCreateBackup}
}

var (
	createImageSchema = &schema{types: tObject, required: []string{"name"}, props: map[string]*schema{
		"name":     nameSchema,
		"metadata": metadataSchema,
	}}
	createBackupSchema = &schema{types: tObject, required: []string{"name", "backup_type", "rotation"}, props: map[string]*schema{
		"name":        nameSchema,
		"backup_type": {types: tString},
		"rotation":    nonNegativeInt,
		"metadata":    metadataSchema,
	}}
)

// actCreateImage snapshots the server into a new image (Nova's
// createImage): 202 with the image's Location, or with its id in the
// body from 2.45.
func actCreateImage(q *request, inst *structs.Instance, arg any) (*reply, error) {
	in := arg.(map[string]any)
	name, _ := stringOf(in, "name")
	meta, _ := in["metadata"].(map[string]any)
	props := map[string]string{structs.ImagePropImageType: structs.ImageTypeSnapshot}
	maps.Copy(props, stringMap(meta))
	return q.snapshotServer(inst, "createImage", structs.OpCreateImage, name, props, 0)
}

// actCreateBackup snapshots the server as a backup of a type, keeping
// the newest `rotation` backups of that type (Nova's createBackup).
func actCreateBackup(q *request, inst *structs.Instance, arg any) (*reply, error) {
	in := arg.(map[string]any)
	name, _ := stringOf(in, "name")
	backupType, _ := stringOf(in, "backup_type")
	meta, _ := in["metadata"].(map[string]any)
	props := stringMap(meta)
	if props == nil {
		props = map[string]string{}
	}
	props[structs.ImagePropImageType] = structs.ImageTypeBackup
	props[structs.ImagePropBackupType] = backupType
	return q.snapshotServer(inst, "createBackup", structs.OpCreateBackup, name, props, int(intOf(in["rotation"])))
}

// snapshotServer creates the queued image, owned by the caller's
// project, with the server's image properties and Nova's snapshot
// properties, then starts the snapshot; the server's agent uploads the
// data. If the servers refuse the snapshot the image is deleted again.
func (q *request) snapshotServer(inst *structs.Instance, action, op, name string, props map[string]string, rotation int) (*reply, error) {
	img := structs.SnapshotImage(inst, name, q.token.UserID, props)
	var created structs.SingleImageResponse
	if err := q.call("Image.Create", &structs.ImageCreateRequest{Image: img}, &created); err != nil {
		return nil, err
	}
	id := created.Image.ID
	task, err := q.runTask(inst, action, op, func(r *structs.InstanceTaskRequest) { r.ImageID, r.Rotation = id, rotation })
	if err != nil || task.ImageID != "" && task.ImageID != id {
		// Refused, or a retry (same Idempotency-Key) of a snapshot that
		// started before: the image made for this request gets no data.
		var gone structs.GenericResponse
		_ = q.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: id}, &gone)
		if err != nil {
			return nil, err
		}
		id = task.ImageID
	}
	if q.atLeast(45) {
		return acceptedReply(map[string]any{"image_id": id})
	}
	out, _ := acceptedReply(nil)
	if op == structs.OpCreateImage || rotation > 0 {
		// Nova names no image for a backup of rotation 0, which the
		// rotation deletes at once.
		out.header = http.Header{"Location": {strings.TrimSuffix(q.base, MountPath) + "/image/v2/images/" + id}}
	}
	return out, nil
}
