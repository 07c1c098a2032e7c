package cinder

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// typeList answers GET /types: every type for admins, the public ones
// and the private ones it was given access to for a project.
func (a *API) typeList(q *request) error {
	var out structs.VolumeTypeListResponse
	if err := q.call("Volume.TypeList", &structs.VolumeTypeListRequest{}, &out); err != nil {
		return err
	}
	list := []map[string]any{}
	for _, t := range out.Types {
		if q.isAdmin() || t.UsableBy(q.project()) {
			list = append(list, typeView(t))
		}
	}
	return q.json(http.StatusOK, map[string]any{"volume_types": list})
}

// typeShow answers GET /types/{id}; "default" is the default type; a
// private type the caller's project has no access to is not found.
func (a *API) typeShow(q *request) error {
	id := q.param("id")
	if id == "default" {
		id = structs.DefaultVolumeTypeID
	}
	var out structs.SingleVolumeTypeResponse
	if err := q.call("Volume.TypeGet", &structs.VolumeTypeSpecificRequest{TypeID: id}, &out); err != nil {
		return err
	}
	if !q.isAdmin() && !out.Type.UsableBy(q.project()) {
		return errorf(http.StatusNotFound, "Volume type %s could not be found.", q.param("id"))
	}
	return q.json(http.StatusOK, map[string]any{"volume_type": typeView(out.Type)})
}

// typeCreate answers POST /types (admins).
func (a *API) typeCreate(q *request) error {
	var body struct {
		Type *struct {
			Name        string            `json:"name"`
			Description string            `json:"description"`
			IsPublic    *bool             `json:"os-volume-type-access:is_public"`
			ExtraSpecs  map[string]string `json:"extra_specs"`
		} `json:"volume_type"`
	}
	if err := q.decode(&body); err != nil {
		return err
	}
	if body.Type == nil {
		return errorf(http.StatusBadRequest, "Missing required element 'volume_type' in request body.")
	}
	b := body.Type
	if b.Name == "" {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute name. Value: . '' is too short")
	}
	public := b.IsPublic == nil || *b.IsPublic
	var out structs.SingleVolumeTypeResponse
	err := q.call("Volume.TypeUpsert", &structs.VolumeTypeUpsertRequest{Type: &structs.VolumeType{Name: b.Name,
		Description: b.Description, IsPublic: public, ExtraSpecs: b.ExtraSpecs}}, &out)
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"volume_type": typeView(out.Type)})
}

// typeDelete answers DELETE /types/{id} (admins).
func (a *API) typeDelete(q *request) error {
	if err := q.call("Volume.TypeDelete", &structs.VolumeTypeDeleteRequest{TypeID: q.param("id")}, &structs.GenericResponse{}); err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}
