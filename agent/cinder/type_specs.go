package cinder

import (
	"maps"
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// A volume type's extra specs (Cinder's os-types-extra-specs): what
// `openstack volume type create --property` and `volume type set
// --property` send. volume_backend_name among them chooses the storage
// hosts the type's volumes are placed on.

// typeOf reads the type of the path's {id}.
func typeOf(q *request) (*structs.VolumeType, error) {
	var out structs.SingleVolumeTypeResponse
	if err := q.call("Volume.TypeGet", &structs.VolumeTypeSpecificRequest{TypeID: q.param("id")}, &out); err != nil {
		return nil, err
	}
	return out.Type, nil
}

// typeSpecsList answers GET /types/{id}/extra_specs.
func (a *API) typeSpecsList(q *request) error {
	t, err := typeOf(q)
	if err != nil {
		return err
	}
	specs := map[string]string{}
	maps.Copy(specs, t.ExtraSpecs)
	return q.json(http.StatusOK, map[string]any{"extra_specs": specs})
}

// typeSpecsSet answers POST /types/{id}/extra_specs (admins): the
// given keys are set, the others kept.
func (a *API) typeSpecsSet(q *request) error {
	var body struct {
		Specs map[string]string `json:"extra_specs"`
	}
	if err := q.decode(&body); err != nil {
		return err
	}
	if body.Specs == nil {
		return errorf(http.StatusBadRequest, "Missing required element 'extra_specs' in request body.")
	}
	for k, v := range body.Specs {
		if k == "" || len(k) > 255 || len(v) > 255 {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute extra_specs. Value: %s. Keys and values must be 1 to 255 characters", k)
		}
	}
	t, err := typeOf(q)
	if err != nil {
		return err
	}
	c := *t
	c.ExtraSpecs = maps.Clone(t.ExtraSpecs)
	if c.ExtraSpecs == nil {
		c.ExtraSpecs = map[string]string{}
	}
	maps.Copy(c.ExtraSpecs, body.Specs)
	if err := q.call("Volume.TypeUpsert", &structs.VolumeTypeUpsertRequest{Type: &c}, &structs.SingleVolumeTypeResponse{}); err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"extra_specs": body.Specs})
}

// typeSpecShow answers GET /types/{id}/extra_specs/{key}.
func (a *API) typeSpecShow(q *request) error {
	t, err := typeOf(q)
	if err != nil {
		return err
	}
	key := q.param("key")
	v, ok := t.ExtraSpecs[key]
	if !ok {
		return errorf(http.StatusNotFound, "Volume Type %s has no extra specs with key %s.", t.ID, key)
	}
	return q.json(http.StatusOK, map[string]string{key: v})
}

// typeSpecDelete answers DELETE /types/{id}/extra_specs/{key} (admins).
func (a *API) typeSpecDelete(q *request) error {
	t, err := typeOf(q)
	if err != nil {
		return err
	}
	key := q.param("key")
	if _, ok := t.ExtraSpecs[key]; !ok {
		return errorf(http.StatusNotFound, "Volume Type %s has no extra specs with key %s.", t.ID, key)
	}
	c := *t
	c.ExtraSpecs = maps.Clone(t.ExtraSpecs)
	delete(c.ExtraSpecs, key)
	if err := q.call("Volume.TypeUpsert", &structs.VolumeTypeUpsertRequest{Type: &c}, &structs.SingleVolumeTypeResponse{}); err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}
