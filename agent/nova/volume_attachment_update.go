package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// volumeUpdateSchema is Nova's update body from 2.85: the fields of the
// attachment's view may be given (Nova keeps the PUT RESTful), though
// only volumeId (a swap) and delete_on_termination may differ from the
// attachment's.
var volumeUpdateSchema = &schema{types: tObject, required: []string{"volumeAttachment"}, props: map[string]*schema{
	"volumeAttachment": {types: tObject, required: []string{"volumeId"}, props: map[string]*schema{
		"volumeId":              {types: tString, format: checkUUID},
		"device":                {types: tString | tNull, pattern: devicePattern},
		"tag":                   {types: tString, minLen: 1, maxLen: 60, pattern: tagPattern},
		"delete_on_termination": booleanSchema,
		"serverId":              {types: tString, format: checkUUID},
		"id":                    {types: tString, format: checkUUID},
	}},
}}

// volumeUpdate answers PUT os-volume_attachments/{volume_id} from 2.85,
// as Nova's update: the attachment's delete_on_termination is updated
// (in Raft, before any swap, as Nova saves the BDM first), then, when
// volumeId names another volume, the volumes are swapped, which needs
// the swap policy (admins) where keeping the volume needs only the
// update policy (the server's project). 202 with no body.
func (a *API) volumeUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, volumeUpdateSchema)
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	b := body["volumeAttachment"].(map[string]any)
	oldID, newID := q.param("volume_id"), b["volumeId"].(string)
	if newID != oldID && !q.isAdmin() {
		return nil, policyFault(volumeAttachmentsRule + "swap")
	}
	if err := q.updateAttachment(inst, oldID, b); err != nil {
		return nil, err
	}
	if newID != oldID {
		if err := q.swapVolume(inst, oldID, newID); err != nil {
			return nil, err
		}
	}
	return acceptedReply(nil)
}

// updateAttachment is Nova's _update_volume_regular: the attachment of
// volumeID to inst must exist (404), the fields its view shows may be
// given but not changed (400 "The X property is not mutable"), and
// delete_on_termination is set.
func (q *request) updateAttachment(inst *structs.Instance, volumeID string, b map[string]any) error {
	vols, err := q.attachedVolumes(inst)
	if err != nil {
		return err
	}
	var att *structs.VolumeAttachment
	for _, v := range vols {
		if a := v.AttachmentOf(inst.ID); v.ID == volumeID && !a.External {
			att = a
		}
	}
	if att == nil {
		return notFound("No volume Block Device Mapping with id %s.", volumeID)
	}
	// Nova compares with its BDM, whose unset device and tag are None:
	// any value given for them differs.
	immutable := []struct {
		field string
		have  any
	}{{"id", volumeID}, {"serverId", inst.ID}, {"device", nullString(att.Device)}, {"tag", nullString(att.Tag)}}
	for _, f := range immutable {
		if v, ok := b[f.field]; ok && v != f.have {
			return badRequest("The %s property is not mutable", f.field)
		}
	}
	d, ok := b["delete_on_termination"]
	if !ok {
		return nil
	}
	flag := boolOf(d)
	err = q.call("Volume.UpdateComputeAttachment", &structs.ComputeAttachmentUpdateRequest{ProjectID: inst.ProjectID,
		InstanceID: inst.ID, VolumeID: volumeID, DeleteOnTermination: &flag}, &structs.GenericResponse{})
	if structs.KindOf(err) == structs.KindNotFound {
		return faultf(http.StatusNotFound, "%s", structs.Message(err))
	}
	return err
}
