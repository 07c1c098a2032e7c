package nova

import (
	"github.com/stratus-cloud/stratus/structs"
)

// volumeSwap answers PUT os-volume_attachments/{volume_id} (admins, as
// Nova's default policy): the attached volume is swapped for the one
// the body names while the guest runs, a swap_volume task of the
// server's own agent (its driver copies the disk and switches the guest
// over); 202. The new volume must be available, unattached, no smaller
// and kept on the server's host; the server must be ACTIVE or PAUSED
// (409 otherwise, as Nova's check_instance_state).
func (a *API) volumeSwap(q *request) (*reply, error) {
	body, err := decodeBody(q, volumeAttachSchema(q))
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	oldID := q.param("volume_id")
	// Nova reads the old volume first: a missing one is Cinder's 404.
	var old structs.SingleVolumeResponse
	if err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: oldID, ProjectID: inst.ProjectID}, &old); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return nil, notFound("Volume %s could not be found.", oldID)
		}
		return nil, err
	}
	if old.Volume == nil || old.Volume.AttachmentOf(inst.ID) == nil {
		return nil, notFound("The volume was either invalid or not attached to the instance.")
	}
	b := body["volumeAttachment"].(map[string]any)
	req := &structs.VolumeAttachRequest{VolumeID: oldID, NewVolumeID: b["volumeId"].(string)}
	if _, err := q.runVolumeTask(inst, structs.OpSwapVolume, req); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}
