package ec2

import (
	"encoding/xml"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// createImage answers CreateImage as the Compute API's createImage:
// a queued snapshot image owned by the project, then Instance.Task
// create_image, whose host uploads the data; the image is pending until
// then. NoReboot is accepted: Stratus snapshots without a reboot.
func createImage(q *request) error {
	id, err := q.required("InstanceId")
	if err != nil {
		return err
	}
	name, err := q.required("Name")
	if err != nil {
		return err
	}
	insts, err := q.resolveInstances([]string{id})
	if err != nil {
		return err
	}
	inst := insts[0]
	props := map[string]string{structs.ImagePropImageType: structs.ImageTypeSnapshot}
	if d := q.params.Get("Description"); d != "" {
		props["description"] = d
	}
	img := structs.SnapshotImage(inst, name, q.caller.UserID, props)
	var created structs.SingleImageResponse
	if err := q.call("Image.Create", &structs.ImageCreateRequest{Image: img}, &created); err != nil {
		return err
	}
	imgID := created.Image.ID
	args := &structs.InstanceTaskRequest{InstanceID: inst.ID, Op: structs.OpCreateImage, ImageID: imgID,
		ProjectID: q.caller.ProjectID, UserID: q.caller.UserID, IdempotencyKey: retry.NewKey()}
	err = retry.DoFor(q.r.Context(), q.api.writeRetry, func(bool) error {
		args.Forwarded = false
		return q.call("Instance.Task", args, &structs.InstanceTaskResponse{})
	})
	if err != nil {
		// Refused: the image made for it gets no data.
		_ = q.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: imgID}, &structs.GenericResponse{})
		return err
	}
	return q.reply(&createImageResponse{ImageID: imageID(imgID)})
}

// deregisterImage answers DeregisterImage: the image is deleted
// (Image.Delete), as EC2's deregistration ends its use.
func deregisterImage(q *request) error {
	id, err := q.required("ImageId")
	if err != nil {
		return err
	}
	uuid, err := q.resolveImage(id)
	if err != nil {
		return err
	}
	if err := q.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: uuid}, &structs.GenericResponse{}); err != nil {
		return err
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "DeregisterImageResponse"}, Return: true})
}

type createImageResponse struct {
	XMLName xml.Name `xml:"CreateImageResponse"`
	meta
	ImageID string `xml:"imageId"`
}
