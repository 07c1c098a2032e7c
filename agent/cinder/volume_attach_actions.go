package cinder

import (
	"encoding/json"
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// Cinder's older attach actions on POST /volumes/{id}/action, which Nova
// and other clients drove before the attachments API (3.27): os-reserve
// and os-unreserve, os-attach and os-detach, os-begin_detaching and
// os-roll_detaching change the volume's record (fsm/
// volume_legacy_attach.go) and answer 202; os-initialize_connection
// answers how to reach the volume; os-terminate_connection has nothing
// to undo. Like the attachments API's records, what they make is the
// caller's to drive: no agent plugs anything in.

// legacyAttachAction answers one of those actions; ok is false for any
// other action name.
func (q *request) legacyAttachAction(name string, raw json.RawMessage) (ok bool, err error) {
	switch name {
	case "os-reserve":
		return true, q.attachOp(structs.AttachmentReserve, nil)
	case "os-unreserve":
		return true, q.attachOp(structs.AttachmentUnreserve, nil)
	case "os-begin_detaching":
		return true, q.attachOp(structs.AttachmentBeginDetaching, nil)
	case "os-roll_detaching":
		return true, q.attachOp(structs.AttachmentRollDetaching, nil)
	case "os-attach":
		return true, q.legacyAttach(raw)
	case "os-detach":
		return true, q.legacyDetach(raw)
	case "os-initialize_connection":
		return true, q.initializeConnection(raw)
	case "os-terminate_connection":
		return true, q.terminateConnection(raw)
	}
	return false, nil
}

// attachOp commits one attachment operation on the volume of the path
// and answers 202.
func (q *request) attachOp(op string, fill func(*structs.VolumeAttachmentRequest)) error {
	args := &structs.VolumeAttachmentRequest{ProjectID: q.ownerScope(), Op: op, VolumeID: q.param("id")}
	if fill != nil {
		fill(args)
	}
	if err := q.call("Volume.Attachment", args, &structs.VolumeAttachmentResponse{}); err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}

// legacyAttach is os-attach: {"instance_uuid" or "host_name",
// "mountpoint", "mode"}.
func (q *request) legacyAttach(raw json.RawMessage) error {
	var b struct {
		InstanceUUID *string `json:"instance_uuid"`
		HostName     *string `json:"host_name"`
		Mountpoint   *string `json:"mountpoint"`
		Mode         *string `json:"mode"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute os-attach. Value: %s. %s is not of type 'object'", raw, raw)
	}
	if b.Mountpoint == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute os-attach. Value: %s. 'mountpoint' is a required property", raw)
	}
	if b.InstanceUUID == nil && b.HostName == nil {
		return errorf(http.StatusBadRequest, "Invalid request to attach volume to an invalid target")
	}
	mode := "rw"
	if b.Mode != nil {
		mode = *b.Mode
	}
	if mode != "rw" && mode != "ro" {
		return errorf(http.StatusBadRequest, "Invalid request to attach volume with an invalid mode. Attaching mode should be 'rw' or 'ro'")
	}
	return q.attachOp(structs.AttachmentLegacyAttach, func(a *structs.VolumeAttachmentRequest) {
		a.Mode, a.Mountpoint = mode, *b.Mountpoint
		if b.InstanceUUID != nil {
			a.InstanceID = *b.InstanceUUID
		}
		if b.HostName != nil {
			a.HostName = *b.HostName
		}
	})
}

// legacyDetach is os-detach: {"attachment_id"}, which may be left out
// when the volume has one attachment.
func (q *request) legacyDetach(raw json.RawMessage) error {
	var b struct {
		AttachmentID *string `json:"attachment_id"`
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &b); err != nil {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute os-detach. Value: %s. %s is not of type 'object', 'null'", raw, raw)
		}
	}
	return q.attachOp(structs.AttachmentLegacyDetach, func(a *structs.VolumeAttachmentRequest) {
		if b.AttachmentID != nil {
			a.AttachmentID = *b.AttachmentID
		}
	})
}

// requireConnector checks an action has the connector it requires.
func requireConnector(action string, raw json.RawMessage) error {
	var b struct {
		Connector json.RawMessage `json:"connector"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || len(b.Connector) == 0 || string(b.Connector) == "null" {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute %s. Value: %s. 'connector' is a required property", action, raw)
	}
	var c map[string]any
	if err := json.Unmarshal(b.Connector, &c); err != nil {
		var s string
		if json.Unmarshal(b.Connector, &s) != nil {
			return errorf(http.StatusBadRequest, "Invalid input for field/attribute connector. Value: %s. %s is not of type 'object', 'string'", b.Connector, b.Connector)
		}
	}
	return nil
}

// initializeConnection is os-initialize_connection: how a host reaches
// the volume, as the volume's backend says it (the file on its storage
// host).
func (q *request) initializeConnection(raw json.RawMessage) error {
	if err := requireConnector("os-initialize_connection", raw); err != nil {
		return err
	}
	v, err := q.getVolume(q.param("id"))
	if err != nil {
		return err
	}
	if v.Status == structs.VolumeCreating || v.Status == structs.VolumeError || v.ProviderLocation == "" {
		return errorf(http.StatusBadRequest, "Invalid volume: Volume %s status must be available, reserved, attaching or in-use to initialize a connection, but the current status is %s.", v.ID, v.Status)
	}
	info := map[string]any{"driver_volume_type": "file", "data": map[string]any{
		"device_path": v.ProviderLocation, "format": v.Format, "host": v.Host, "volume_id": v.ID,
		"access_mode": "rw",
	}}
	return q.json(http.StatusOK, map[string]any{"connection_info": info})
}

// terminateConnection is os-terminate_connection: the file backend
// keeps no per-connection state, so there is nothing to undo.
func (q *request) terminateConnection(raw json.RawMessage) error {
	if err := requireConnector("os-terminate_connection", raw); err != nil {
		return err
	}
	if _, err := q.getVolume(q.param("id")); err != nil {
		return err
	}
	return q.empty(http.StatusAccepted)
}
