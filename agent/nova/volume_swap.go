package nova

import (
	"github.com/stratus-cloud/stratus/structs"
)

// volumeSwapSchema is Nova's update body before 2.85: the new volume's
// id, nothing else.
var volumeSwapSchema = &schema{types: tObject, required: []string{"volumeAttachment"}, props: map[string]*schema{
	"volumeAttachment": {types: tObject, required: []string{"volumeId"}, props: map[string]*schema{
		"volumeId": {types: tString, format: checkUUID},
	}},
}}

// volumeSwap answers PUT os-volume_attachments/{volume_id} before 2.85
// (admins, as Nova's swap policy), where every PUT is a swap.
func (a *API) volumeSwap(q *request) (*reply, error) {
	body, err := decodeBody(q, volumeSwapSchema)
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	b := body["volumeAttachment"].(map[string]any)
	if err := q.swapVolume(inst, q.param("volume_id"), b["volumeId"].(string)); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// swapVolume swaps the attached volume oldID for newID while the guest
// runs, as Nova's _update_volume_swap: a swap_volume task of the
// server's own agent, whose driver copies the disk onto the new volume
// (a file of its host, another storage host's NBD export, or an RBD
// image) and switches the guest over. Nova's answers: a missing old
// volume 404, a missing new one 400; the FSM checks the rest (the old
// volume attached to this server and in-use with no other read/write
// attachment, the new one available, unattached and no smaller; the
// server ACTIVE or PAUSED, 409 otherwise).
func (q *request) swapVolume(inst *structs.Instance, oldID, newID string) error {
	var old structs.SingleVolumeResponse
	if err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: oldID, ProjectID: inst.ProjectID}, &old); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return notFound("Volume %s could not be found.", oldID)
		}
		return err
	}
	var nv structs.SingleVolumeResponse
	if err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: newID, ProjectID: inst.ProjectID}, &nv); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			// A missing resource named in the body is a 400 in Nova.
			return badRequest("Volume %s could not be found.", newID)
		}
		return err
	}
	req := &structs.VolumeAttachRequest{VolumeID: oldID, NewVolumeID: newID}
	_, err := q.runVolumeTask(inst, structs.OpSwapVolume, req)
	return err
}
