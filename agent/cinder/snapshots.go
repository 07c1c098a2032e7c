package cinder

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/stratus-cloud/stratus/structs"
)

// listSnapshots reads the snapshots the query asks for, filtered by
// name, status, volume_id and metadata, in the order it asks (newest
// first by default).
func (q *request) listSnapshots() ([]*structs.VolumeSnapshot, error) {
	keys, err := q.sortParams(q.snapshotSortName)
	if err != nil {
		return nil, err
	}
	var out structs.VolumeSnapshotListResponse
	if err := q.call("Volume.SnapshotList", &structs.VolumeSnapshotListRequest{ProjectID: q.listProject()}, &out); err != nil {
		return nil, err
	}
	qs := q.r.URL.Query()
	var meta map[string]string
	if m := qs.Get("metadata"); m != "" {
		if err := json.Unmarshal([]byte(m), &meta); err != nil {
			return nil, errorf(http.StatusBadRequest, "Invalid input received: metadata filter %q is not a JSON object of strings", m)
		}
	}
	var snaps []*structs.VolumeSnapshot
	for _, s := range out.Snapshots {
		if (qs.Get("name") != "" && s.Name != qs.Get("name")) || (qs.Get("status") != "" && s.Status != qs.Get("status")) ||
			(qs.Get("volume_id") != "" && s.VolumeID != qs.Get("volume_id")) {
			continue
		}
		match := true
		for k, want := range meta {
			if got, ok := s.Metadata[k]; !ok || got != want {
				match = false
			}
		}
		if match {
			snaps = append(snaps, s)
		}
	}
	if err := sortBy(snaps, keys, snapshotColumns); err != nil {
		return nil, err
	}
	return paginate(snaps, qs.Get("marker"), qs.Get("limit"), func(s *structs.VolumeSnapshot) string { return s.ID })
}

// snapshotList answers GET /snapshots (Cinder's summary is the detail).
func (a *API) snapshotList(q *request) error { return a.snapshotDetailList(q) }

// snapshotDetailList answers GET /snapshots/detail.
func (a *API) snapshotDetailList(q *request) error {
	snaps, err := q.listSnapshots()
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for _, s := range snaps {
		out = append(out, q.snapshotDetail(s))
	}
	body := map[string]any{"snapshots": out}
	q.pageLinks(body, "snapshots", "snapshots/detail", len(snaps), func(i int) string { return snaps[i].ID })
	return q.json(http.StatusOK, body)
}

// snapshotCreateBody is POST /snapshots' body.
type snapshotCreateBody struct {
	Snapshot *struct {
		VolumeID           string            `json:"volume_id"`
		Name               *string           `json:"name"`
		Description        *string           `json:"description"`
		DisplayName        *string           `json:"display_name"`
		DisplayDescription *string           `json:"display_description"`
		Force              json.RawMessage   `json:"force"`
		Metadata           map[string]string `json:"metadata"`
	} `json:"snapshot"`
}

