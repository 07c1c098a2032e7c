package cinder

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// getSnapshot reads one snapshot the caller may see.
func (q *request) getSnapshot(id string) (*structs.VolumeSnapshot, error) {
	var out structs.SingleVolumeSnapshotResponse
	if err := q.call("Volume.SnapshotGet", &structs.VolumeSnapshotSpecificRequest{SnapshotID: id, ProjectID: q.ownerScope()}, &out); err != nil {
		return nil, err
	}
	return out.Snapshot, nil
}

// updateSnapshotMetadata changes a snapshot's metadata and returns the
// result.
func (q *request) updateSnapshotMetadata(req *structs.VolumeSnapshotUpdateRequest) (map[string]string, error) {
	req.SnapshotID, req.ProjectID = q.param("id"), q.ownerScope()
	var out structs.SingleVolumeSnapshotResponse
	if err := q.call("Volume.SnapshotUpdate", req, &out); err != nil {
		return nil, err
	}
	return metadataOf(out.Snapshot.Metadata), nil
}

func snapshotMetadataNotFound(id, key string) error {
	return errorf(http.StatusNotFound, "Snapshot %s has no metadata with key %s.", id, key)
}

// snapshotMetadataShow answers GET /snapshots/{id}/metadata.
func (a *API) snapshotMetadataShow(q *request) error {
	s, err := q.getSnapshot(q.param("id"))
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"metadata": metadataOf(s.Metadata)})
}

// snapshotMetadataMerge answers POST /snapshots/{id}/metadata: the keys
// given are set, the others kept.
func (a *API) snapshotMetadataMerge(q *request) error {
	m, err := q.readMetadata()
	if err != nil {
		return err
	}
	all, err := q.updateSnapshotMetadata(&structs.VolumeSnapshotUpdateRequest{Metadata: m})
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"metadata": all})
}

// snapshotMetadataReplace answers PUT /snapshots/{id}/metadata: the
// metadata becomes what is given.
func (a *API) snapshotMetadataReplace(q *request) error {
	m, err := q.readMetadata()
	if err != nil {
		return err
	}
	all, err := q.updateSnapshotMetadata(&structs.VolumeSnapshotUpdateRequest{Metadata: m, ReplaceMetadata: true})
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"metadata": all})
}

// snapshotMetadataItemShow answers GET /snapshots/{id}/metadata/{key}.
func (a *API) snapshotMetadataItemShow(q *request) error {
	s, err := q.getSnapshot(q.param("id"))
	if err != nil {
		return err
	}
	key := q.param("key")
	val, ok := s.Metadata[key]
	if !ok {
		return snapshotMetadataNotFound(s.ID, key)
	}
	return q.json(http.StatusOK, map[string]any{"meta": map[string]string{key: val}})
}

// snapshotMetadataItemSet answers PUT /snapshots/{id}/metadata/{key}
// with {"meta": {key: value}}; Cinder checks the key before the count.
func (a *API) snapshotMetadataItemSet(q *request) error {
	var body struct {
		Meta map[string]string `json:"meta"`
	}
	if err := q.decode(&body); err != nil {
		return err
	}
	if body.Meta == nil {
		return errorf(http.StatusBadRequest, "Malformed request body")
	}
	key := q.param("key")
	val, ok := body.Meta[key]
	if !ok {
		return errorf(http.StatusBadRequest, "Request body and URI mismatch")
	}
	if len(body.Meta) > 1 {
		return errorf(http.StatusBadRequest, "Request body contains too many items")
	}
	if err := checkMetadata(body.Meta); err != nil {
		return err
	}
	if _, err := q.updateSnapshotMetadata(&structs.VolumeSnapshotUpdateRequest{Metadata: body.Meta}); err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"meta": map[string]string{key: val}})
}

// snapshotMetadataItemDelete answers DELETE
// /snapshots/{id}/metadata/{key}: 200 with no body.
func (a *API) snapshotMetadataItemDelete(q *request) error {
	s, err := q.getSnapshot(q.param("id"))
	if err != nil {
		return err
	}
	key := q.param("key")
	if _, ok := s.Metadata[key]; !ok {
		return snapshotMetadataNotFound(s.ID, key)
	}
	if _, err := q.updateSnapshotMetadata(&structs.VolumeSnapshotUpdateRequest{DeleteMetadata: []string{key}}); err != nil {
		return err
	}
	return q.empty(http.StatusOK)
}
