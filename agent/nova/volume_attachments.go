package nova

import (
	"regexp"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Volume attachments (os-volume_attachments): the volumes a server
// uses. An attach or a detach is an instance task carried out by the
// server's own agent (the FSM's attach_volume and detach_volume); the
// attachments themselves are kept on the volumes' records, which these
// routes read.

// volumeAttachmentsRule prefixes Nova's rules of os-volume_attachments.
const volumeAttachmentsRule = "os_compute_api:os-volumes-attachments:"

func (a *API) volumeAttachmentRoutes() []route.Route[handler] {
	const rule = volumeAttachmentsRule
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/os-volume_attachments", Access: reader, Policy: rule + "index", Handle: a.volumeAttachmentList},
		{Pattern: "GET /servers/{id}/os-volume_attachments/{volume_id}", Access: reader, Policy: rule + "show", Handle: a.volumeAttachmentShow},
		{Pattern: "POST /servers/{id}/os-volume_attachments", Access: member, Policy: rule + "create", Handle: a.volumeAttach},
		{Pattern: "DELETE /servers/{id}/os-volume_attachments/{volume_id}", Access: member, Policy: rule + "delete", Handle: a.volumeDetach},
		// Every PUT swaps before 2.85; from 2.85 one that keeps the volume
		// updates the attachment, and a swap checks the swap rule inside.
		{Pattern: "PUT /servers/{id}/os-volume_attachments/{volume_id}", MaxVersion: 84, Access: admin, Policy: rule + "swap", Handle: a.volumeSwap},
		{Pattern: "PUT /servers/{id}/os-volume_attachments/{volume_id}", MinVersion: 85, Access: member, Policy: rule + "update", Handle: a.volumeUpdate},
	}
}

// devicePattern is Nova's pattern of a device name to attach as.
var devicePattern = regexp.MustCompile(`(^/dev/x{0,1}[a-z]{0,1}d{0,1})([a-z]+)[0-9]*$`)

// volumeAttachSchema is Nova's create body at the request's
// microversion: tag from 2.49, delete_on_termination from 2.79.
func volumeAttachSchema(q *request) *schema {
	props := map[string]*schema{
		"volumeId": {types: tString, format: checkUUID},
		"device":   {types: tString | tNull, pattern: devicePattern},
	}
	if q.atLeast(49) {
		props["tag"] = &schema{types: tString, maxLen: 60, pattern: tagPattern}
	}
	if q.atLeast(79) {
		props["delete_on_termination"] = booleanSchema
	}
	return &schema{types: tObject, required: []string{"volumeAttachment"}, props: map[string]*schema{
		"volumeAttachment": {types: tObject, required: []string{"volumeId"}, props: props},
	}}
}

// attachedVolumes lists the volumes attached (or attaching) to inst.
func (q *request) attachedVolumes(inst *structs.Instance) ([]*structs.Volume, error) {
	var out structs.VolumeListResponse
	if err := q.call("Volume.List", &structs.VolumeListRequest{ProjectID: inst.ProjectID}, &out); err != nil {
		return nil, err
	}
	var vols []*structs.Volume
	for _, v := range out.Volumes {
		if v.AttachmentOf(inst.ID) != nil {
			vols = append(vols, v)
		}
	}
	return vols, nil
}

// volumeAttachmentView is Nova's volumeAttachment at the request's
// microversion.
func (q *request) volumeAttachmentView(inst *structs.Instance, v *structs.Volume) map[string]any {
	att := v.AttachmentOf(inst.ID)
	out := map[string]any{"device": nullString(att.Device), "serverId": inst.ID, "volumeId": v.ID}
	if !q.atLeast(89) {
		out["id"] = v.ID
	} else {
		out["attachment_id"] = att.ID
		out["bdm_uuid"] = att.ID
	}
	if q.atLeast(70) {
		out["tag"] = nullString(att.Tag)
	}
	if q.atLeast(79) {
		out["delete_on_termination"] = att.DeleteOnTermination
	}
	return out
}

func (a *API) volumeAttachmentList(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	vols, err := q.attachedVolumes(inst)
	if err != nil {
		return nil, err
	}
	list := []any{}
	for _, v := range vols {
		list = append(list, q.volumeAttachmentView(inst, v))
	}
	return okReply(map[string]any{"volumeAttachments": list})
}

