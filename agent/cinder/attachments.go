package cinder

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Attachments (3.27+; os-complete 3.44+): the Block Storage API's view
// of the attachments kept on the volumes, those the Compute API made
// (which its agents hot-plugged; read-only here) and those callers make
// here, which are records they drive: create reserves the volume,
// update gives the attachment a connector (the answer carries the
// connection_info to reach the volume), os-complete marks it attached,
// delete removes it.

// Microversions of the attachments API.
const (
	mvAttachments        = 27
	mvAttachmentComplete = 44
	mvAttachmentMode     = 54
)

// needVersion refuses a call below the microversion that added it, as
// Cinder's version-gated methods do.
func (q *request) needVersion(v int) error {
	if !q.at(v) {
		return errorf(http.StatusNotFound, "API version 3.%d is not supported on this method.", q.version)
	}
	return nil
}

// attachmentOf pairs an attachment with its volume.
type attachmentOf struct {
	v *structs.Volume
	a *structs.VolumeAttachment
}

// attachments lists the attachments on the volumes the caller sees
// (every project's for an admin with all_tenants), filtered by Cinder's
// volume_id, instance_id, status and attach_status.
func (q *request) attachments() ([]attachmentOf, error) {
	project := q.project()
	if q.isAdmin() && truthy(q.param("all_tenants")) {
		project = ""
	}
	var out structs.VolumeListResponse
	if err := q.call("Volume.List", &structs.VolumeListRequest{ProjectID: project}, &out); err != nil {
		return nil, err
	}
	f := q.r.URL.Query()
	status := f.Get("status")
	if status == "" {
		status = f.Get("attach_status")
	}
	var list []attachmentOf
	for _, v := range out.Volumes {
		for _, a := range v.Attachments {
			if (f.Has("volume_id") && f.Get("volume_id") != v.ID) || (f.Has("instance_id") && f.Get("instance_id") != a.InstanceID) ||
				(status != "" && status != a.Status()) {
				continue
			}
			list = append(list, attachmentOf{v, a})
		}
	}
	slices.SortFunc(list, func(x, y attachmentOf) int {
		switch {
		case x.a.ID < y.a.ID:
			return -1
		case x.a.ID > y.a.ID:
			return 1
		}
		return 0
	})
	return list, nil
}

func attachmentSummary(x attachmentOf) map[string]any {
	return map[string]any{"id": x.a.ID, "status": x.a.Status(), "instance": orNil(x.a.InstanceID), "volume_id": x.v.ID}
}

// attachmentDetail is Cinder's detailed attachment. Its connection_info,
// once a connector was given (or the Compute API attached it), says how
// to reach the volume: its file on the storage host, or, for an instance
// on another host, the storage host's NBD export of the attachment.
func attachmentDetail(x attachmentOf) map[string]any {
	out := attachmentSummary(x)
	out["attached_at"], out["detached_at"], out["attach_mode"] = "", "", x.a.Mode
	if x.a.AttachedAt != 0 {
		out["attached_at"] = time.Unix(0, x.a.AttachedAt).UTC().Format("2006-01-02T15:04:05.000000")
	}
	var info any
	switch {
	case !x.a.External && x.a.Host != x.v.Host:
		// The instance's host reaches it through the storage host's NBD
		// export of this attachment, over TLS.
		info = map[string]any{"driver_volume_type": "nbd", "access_mode": x.a.Mode,
			"data": map[string]any{"export_name": structs.VolumeExportName(x.v.ID, x.a.ID), "host": x.v.Host, "tls": true}}
	case !x.a.External || x.a.Connector != nil:
		info = map[string]any{"driver_volume_type": "file", "access_mode": x.a.Mode,
			"data": map[string]any{"device_path": x.v.ProviderLocation, "format": x.v.Format, "host": x.v.Host}}
	}
	out["connection_info"] = info
	return out
}

// attachmentList answers GET /attachments and /attachments/detail.
func (q *request) attachmentList(detail bool) error {
	if err := q.needVersion(mvAttachments); err != nil {
		return err
	}
	list, err := q.attachments()
	if err != nil {
		return err
	}
	items := []map[string]any{}
	for _, x := range list {
		if detail {
			items = append(items, attachmentDetail(x))
		} else {
			items = append(items, attachmentSummary(x))
		}
	}
	return q.json(http.StatusOK, map[string]any{"attachments": items})
}

func (a *API) attachmentIndex(q *request) error   { return q.attachmentList(false) }
func (a *API) attachmentDetails(q *request) error { return q.attachmentList(true) }

// findAttachment is the attachment of that id the caller sees.
func (q *request) findAttachment(id string) (attachmentOf, error) {
	var out structs.VolumeListResponse
	if err := q.call("Volume.List", &structs.VolumeListRequest{ProjectID: q.ownerScope()}, &out); err != nil {
		return attachmentOf{}, err
	}
	for _, v := range out.Volumes {
		for _, a := range v.Attachments {
			if a.ID == id {
				return attachmentOf{v, a}, nil
			}
		}
	}
	return attachmentOf{}, errorf(http.StatusNotFound, "VolumeAttachment %s could not be found.", id)
}

