package ec2

import (
	"encoding/base64"
	"encoding/xml"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// ModifyInstanceAttribute changes one attribute a call, each mapped onto
// what Stratus does for the Compute API:
//   - disableApiTermination is Nova's lock (Instance.Task lock/unlock,
//     by the owner): a locked instance is not terminated, stopped or
//     changed by its project until unlocked;
//   - instanceType, of a stopped instance as in EC2, is a resize to the
//     flavor of that name (instance_attribute_type.go);
//   - userData, of a stopped instance, replaces the user data the
//     metadata service serves (Instance.Update, as a rebuild's
//     user_data);
//   - sourceDestCheck=false adds the allowed address pairs 0.0.0.0/0
//     and ::/0 to the instance's ports, so they may forward traffic (as
//     the ec2-api project maps it), true removes them;
//   - GroupId.n replaces the security groups of the instance's ports.
//
// Any other attribute is UnsupportedOperation.

// attributeChange is the attribute a ModifyInstanceAttribute call
// names and its value.
type attributeChange struct {
	name  string
	value string
	// groups are GroupId.n.
	groups []string
}

// attributeOf reads the one attribute a call changes, in either of
// EC2's forms: Attribute=name&Value=v, or name.Value=v (GroupId.n for
// the groups).
func (q *request) attributeOf() (attributeChange, error) {
	var found []attributeChange
	for _, name := range []string{"DisableApiTermination", "InstanceType", "UserData", "SourceDestCheck"} {
		if v, ok := q.params[name+".Value"]; ok {
			found = append(found, attributeChange{name: lowerFirst(name), value: v[0]})
		}
	}
	if groups := q.list("GroupId"); len(groups) > 0 {
		found = append(found, attributeChange{name: "groupSet", groups: groups})
	}
	if a := q.params.Get("Attribute"); a != "" {
		found = append(found, attributeChange{name: a, value: q.params.Get("Value")})
	}
	for _, other := range []string{"InstanceInitiatedShutdownBehavior", "EbsOptimized", "EnaSupport", "SriovNetSupport",
		"Kernel", "Ramdisk", "BlockDeviceMapping", "DisableApiStop"} {
		if q.hasParam(other) {
			found = append(found, attributeChange{name: lowerFirst(other)})
		}
	}
	switch len(found) {
	case 0:
		return attributeChange{}, ec2Error(codeMissingParameter, "The request must contain the attribute to modify.")
	case 1:
		return found[0], nil
	}
	return attributeChange{}, ec2Error(codeInvalidParameterCombo, "Only one attribute can be modified at a time.")
}

// hasParam reports whether any parameter is name or name.….
func (q *request) hasParam(name string) bool {
	for k := range q.params {
		if k == name || strings.HasPrefix(k, name+".") {
			return true
		}
	}
	return false
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// modifyInstanceAttribute answers ModifyInstanceAttribute.
func modifyInstanceAttribute(q *request) error {
	id, err := q.required("InstanceId")
	if err != nil {
		return err
	}
	insts, err := q.resolveInstances([]string{id})
	if err != nil {
		return err
	}
	inst := insts[0]
	change, err := q.attributeOf()
	if err != nil {
		return err
	}
	switch change.name {
	case "disableApiTermination":
		err = q.setTerminationProtection(inst, change.value)
	case "instanceType":
		err = q.setInstanceType(inst, change.value)
	case "userData":
		err = q.setUserData(inst, change.value)
	case "sourceDestCheck":
		err = q.setSourceDestCheck(inst, change.value)
	case "groupSet":
		err = q.setGroups(inst, change.groups)
	default:
		return ec2Error(codeUnsupported, "The attribute '%s' cannot be modified on Stratus: only disableApiTermination, instanceType, userData, sourceDestCheck and groupSet map onto it.", change.name)
	}
	if err != nil {
		return err
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "ModifyInstanceAttributeResponse"}, Return: true})
}

// boolValue reads an attribute's true or false.
func boolValue(name, v string) (bool, error) {
	switch v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, ec2Error(codeInvalidParameterValue, "Value (%s) for parameter %s is invalid. Expecting true or false.", v, name)
}

func (q *request) setTerminationProtection(inst *structs.Instance, v string) error {
	on, err := boolValue("disableApiTermination", v)
	if err != nil {
		return err
	}
	op := structs.OpUnlock
	if on {
		op = structs.OpLock
	}
	return q.task(inst.ID, op)
}

// mustBeStopped refuses a change EC2 makes only to a stopped instance.
func mustBeStopped(inst *structs.Instance, attr string) error {
	if inst.VMState != structs.VMStateStopped || inst.TaskState != "" {
		return ec2Error(codeIncorrectInstanceState, "The instance '%s' is not in the 'stopped' state: its %s changes only when stopped.", instanceID(inst.ID), attr)
	}
	return nil
}

// setUserData replaces a stopped instance's user data (base64, at most
// 16 KiB decoded).
func (q *request) setUserData(inst *structs.Instance, v string) error {
	if err := mustBeStopped(inst, "userData"); err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return ec2Error(codeInvalidParameterValue, "Invalid BASE64 encoding of user data.")
	}
	if len(raw) > maxUserData {
		return ec2Error(codeInvalidParameterValue, "User data is limited to %d bytes", maxUserData)
	}
	ud := string(raw)
	return q.call("Instance.Update", &structs.InstanceUpdateRequest{InstanceID: inst.ID, UserData: &ud}, &structs.InstanceUpdateResponse{})
}

// lockedError maps the servers' refusal of a locked instance to EC2's
// OperationNotPermitted.
func lockedError(err error, id string) error {
	if structs.KindOf(err) == structs.KindConflict && strings.Contains(structs.Message(err), "is locked") {
		return ec2Error("OperationNotPermitted", "The instance '%s' may not be terminated or changed. Modify its 'disableApiTermination' instance attribute and try again.", id)
	}
	return err
}
