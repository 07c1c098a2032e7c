package cinder

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// moreVolumeActions answers the volume actions of this file and of
// volume_retype.go; ok is false for another action.
func (q *request) moreVolumeActions(name string, raw json.RawMessage) (bool, error) {
	switch name {
	case "os-volume_upload_image":
		return true, q.uploadImage(raw)
	case "os-retype":
		return true, q.retype(raw)
	}
	return false, nil
}

// mvUploadImageParams is 3.1: visibility and protected in
// os-volume_upload_image.
const mvUploadImageParams = 1

// uploadParams is os-volume_upload_image's body, checked as Cinder's
// schema checks it.
type uploadParams struct {
	name, diskFormat, containerFormat, visibility string
	force, protected                              bool
}

// cinderBool reads a parameter_types.boolean: a JSON boolean or one of
// the strings Cinder's schema lists.
func cinderBool(field string, raw json.RawMessage) (bool, error) {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "True", "TRUE", "true", "1", "ON", "On", "on", "YES", "Yes", "yes", "y", "t":
			return true, nil
		case "False", "FALSE", "false", "0", "OFF", "Off", "off", "NO", "No", "no", "n", "f":
			return false, nil
		}
	}
	return false, errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. %s is not one of the allowed boolean values", field, raw, raw)
}

// jsonString reads a string field of at most max characters (min 1
// when nonEmpty).
func jsonString(field string, raw json.RawMessage, nonEmpty bool, max int) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. %s is not of type 'string'", field, raw, raw)
	}
	if nonEmpty && s == "" {
		return "", errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. '%s' is too short", field, s, s)
	}
	if len(s) > max {
		return "", errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. '%s' is too long", field, s, s)
	}
	return s, nil
}

// readUploadParams checks the body: image_name required, disk_format
// and (from 3.1) visibility from Cinder's enums, no other key.
func (q *request) readUploadParams(raw json.RawMessage) (*uploadParams, error) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil || body == nil {
		return nil, errorf(http.StatusBadRequest, "Invalid input for field/attribute os-volume_upload_image. Value: %s. %s is not of type 'object'", raw, raw)
	}
	allowed := []string{"image_name", "force", "disk_format", "container_format"}
	if q.at(mvUploadImageParams) {
		allowed = append(allowed, "visibility", "protected")
	}
	for k := range body {
		if !slices.Contains(allowed, k) {
			return nil, errorf(http.StatusBadRequest, "Invalid input for field/attribute os-volume_upload_image. Value: %s. Additional properties are not allowed ('%s' was unexpected)", raw, k)
		}
	}
	if body["image_name"] == nil {
		return nil, errorf(http.StatusBadRequest, "Invalid input for field/attribute os-volume_upload_image. Value: %s. 'image_name' is a required property", raw)
	}
	p := &uploadParams{diskFormat: "raw", containerFormat: "bare"}
	var err error
	if p.name, err = jsonString("image_name", body["image_name"], true, 255); err != nil {
		return nil, err
	}
	if r := body["disk_format"]; r != nil {
		if p.diskFormat, err = jsonString("disk_format", r, false, 255); err != nil {
			return nil, err
		}
		if !slices.Contains(structs.VolumeUploadDiskFormats, p.diskFormat) {
			return nil, errorf(http.StatusBadRequest, "Invalid input for field/attribute disk_format. Value: %s. '%s' is not one of ['%s']",
				p.diskFormat, p.diskFormat, strings.Join(structs.VolumeUploadDiskFormats, "', '"))
		}
	}
	if r := body["container_format"]; r != nil && string(r) != "null" {
		if p.containerFormat, err = jsonString("container_format", r, false, 255); err != nil {
			return nil, err
		}
	}
	if r := body["force"]; r != nil {
		if p.force, err = cinderBool("force", r); err != nil {
			return nil, err
		}
	}
	if r := body["protected"]; r != nil {
		if p.protected, err = cinderBool("protected", r); err != nil {
			return nil, err
		}
	}
	if q.at(mvUploadImageParams) {
		p.visibility = structs.ImagePrivate
	}
	if r := body["visibility"]; r != nil {
		if p.visibility, err = jsonString("visibility", r, false, 255); err != nil {
			return nil, err
		}
		if !slices.Contains([]string{"community", "public", "private", "shared"}, p.visibility) {
			return nil, errorf(http.StatusBadRequest, "Invalid input for field/attribute visibility. Value: %s. '%s' is not one of ['community', 'public', 'private', 'shared']", p.visibility, p.visibility)
		}
	}
	return p, nil
}

// uploadImage answers os-volume_upload_image: a queued image is created
// in the Image service as the caller, the volume goes to uploading and
// its storage host fills the image, then puts the volume back. Cinder's
// 202 body describes both. An image whose upload cannot start is
// deleted, as Cinder rolls back.
func (q *request) uploadImage(raw json.RawMessage) error {
	p, err := q.readUploadParams(raw)
	if err != nil {
		return err
	}
	v, err := q.getVolume(q.param("id"))
	if err != nil {
		return err
	}
	if p.visibility == structs.ImagePublic && !q.isAdmin() {
		return errorf(http.StatusForbidden, "Policy doesn't allow volume_extension:volume_actions:upload_public to be performed.")
	}
	if v.Status != structs.VolumeAvailable && !(p.force && v.Status == structs.VolumeInUse) {
		statuses := "available"
		if p.force {
			statuses = "available or in-use"
		}
		return errorf(http.StatusBadRequest, "Invalid volume: Volume %s status must be %s", v.ID, statuses)
	}
	img := &structs.Image{Name: p.name, DiskFormat: p.diskFormat, ContainerFormat: p.containerFormat,
		Visibility: p.visibility, Protected: p.protected, Owner: q.project()}
	var created structs.SingleImageResponse
	if err := q.call("Image.Create", &structs.ImageCreateRequest{Image: img}, &created); err != nil {
		return err
	}
	img = created.Image
	var out structs.SingleVolumeResponse
	err = q.call("Volume.UploadImage", &structs.VolumeUploadImageRequest{VolumeID: v.ID, ProjectID: q.ownerScope(),
		ImageID: img.ID, DiskFormat: p.diskFormat, Force: p.force}, &out)
	if err != nil {
		if derr := q.call("Image.Delete", &structs.ImageDeleteRequest{ImageID: img.ID}, &structs.GenericResponse{}); derr != nil {
			return fmt.Errorf("%w (and the image %s it made could not be deleted: %v)", err, img.ID, derr)
		}
		return err
	}
	return q.json(http.StatusAccepted, map[string]any{"os-volume_upload_image": q.uploadView(out.Volume, img)})
}

// uploadView is Cinder's copy_volume_to_image answer.
func (q *request) uploadView(v *structs.Volume, img *structs.Image) map[string]any {
	var volumeType any
	if types, err := q.volumeTypes(); err == nil && types[v.VolumeTypeID] != nil {
		volumeType = typeView(types[v.VolumeTypeID])
	}
	return map[string]any{"id": v.ID, "updated_at": timeOf(v.UpdatedAt), "status": structs.VolumeUploading,
		"display_description": orNil(v.Description), "size": v.SizeGB, "volume_type": volumeType,
		"image_id": img.ID, "container_format": img.ContainerFormat, "disk_format": img.DiskFormat,
		"image_name": img.Name, "protected": img.Protected, "visibility": img.Visibility}
}
