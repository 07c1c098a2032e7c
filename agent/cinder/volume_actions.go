package cinder

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/stratus-cloud/stratus/structs"
)

// volumeAction answers POST /volumes/{id}/action: os-extend,
// os-set_bootable, os-reset_status (admins), os-force_delete (admins),
// and the older attach actions (volume_attach_actions.go).
func (a *API) volumeAction(q *request) error {
	var body map[string]json.RawMessage
	if err := q.decode(&body); err != nil {
		return err
	}
	if len(body) != 1 {
		return errorf(http.StatusBadRequest, "Malformed request body")
	}
	for name, raw := range body {
		switch name {
		case "os-extend":
			return q.extend(raw)
		case "os-set_bootable":
			return q.setBootable(raw)
		case "os-reset_status":
			return q.resetStatus(raw)
		case "os-force_delete":
			return q.forceDelete()
		}
		if ok, err := q.moreVolumeActions(name, raw); ok {
			return err
		}
		if ok, err := q.legacyAttachAction(name, raw); ok {
			return err
		}
		return errorf(http.StatusBadRequest, "There is no such action: %s", name)
	}
	return nil
}

// intField reads an integer given as a number or a string of digits.
func intField(raw json.RawMessage, field string) (int, error) {
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if n, err := strconv.Atoi(s); err == nil {
			return n, nil
		}
	}
	return 0, errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. %s is not valid under any of the given schemas", field, raw, raw)
}

func (q *request) extend(raw json.RawMessage) error {
	var b struct {
		NewSize json.RawMessage `json:"new_size"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || len(b.NewSize) == 0 {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute os-extend. Value: %s. 'new_size' is a required property", raw)
	}
	n, err := intField(b.NewSize, "new_size")
	if err != nil {
		return err
	}
	if n < 1 {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute new_size. Value: %d. %d is less than the minimum of 1", n, n)
	}
	// From 3.42 an in-use volume extends too (extend_attached_volume);
	// before, Cinder's message asks for available.
	err = q.call("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: q.param("id"), ProjectID: q.ownerScope(), NewSizeGB: n,
		ExtendAttached: q.at(mvExtendInUse)}, &structs.SingleVolumeResponse{})
	if err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}

func (q *request) setBootable(raw json.RawMessage) error {
	var b struct {
		Bootable json.RawMessage `json:"bootable"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || len(b.Bootable) == 0 {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute os-set_bootable. Value: %s. 'bootable' is a required property", raw)
	}
	var on bool
	if err := json.Unmarshal(b.Bootable, &on); err != nil {
		var s string
		if json.Unmarshal(b.Bootable, &s) != nil {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute bootable. Value: %s. %s is not of type 'boolean'", b.Bootable, b.Bootable)
		}
		v, perr := strconv.ParseBool(s)
		if perr != nil {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute bootable. Value: %s. %s is not valid under any of the given schemas", s, s)
		}
		on = v
	}
	err := q.call("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: q.param("id"), ProjectID: q.ownerScope(), Bootable: &on}, &structs.SingleVolumeResponse{})
	if err != nil {
		return err
	}
	return q.empty(http.StatusOK)
}

func (q *request) resetStatus(raw json.RawMessage) error {
	if !q.isAdmin() {
		return errorf(http.StatusForbidden, "Policy doesn't allow volume_extension:volume_admin_actions:reset_status to be performed.")
	}
	var b struct {
		Status       string `json:"status"`
		AttachStatus string `json:"attach_status"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return errorf(http.StatusBadRequest, "Malformed request body")
	}
	if b.Status == "" {
		return errorf(http.StatusBadRequest, "Must specify 'status', 'attach_status' or 'migration_status' for update.")
	}
	if !slices.Contains(structs.VolumeStatuses, b.Status) {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute status. Value: %s. '%s' is not one of %q", b.Status, b.Status, structs.VolumeStatuses)
	}
	err := q.call("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: q.param("id"), ResetStatus: b.Status}, &structs.SingleVolumeResponse{})
	if err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}

func (q *request) forceDelete() error {
	if !q.isAdmin() {
		return errorf(http.StatusForbidden, "Policy doesn't allow volume_extension:volume_admin_actions:force_delete to be performed.")
	}
	err := q.call("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: q.param("id"), Force: true}, &structs.GenericResponse{})
	if err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}