// snapshotCreate answers POST /snapshots: 202 with the snapshot in
// creating. An in-use volume needs force before 3.66.
func (a *API) snapshotCreate(q *request) error {
	var body snapshotCreateBody
	if err := q.decode(&body); err != nil {
		return err
	}
	b := body.Snapshot
	if b == nil {
		return errorf(http.StatusBadRequest, "Missing required element 'snapshot' in request body.")
	}
	if b.VolumeID == "" {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute snapshot. Value: {}. 'volume_id' is a required property")
	}
	force := q.at(mvSnapshotInUse)
	if len(b.Force) > 0 && string(b.Force) != "null" {
		var f bool
		if err := json.Unmarshal(b.Force, &f); err != nil {
			var s string
			if json.Unmarshal(b.Force, &s) != nil {
				return errorf(http.StatusBadRequest, "Invalid input for field/attribute force. Value: %s. %s is not of type 'boolean'", b.Force, b.Force)
			}
			if f, err = strconv.ParseBool(s); err != nil {
				return errorf(http.StatusBadRequest, "Invalid input for field/attribute force. Value: %s. %s is not valid under any of the given schemas", s, s)
			}
		}
		if !f && q.at(mvSnapshotInUse) {
			return errorf(http.StatusBadRequest, "Invalid input received: Since microversion 3.66 the 'force' flag is invalid for this request. For backward compatability, however, when the 'force' flag is passed with a value evaluating to True, it is silently ignored.")
		}
		force = force || f
	}
	if err := checkMetadata(b.Metadata); err != nil {
		return err
	}
	snap := &structs.VolumeSnapshot{VolumeID: b.VolumeID, UserID: q.token.UserID, Metadata: b.Metadata}
	if n := firstNonNil(b.Name, b.DisplayName); n != nil {
		snap.Name = *n
	}
	if d := firstNonNil(b.Description, b.DisplayDescription); d != nil {
		snap.Description = *d
	}
	var out structs.SingleVolumeSnapshotResponse
	err := q.call("Volume.SnapshotCreate", &structs.VolumeSnapshotCreateRequest{ProjectID: q.ownerScope(), Snapshot: snap, Force: force}, &out)
	if err != nil {
		return err
	}
	return q.json(http.StatusAccepted, map[string]any{"snapshot": q.snapshotDetail(out.Snapshot)})
}

// snapshotShow answers GET /snapshots/{id}.
func (a *API) snapshotShow(q *request) error {
	var out structs.SingleVolumeSnapshotResponse
	err := q.call("Volume.SnapshotGet", &structs.VolumeSnapshotSpecificRequest{SnapshotID: q.param("id"), ProjectID: q.ownerScope()}, &out)
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"snapshot": q.snapshotDetail(out.Snapshot)})
}

// snapshotUpdate answers PUT /snapshots/{id}: name and description.
func (a *API) snapshotUpdate(q *request) error {
	var body struct {
		Snapshot *struct {
			Name               *string `json:"name"`
			Description        *string `json:"description"`
			DisplayName        *string `json:"display_name"`
			DisplayDescription *string `json:"display_description"`
		} `json:"snapshot"`
	}
	if err := q.decode(&body); err != nil {
		return err
	}
	if body.Snapshot == nil {
		return errorf(http.StatusBadRequest, "Missing required element 'snapshot' in request body.")
	}
	b := body.Snapshot
	req := &structs.VolumeSnapshotUpdateRequest{SnapshotID: q.param("id"), ProjectID: q.ownerScope(),
		Name: firstNonNil(b.Name, b.DisplayName), Description: firstNonNil(b.Description, b.DisplayDescription)}
	var out structs.SingleVolumeSnapshotResponse
	if err := q.call("Volume.SnapshotUpdate", req, &out); err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"snapshot": q.snapshotDetail(out.Snapshot)})
}

// snapshotDelete answers DELETE /snapshots/{id}: 202, the storage host
// deletes it.
func (a *API) snapshotDelete(q *request) error {
	err := q.call("Volume.SnapshotDelete", &structs.VolumeSnapshotDeleteRequest{SnapshotID: q.param("id"), ProjectID: q.ownerScope()}, &structs.GenericResponse{})
	if err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}

// snapshotAction answers POST /snapshots/{id}/action: os-reset_status.
func (a *API) snapshotAction(q *request) error {
	var body struct {
		Reset *struct {
			Status string `json:"status"`
		} `json:"os-reset_status"`
	}
	if err := q.decode(&body); err != nil {
		return err
	}
	if body.Reset == nil || body.Reset.Status == "" {
		return errorf(http.StatusBadRequest, "Must specify 'status'")
	}
	err := q.call("Volume.SnapshotUpdate", &structs.VolumeSnapshotUpdateRequest{SnapshotID: q.param("id"), ResetStatus: body.Reset.Status}, &structs.SingleVolumeSnapshotResponse{})
	if err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}
