package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// Rescue: the server boots from a rescue image (its own by default) with
// its own disk attached, until unrescue.
//
// The checks are Nova's compute API's, in its order: the lock, the
// state (ACTIVE, SHUTOFF or ERROR with no task), then the rescue image —
// one the caller cannot see, or a volume-snapshot image (with a block
// device mapping property), is "not supported" (400). A server built
// without an image looks volume-backed on the wire (image ""), and Nova
// rescues those only from 2.87 (stable rescue) with a rescue image
// giving both hw_rescue_bus and hw_rescue_device, on a host able to
// (Nova's COMPUTE_RESCUE_BFV trait; here the host's rescue capability);
// otherwise "Cannot rescue a volume-backed instance" (400).
//
// The layout is the host's to make, as in Nova: a rescue image with
// hw_rescue_device or hw_rescue_bus gets stable device rescue (the
// server's disks stay in place and the rescue disk is added as that
// device on that bus, first in the boot order; virt.RescueSpec), one
// without gets the legacy layout (the rescue disk first, the server's
// own disk second).

// rescueSchema is Nova's rescue schema: the image is a UUID.
var rescueSchema = &schema{types: tObject | tNull, props: map[string]*schema{
	"adminPass":        {types: tString},
	"rescue_image_ref": {types: tString, format: checkUUID},
}}

// stableRescueVersion is the first microversion of stable rescue.
const stableRescueVersion = 87

// actRescue rescues a server and answers 200 with the rescue password.
func actRescue(q *request, inst *structs.Instance, arg any) (*reply, error) {
	o, _ := arg.(map[string]any)
	password, ok := stringOf(o, "adminPass")
	if !ok {
		password = adminPassword()
	}
	image, _ := stringOf(o, "rescue_image_ref")
	if err := rescueState(q, inst); err != nil {
		return nil, err
	}
	if err := q.checkRescueImage(inst, image); err != nil {
		return nil, err
	}
	if _, err := q.runTask(inst, "rescue", structs.OpRescue, func(r *structs.InstanceTaskRequest) { r.ImageID = image }); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"adminPass": password})
}

// rescueState is Nova's check_instance_lock and check_instance_state
// for rescue, which come before anything is looked at.
func rescueState(q *request, inst *structs.Instance) error {
	if inst.Locked && !q.isAdmin() {
		return faultf(http.StatusConflict, "Instance %s is locked", inst.ID)
	}
	if inst.TaskState != "" {
		return faultf(http.StatusConflict, "Cannot 'rescue' instance %s while it is in task_state %s", inst.ID, inst.TaskState)
	}
	switch inst.VMState {
	case structs.VMStateActive, structs.VMStateStopped, structs.VMStateError:
		return nil
	}
	return faultf(http.StatusConflict, "Cannot 'rescue' instance %s while it is in vm_state %s", inst.ID, inst.VMState)
}

// checkRescueImage refuses a rescue image and a server Nova would not
// rescue (see the file's comment).
func (q *request) checkRescueImage(inst *structs.Instance, ref string) error {
	props := inst.ImageProperties
	if ref != "" {
		unsupported := badRequest("Requested rescue image '%s' is not supported", ref)
		img, err := q.getImage(ref)
		if isStatus(err, http.StatusNotFound) {
			return unsupported
		}
		if err != nil {
			return err
		}
		if img.Properties["img_block_device_mapping"] != "" || img.Properties["block_device_mapping"] != "" {
			return unsupported
		}
		props = img.Properties
	}
	if inst.ImageID != "" {
		return nil
	}
	_, bus := props["hw_rescue_bus"]
	_, device := props["hw_rescue_device"]
	if !q.atLeast(stableRescueVersion) || !bus || !device {
		return badRequest("Instance %s cannot be rescued: Cannot rescue a volume-backed instance", inst.ID)
	}
	host, err := q.hostOf(inst)
	if err != nil {
		return err
	}
	if host != nil && !host.HasCapability(structs.HostCapabilityRescue) {
		return badRequest("Instance %s cannot be rescued: Host unable to rescue a volume-backed instance", inst.ID)
	}
	return nil
}
