package ec2

import (
	"encoding/xml"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// describeInstances answers DescribeInstances: the project's instances,
// or those named by InstanceId.n, kept by the filters instance-id,
// instance-state-name, instance-state-code, instance-type, image-id,
// key-name, availability-zone, tag:<key>, tag-key and tag-value, paged
// with MaxResults (5-1000) and NextToken (the id of the next instance:
// stateless, so any agent continues a listing).
func describeInstances(q *request) error {
	insts, err := q.selectInstances()
	if err != nil {
		return err
	}
	page, next, err := q.paginate(insts)
	if err != nil {
		return err
	}
	nets, err := q.networksOf(page)
	if err != nil {
		return err
	}
	rs := reservations(page)
	withNetworks(rs, nets, page)
	return q.reply(&describeInstancesResponse{Reservations: rs, NextToken: next})
}

// selectInstances is the instances InstanceId.n and Filter.n select.
func (q *request) selectInstances() ([]*structs.Instance, error) {
	var insts []*structs.Instance
	var err error
	if ids := q.list("InstanceId"); len(ids) > 0 {
		insts, err = q.resolveInstances(ids)
	} else {
		insts, err = q.instancesOf()
	}
	if err != nil {
		return nil, err
	}
	filters := q.filters()
	for _, f := range filters {
		if !knownInstanceFilter(f.Name) {
			return nil, ec2Error(codeInvalidParameterValue, "The filter '%s' is invalid", f.Name)
		}
	}
	out := insts[:0:0]
	for _, inst := range insts {
		if instanceMatches(inst, filters) {
			out = append(out, inst)
		}
	}
	return out, nil
}

// paginate cuts a page of insts from NextToken, at most MaxResults.
func (q *request) paginate(insts []*structs.Instance) ([]*structs.Instance, string, error) {
	limit, err := q.intParam("MaxResults", 0)
	if err != nil {
		return nil, "", err
	}
	if limit != 0 && len(q.list("InstanceId")) > 0 {
		return nil, "", ec2Error(codeInvalidParameterCombo, "The parameter instancesSet cannot be used with the parameter maxResults")
	}
	if limit != 0 && (limit < 5 || limit > 1000) {
		return nil, "", ec2Error(codeInvalidParameterValue, "Value ( %d ) for parameter maxResults is invalid. Expecting a value between 5 and 1000.", limit)
	}
	start := 0
	if tok := q.params.Get("NextToken"); tok != "" {
		start = -1
		for i, inst := range insts {
			if instanceID(inst.ID) == tok {
				start = i
				break
			}
		}
		if start < 0 {
			return nil, "", ec2Error(codeInvalidNextToken, "The token '%s' is invalid or its instance is gone.", tok)
		}
	}
	insts = insts[start:]
	if limit == 0 || len(insts) <= limit {
		return insts, "", nil
	}
	return insts[:limit], instanceID(insts[limit].ID), nil
}

func knownInstanceFilter(name string) bool {
	switch name {
	case "instance-id", "instance-state-name", "instance-state-code", "instance-type", "image-id",
		"key-name", "availability-zone", "tag-key", "tag-value", "reservation-id", "owner-id":
		return true
	}
	return strings.HasPrefix(name, "tag:")
}

// instanceMatches reports whether inst passes every filter (values of
// one filter are alternatives).
func instanceMatches(inst *structs.Instance, filters []filter) bool {
	view := viewInstance(inst)
	for _, f := range filters {
		var ok bool
		switch f.Name {
		case "instance-id":
			ok = matches(f.Values, view.InstanceID)
		case "instance-state-name":
			ok = matches(f.Values, view.InstanceState.Name)
		case "instance-state-code":
			ok = matches(f.Values, itoa(view.InstanceState.Code))
		case "instance-type":
			ok = matches(f.Values, view.InstanceType)
		case "image-id":
			ok = matches(f.Values, view.ImageID)
		case "key-name":
			ok = matches(f.Values, view.KeyName)
		case "availability-zone":
			ok = matches(f.Values, view.Placement.AvailabilityZone)
		case "owner-id":
			ok = matches(f.Values, inst.ProjectID)
		case "reservation-id":
			ok = matches(f.Values, reservationID(strings.TrimPrefix(inst.ReservationID, "r-")))
		default:
			ok = tagMatches(view.TagSet, f)
		}
		if !ok {
			return false
		}
	}
	return true
}

// tagMatches applies tag:<key>, tag-key and tag-value.
func tagMatches(tags []tagRef, f filter) bool {
	for _, t := range tags {
		switch {
		case f.Name == "tag-key" && matches(f.Values, t.Key),
			f.Name == "tag-value" && matches(f.Values, t.Value),
			f.Name == "tag:"+t.Key && matches(f.Values, t.Value):
			return true
		}
	}
	return false
}

// describeInstanceStatus answers DescribeInstanceStatus: the state of
// each running instance (every instance with IncludeAllInstances=true),
// with EC2's status checks "ok" while running, as Stratus has no
// separate reachability probe.
func describeInstanceStatus(q *request) error {
	insts, err := q.selectInstances()
	if err != nil {
		return err
	}
	all := q.params.Get("IncludeAllInstances") == "true"
	kept := insts[:0:0]
	for _, inst := range insts {
		if all || stateOf(inst) == stateRunning {
			kept = append(kept, inst)
		}
	}
	page, next, err := q.paginate(kept)
	if err != nil {
		return err
	}
	resp := &describeInstanceStatusResponse{NextToken: next}
	for _, inst := range page {
		st := stateOf(inst)
		check := "not-applicable"
		if st == stateRunning {
			check = "ok"
		}
		item := instanceStatusItem{InstanceID: instanceID(inst.ID), AvailabilityZone: inst.AZ, InstanceState: st}
		item.SystemStatus.Status, item.InstanceStatus.Status = check, check
		resp.Items = append(resp.Items, item)
	}
	return q.reply(resp)
}

type statusSummary struct {
	Status string `xml:"status"`
}

type instanceStatusItem struct {
	InstanceID       string        `xml:"instanceId"`
	AvailabilityZone string        `xml:"availabilityZone"`
	InstanceState    instanceState `xml:"instanceState"`
	SystemStatus     statusSummary `xml:"systemStatus"`
	InstanceStatus   statusSummary `xml:"instanceStatus"`
}

type describeInstanceStatusResponse struct {
	XMLName xml.Name `xml:"DescribeInstanceStatusResponse"`
	meta
	Items     []instanceStatusItem `xml:"instanceStatusSet>item"`
	NextToken string               `xml:"nextToken,omitempty"`
}
