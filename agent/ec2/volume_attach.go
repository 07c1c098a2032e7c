package ec2

import (
	"encoding/xml"
	"strings"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// Attaching and detaching are the instance tasks Nova's
// os-volume_attachments runs (attach_volume, detach_volume): the
// instance's own agent hot-plugs the volume, which is attaching (in-use
// with an attachment in "attaching") until it reports, then attached.
// Volumes sit on the guest's SCSI bus: a Device of /dev/sdX is kept,
// any other name (/dev/xvdf, /dev/vdb) is a hint the guest cannot
// follow, so the next free /dev/sdX is recorded and answered instead.

type volumeAttachmentResponse struct {
	XMLName xml.Name
	meta
	volumeAttachmentItem
}

// attachVolume answers AttachVolume (VolumeId, InstanceId, Device).
func attachVolume(q *request) error {
	dev, err := q.required("Device")
	if err != nil {
		return err
	}
	v, err := q.oneVolume()
	if err != nil {
		return err
	}
	instID, err := q.required("InstanceId")
	if err != nil {
		return err
	}
	insts, err := q.resolveInstances([]string{instID})
	if err != nil {
		return err
	}
	inst := insts[0]
	st := stateOf(inst)
	switch {
	case len(v.Attachments) > 0:
		return ec2Error(codeVolumeInUse, "%s is already attached to an instance", volumeID(v.ID))
	case v.Status != structs.VolumeAvailable:
		return ec2Error(codeIncorrectState, "Volume '%s' is in the '%s' state.", volumeID(v.ID), volumeState(v))
	case st != stateRunning && st != stateStopped:
		return ec2Error(codeIncorrectInstanceState, "Instance '%s' is not 'running' or 'stopped'.", instID)
	}
	err = q.volumeTask(inst.ID, structs.OpAttachVolume, &structs.VolumeAttachRequest{VolumeID: v.ID, Device: dev})
	if err != nil {
		return attachError(err, v, instID, dev)
	}
	return q.answerAttachment("AttachVolumeResponse", v.ID, inst.ID)
}

// attachError maps the servers' refusal of an attach to EC2's codes.
func attachError(err error, v *structs.Volume, instID, dev string) error {
	msg := structs.Message(err)
	switch {
	case structs.KindOf(err) != structs.KindInvalid:
		return lockedError(err, instID)
	case strings.Contains(msg, "another host"):
		return ec2Error(codeZoneMismatch, "The volume '%s' is not in the same availability zone as instance '%s': %s", volumeID(v.ID), instID, msg)
	case strings.Contains(msg, "device path"):
		return ec2Error(codeInvalidParameterValue, "Attachment point %s is already in use", dev)
	case strings.Contains(msg, "already attached"):
		return ec2Error(codeVolumeInUse, "%s is already attached to an instance", volumeID(v.ID))
	}
	return ec2Error(codeIncorrectState, "%s", msg)
}

// detachVolume answers DetachVolume (VolumeId; InstanceId and Device,
// when given, must be the attachment's). Force is accepted: a detach is
// the agent's hot-unplug either way.
func detachVolume(q *request) error {
	v, err := q.oneVolume()
	if err != nil {
		return err
	}
	if len(v.Attachments) == 0 {
		return ec2Error(codeIncorrectState, "Volume '%s' is in the '%s' state.", volumeID(v.ID), volumeState(v))
	}
	att := v.Attachments[0]
	if id := q.params.Get("InstanceId"); id != "" && !strings.HasPrefix(instanceID(att.InstanceID), id) {
		return ec2Error(codeAttachmentNotFound, "The volume '%s' is not attached to instance '%s'.", volumeID(v.ID), id)
	}
	if d := q.params.Get("Device"); d != "" && d != att.Device {
		return ec2Error(codeAttachmentNotFound, "The volume '%s' is not attached as '%s'.", volumeID(v.ID), d)
	}
	if v.Status != structs.VolumeInUse {
		return ec2Error(codeIncorrectState, "Volume '%s' is in the '%s' state.", volumeID(v.ID), attachmentState(v, att))
	}
	err = q.volumeTask(att.InstanceID, structs.OpDetachVolume, &structs.VolumeAttachRequest{VolumeID: v.ID})
	switch structs.KindOf(err) {
	case "":
	case structs.KindInvalid:
		return ec2Error(codeIncorrectState, "%s", structs.Message(err))
	case structs.KindConflict:
		return ec2Error(codeIncorrectInstanceState, "%s", structs.Message(err))
	}
	if err != nil {
		return err
	}
	return q.answerAttachment("DetachVolumeResponse", v.ID, att.InstanceID)
}

// volumeTask runs an attach or detach task of an instance.
func (q *request) volumeTask(instUUID, op string, vol *structs.VolumeAttachRequest) error {
	args := &structs.InstanceTaskRequest{InstanceID: instUUID, Op: op, ProjectID: q.caller.ProjectID, UserID: q.caller.UserID,
		Volume: vol, IdempotencyKey: retry.NewKey()}
	return retry.DoFor(q.r.Context(), q.api.writeRetry, func(bool) error {
		args.Forwarded = false
		return q.call("Instance.Task", args, &structs.InstanceTaskResponse{})
	})
}

// answerAttachment answers the attachment as the task left it: the
// device it was given and its state (attaching, detaching).
func (q *request) answerAttachment(name, volUUID, instUUID string) error {
	var out structs.SingleVolumeResponse
	if err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: volUUID, ProjectID: q.caller.ProjectID}, &out); err != nil {
		return err
	}
	resp := &volumeAttachmentResponse{XMLName: xml.Name{Local: name}}
	resp.VolumeID, resp.InstanceID, resp.Status = volumeID(volUUID), instanceID(instUUID), "detached"
	if att := out.Volume.AttachmentOf(instUUID); att != nil {
		item := viewVolume(out.Volume, nil)
		for _, a := range item.Attachments {
			if a.InstanceID == resp.InstanceID {
				resp.volumeAttachmentItem = a
			}
		}
	}
	return q.reply(resp)
}