// attachedVolume is the volume id of the path attached to inst, or
// Nova's 404.
func (q *request) attachedVolume(inst *structs.Instance, id string) (*structs.Volume, error) {
	vols, err := q.attachedVolumes(inst)
	if err != nil {
		return nil, err
	}
	for _, v := range vols {
		if v.ID == id {
			return v, nil
		}
	}
	return nil, notFound("Instance %s is not attached to volume %s", inst.ID, id)
}

func (a *API) volumeAttachmentShow(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	v, err := q.attachedVolume(inst, q.param("volume_id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"volumeAttachment": q.volumeAttachmentView(inst, v)})
}

// volumeAttach answers POST os-volume_attachments: the attachment as
// the task started it (the device it will have), 200 as in Nova. The
// volume is attaching until the server's agent has plugged it in.
func (a *API) volumeAttach(q *request) (*reply, error) {
	body, err := decodeBody(q, volumeAttachSchema(q))
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	b := body["volumeAttachment"].(map[string]any)
	req := &structs.VolumeAttachRequest{VolumeID: b["volumeId"].(string)}
	req.Device, _ = b["device"].(string)
	req.Tag, _ = b["tag"].(string)
	if d, ok := b["delete_on_termination"]; ok {
		req.DeleteOnTermination = boolOf(d)
	}
	out, err := q.runVolumeTask(inst, structs.OpAttachVolume, req)
	if err != nil {
		return nil, err
	}
	v, err := q.attachedVolume(out, req.VolumeID)
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"volumeAttachment": q.volumeAttachmentView(out, v)})
}

// volumeDetach answers DELETE os-volume_attachments/{volume_id}: 202,
// the detach carried on by the server's agent.
func (a *API) volumeDetach(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if _, err := q.attachedVolume(inst, q.param("volume_id")); err != nil {
		return nil, err
	}
	if _, err := q.runVolumeTask(inst, structs.OpDetachVolume, &structs.VolumeAttachRequest{VolumeID: q.param("volume_id")}); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// runVolumeTask starts an attach or a detach, with Nova's answers to
// its refusals: a volume that is missing is a 404, one in the wrong
// status a 400 (Cinder's InvalidVolume), the server in the wrong state
// a 409.
func (q *request) runVolumeTask(inst *structs.Instance, op string, req *structs.VolumeAttachRequest) (*structs.Instance, error) {
	out, err := q.submitTask(inst, op, func(args *structs.InstanceTaskRequest) { args.Volume = req })
	switch structs.KindOf(err) {
	case "":
		if err != nil {
			return nil, err
		}
		return out.Instance, nil
	case structs.KindNotFound:
		if msg := structs.Message(err); strings.HasPrefix(msg, "Volume ") {
			return nil, notFound("%s", msg)
		}
	case structs.KindInvalid:
		msg := structs.Message(err)
		if strings.Contains(msg, "to reserve, but the current status is") {
			// Nova passes on Cinder's refusal of the reservation as
			// its client words it.
			msg = "Invalid input received: " + msg + " (HTTP 400)"
		}
		return nil, badRequest("%s", msg)
	}
	return nil, taskFault(err, inst.ID, op, op)
}

// volumesAttachedView is a server's os-extended-volumes:volumes_attached:
// each volume attached or attaching, with delete_on_termination from
// 2.3. The project's volumes are read once per request; a failure to
// read them leaves the list empty rather than failing the read, as a
// server's addresses do.
func (q *request) volumesAttachedView(inst *structs.Instance) []any {
	vols, ok := q.vols[inst.ProjectID]
	if !ok {
		var out structs.VolumeListResponse
		if err := q.call("Volume.List", &structs.VolumeListRequest{ProjectID: inst.ProjectID}, &out); err != nil {
			q.api.logger.Warn("read servers' volumes", "request_id", q.id, "error", err)
		}
		if q.vols == nil {
			q.vols = map[string][]*structs.Volume{}
		}
		vols = out.Volumes
		q.vols[inst.ProjectID] = vols
	}
	list := []any{}
	for _, v := range vols {
		att := v.AttachmentOf(inst.ID)
		if att == nil {
			continue
		}
		item := map[string]any{"id": v.ID}
		if q.atLeast(3) {
			item["delete_on_termination"] = att.DeleteOnTermination
		}
		list = append(list, item)
	}
	return list
}
