package ec2

import (
	"encoding/base64"
	"encoding/xml"
	"strconv"

	"github.com/stratus-cloud/stratus/structs"
)

type attrValue struct {
	Value string `xml:"value"`
}

type attrGroup struct {
	GroupID   string `xml:"groupId"`
	GroupName string `xml:"groupName"`
}

type describeInstanceAttributeResponse struct {
	XMLName xml.Name `xml:"DescribeInstanceAttributeResponse"`
	meta
	InstanceID            string      `xml:"instanceId"`
	InstanceType          *attrValue  `xml:"instanceType,omitempty"`
	UserData              *attrValue  `xml:"userData,omitempty"`
	DisableAPITermination *attrValue  `xml:"disableApiTermination,omitempty"`
	SourceDestCheck       *attrValue  `xml:"sourceDestCheck,omitempty"`
	ShutdownBehavior      *attrValue  `xml:"instanceInitiatedShutdownBehavior,omitempty"`
	RootDeviceName        *attrValue  `xml:"rootDeviceName,omitempty"`
	Groups                []attrGroup `xml:"groupSet>item,omitempty"`
}

// describeInstanceAttribute answers DescribeInstanceAttribute for the
// attributes ModifyInstanceAttribute changes, and the two fixed ones
// (instanceInitiatedShutdownBehavior is stop: a guest's shutdown powers
// the instance off; rootDeviceName /dev/vda).
func describeInstanceAttribute(q *request) error {
	id, err := q.required("InstanceId")
	if err != nil {
		return err
	}
	attr, err := q.required("Attribute")
	if err != nil {
		return err
	}
	insts, err := q.resolveInstances([]string{id})
	if err != nil {
		return err
	}
	inst := insts[0]
	resp := &describeInstanceAttributeResponse{InstanceID: instanceID(inst.ID)}
	switch attr {
	case "instanceType":
		resp.InstanceType = &attrValue{viewInstance(inst).InstanceType}
	case "userData":
		resp.UserData = &attrValue{base64.StdEncoding.EncodeToString([]byte(inst.UserData))}
	case "disableApiTermination":
		resp.DisableAPITermination = &attrValue{strconv.FormatBool(inst.Locked)}
	case "instanceInitiatedShutdownBehavior":
		resp.ShutdownBehavior = &attrValue{"stop"}
	case "rootDeviceName":
		resp.RootDeviceName = &attrValue{"/dev/vda"}
	case "sourceDestCheck", "groupSet":
		if err := q.describePortAttribute(inst, attr, resp); err != nil {
			return err
		}
	default:
		return ec2Error(codeUnsupported, "The attribute '%s' is not kept by Stratus.", attr)
	}
	return q.reply(resp)
}

// describePortAttribute fills sourceDestCheck (false when any port
// forwards) or groupSet (the groups of the instance's ports).
func (q *request) describePortAttribute(inst *structs.Instance, attr string, resp *describeInstanceAttributeResponse) error {
	ports, err := q.instancePorts(inst)
	if err != nil {
		return err
	}
	if attr == "sourceDestCheck" {
		check := true
		for _, p := range ports {
			check = check && sourceDestChecked(p)
		}
		resp.SourceDestCheck = &attrValue{strconv.FormatBool(check)}
		return nil
	}
	objs, err := q.groupsOf()
	if err != nil {
		return err
	}
	names := map[string]string{}
	for _, g := range objs.SecurityGroups {
		names[g.ID] = g.Name
	}
	seen := map[string]bool{}
	resp.Groups = []attrGroup{}
	for _, p := range ports {
		for _, g := range p.SecurityGroups {
			if !seen[g] {
				seen[g] = true
				resp.Groups = append(resp.Groups, attrGroup{GroupID: ec2ID("sg", g), GroupName: names[g]})
			}
		}
	}
	return nil
}
