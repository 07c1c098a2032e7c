package ec2

import (
	"encoding/xml"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// modifyInstanceAttribute answers ModifyInstanceAttribute for the one
// attribute that maps onto Stratus as it stands: DisableApiTermination,
// which is Nova's lock (Instance.Task lock/unlock, by the owner): a
// locked instance is not terminated, stopped or changed by its project
// until unlocked. Any other attribute is UnsupportedOperation.
func modifyInstanceAttribute(q *request) error {
	id, err := q.required("InstanceId")
	if err != nil {
		return err
	}
	insts, err := q.resolveInstances([]string{id})
	if err != nil {
		return err
	}
	v := q.params.Get("DisableApiTermination.Value")
	if v == "" && q.params.Get("Attribute") == "disableApiTermination" {
		v = q.params.Get("Value")
	}
	switch v {
	case "true":
		err = q.task(insts[0].ID, structs.OpLock)
	case "false":
		err = q.task(insts[0].ID, structs.OpUnlock)
	default:
		return ec2Error(codeUnsupported, "Only DisableApiTermination (true or false) can be modified yet.")
	}
	if err != nil {
		return err
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "ModifyInstanceAttributeResponse"}, Return: true})
}

// lockedError maps the servers' refusal of a locked instance to EC2's
// OperationNotPermitted.
func lockedError(err error, id string) error {
	if structs.KindOf(err) == structs.KindConflict && strings.Contains(structs.Message(err), "is locked") {
		return ec2Error("OperationNotPermitted", "The instance '%s' may not be terminated or changed. Modify its 'disableApiTermination' instance attribute and try again.", id)
	}
	return err
}
