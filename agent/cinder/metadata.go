package cinder

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// metadataShow answers GET /volumes/{id}/metadata.
func (a *API) metadataShow(q *request) error {
	v, err := q.getVolume(q.param("id"))
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"metadata": metadataOf(v.Metadata)})
}

// readMetadata reads {"metadata": {…}}.
func (q *request) readMetadata() (map[string]string, error) {
	var body struct {
		Metadata map[string]string `json:"metadata"`
	}
	if err := q.decode(&body); err != nil {
		return nil, err
	}
	if body.Metadata == nil {
		return nil, errorf(http.StatusBadRequest, "Malformed request body")
	}
	return body.Metadata, checkMetadata(body.Metadata)
}

// updateMetadata changes a volume's metadata and returns the result.
func (q *request) updateMetadata(req *structs.VolumeUpdateRequest) (map[string]string, error) {
	req.VolumeID, req.ProjectID = q.param("id"), q.ownerScope()
	var out structs.SingleVolumeResponse
	if err := q.call("Volume.Update", req, &out); err != nil {
		return nil, err
	}
	return metadataOf(out.Volume.Metadata), nil
}

// metadataMerge answers POST /volumes/{id}/metadata: the keys given are
// set, the others kept.
func (a *API) metadataMerge(q *request) error {
	m, err := q.readMetadata()
	if err != nil {
		return err
	}
	all, err := q.updateMetadata(&structs.VolumeUpdateRequest{Metadata: m})
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"metadata": all})
}

// metadataReplace answers PUT /volumes/{id}/metadata: the metadata
// becomes what is given.
func (a *API) metadataReplace(q *request) error {
	m, err := q.readMetadata()
	if err != nil {
		return err
	}
	all, err := q.updateMetadata(&structs.VolumeUpdateRequest{Metadata: m, ReplaceMetadata: true})
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"metadata": all})
}

// metadataItemShow answers GET /volumes/{id}/metadata/{key}.
func (a *API) metadataItemShow(q *request) error {
	v, err := q.getVolume(q.param("id"))
	if err != nil {
		return err
	}
	val, ok := v.Metadata[q.param("key")]
	if !ok {
		return errorf(http.StatusNotFound, "Volume %s has no metadata with key %s.", v.ID, q.param("key"))
	}
	return q.json(http.StatusOK, map[string]any{"meta": map[string]string{q.param("key"): val}})
}

// metadataItemSet answers PUT /volumes/{id}/metadata/{key} with
// {"meta": {key: value}}.
func (a *API) metadataItemSet(q *request) error {
	var body struct {
		Meta map[string]string `json:"meta"`
	}
	if err := q.decode(&body); err != nil {
		return err
	}
	key := q.param("key")
	if len(body.Meta) != 1 {
		return errorf(http.StatusBadRequest, "Request body contains too many items.")
	}
	val, ok := body.Meta[key]
	if !ok {
		return errorf(http.StatusBadRequest, "Request body and URI mismatch")
	}
	if err := checkMetadata(body.Meta); err != nil {
		return err
	}
	if _, err := q.updateMetadata(&structs.VolumeUpdateRequest{Metadata: body.Meta}); err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"meta": map[string]string{key: val}})
}

// metadataItemDelete answers DELETE /volumes/{id}/metadata/{key}.
func (a *API) metadataItemDelete(q *request) error {
	v, err := q.getVolume(q.param("id"))
	if err != nil {
		return err
	}
	key := q.param("key")
	if _, ok := v.Metadata[key]; !ok {
		return errorf(http.StatusNotFound, "Volume %s has no metadata with key %s.", v.ID, key)
	}
	if _, err := q.updateMetadata(&structs.VolumeUpdateRequest{DeleteMetadata: []string{key}}); err != nil {
		return err
	}
	return q.empty(http.StatusOK)
}