// attachmentShow answers GET /attachments/{id}.
func (a *API) attachmentShow(q *request) error {
	if err := q.needVersion(mvAttachments); err != nil {
		return err
	}
	x, err := q.findAttachment(q.param("id"))
	if err != nil {
		return err
	}
	return q.json(http.StatusOK, map[string]any{"attachment": attachmentDetail(x)})
}

// attachmentBody is the body of POST and PUT /attachments.
type attachmentBody struct {
	Attachment *struct {
		VolumeUUID   string         `json:"volume_uuid"`
		InstanceUUID *string        `json:"instance_uuid"`
		Connector    map[string]any `json:"connector"`
		Mode         string         `json:"mode"`
	} `json:"attachment"`
}

// connectorOf keeps a connector's values as strings (booleans and
// numbers as JSON spells them); nil stays nil.
func connectorOf(c map[string]any) map[string]string {
	if c == nil {
		return nil
	}
	out := make(map[string]string, len(c))
	for k, v := range c {
		if s, ok := v.(string); ok {
			out[k] = s
			continue
		}
		raw, _ := json.Marshal(v) // decoded JSON always encodes
		out[k] = string(raw)
	}
	return out
}

// attachmentCall makes an attachment call and answers the attachment
// it left (or, for a delete, Cinder's empty list).
func (q *request) attachmentCall(args *structs.VolumeAttachmentRequest) error {
	args.ProjectID = q.ownerScope()
	var out structs.VolumeAttachmentResponse
	if err := q.call("Volume.Attachment", args, &out); err != nil {
		return err
	}
	switch args.Op {
	case structs.AttachmentDelete:
		return q.json(http.StatusOK, map[string]any{"attachments": []any{}})
	case structs.AttachmentComplete:
		return q.empty(http.StatusNoContent)
	}
	att := out.Volume.AttachmentOf(args.InstanceID)
	for _, a := range out.Volume.Attachments {
		if a.ID == out.AttachmentID {
			att = a
		}
	}
	if att == nil {
		return errorf(http.StatusInternalServerError, "Unable to create attachment for volume.")
	}
	return q.json(http.StatusOK, map[string]any{"attachment": attachmentDetail(attachmentOf{out.Volume, att})})
}

// attachmentCreate answers POST /attachments.
func (a *API) attachmentCreate(q *request) error {
	if err := q.needVersion(mvAttachments); err != nil {
		return err
	}
	var body attachmentBody
	if err := q.decode(&body); err != nil {
		return err
	}
	b := body.Attachment
	if b == nil || b.VolumeUUID == "" {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute attachment. 'volume_uuid' is a required property")
	}
	if b.Mode != "" && (!q.at(mvAttachmentMode) || (b.Mode != "rw" && b.Mode != "ro")) {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute mode. Value: %s.", b.Mode)
	}
	args := &structs.VolumeAttachmentRequest{Op: structs.AttachmentCreate, VolumeID: b.VolumeUUID,
		Connector: connectorOf(b.Connector), Mode: b.Mode}
	if b.InstanceUUID != nil {
		args.InstanceID = *b.InstanceUUID
	}
	return q.attachmentCall(args)
}

// attachmentUpdate answers PUT /attachments/{id}: the connector of a
// reserved attachment.
func (a *API) attachmentUpdate(q *request) error {
	if err := q.needVersion(mvAttachments); err != nil {
		return err
	}
	var body attachmentBody
	if err := q.decode(&body); err != nil {
		return err
	}
	if body.Attachment == nil || body.Attachment.Connector == nil {
		return errorf(http.StatusBadRequest, "Invalid input for field/attribute attachment. 'connector' is a required property")
	}
	x, err := q.findAttachment(q.param("id"))
	if err != nil {
		return err
	}
	return q.attachmentCall(&structs.VolumeAttachmentRequest{Op: structs.AttachmentUpdate, VolumeID: x.v.ID,
		AttachmentID: x.a.ID, InstanceID: x.a.InstanceID, Connector: connectorOf(body.Attachment.Connector)})
}

// attachmentDelete answers DELETE /attachments/{id}.
func (a *API) attachmentDelete(q *request) error {
	if err := q.needVersion(mvAttachments); err != nil {
		return err
	}
	x, err := q.findAttachment(q.param("id"))
	if err != nil {
		return err
	}
	return q.attachmentCall(&structs.VolumeAttachmentRequest{Op: structs.AttachmentDelete, VolumeID: x.v.ID, AttachmentID: x.a.ID})
}

// attachmentAction answers POST /attachments/{id}/action: os-complete
// (3.44+).
func (a *API) attachmentAction(q *request) error {
	if err := q.needVersion(mvAttachmentComplete); err != nil {
		return err
	}
	var body map[string]json.RawMessage
	if err := q.decode(&body); err != nil {
		return err
	}
	if _, ok := body["os-complete"]; !ok || len(body) != 1 {
		return errorf(http.StatusBadRequest, "Invalid request body: want {\"os-complete\": null}")
	}
	x, err := q.findAttachment(q.param("id"))
	if err != nil {
		return err
	}
	return q.attachmentCall(&structs.VolumeAttachmentRequest{Op: structs.AttachmentComplete, VolumeID: x.v.ID, AttachmentID: x.a.ID})
}
