package ec2

import (
	"encoding/xml"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// EC2 tags of instances are their metadata (Instance.Update, as the
// Compute API's server metadata): a key and a value each, at most 50
// per resource, which the servers' metadata quota bounds. Only
// instances (i-…) are taggable yet.

// tagResources resolves ResourceId.n, all instances.
func (q *request) tagResources() ([]*structs.Instance, error) {
	ids := q.list("ResourceId")
	if len(ids) == 0 {
		return nil, ec2Error(codeMissingParameter, "The request must contain the parameter ResourceId.")
	}
	for _, id := range ids {
		if !strings.HasPrefix(id, "i-") {
			return nil, ec2Error(codeInvalidParameterValue, "Tagging '%s' is not supported yet: only instances (i-…) take tags.", id)
		}
	}
	return q.resolveInstances(ids)
}

// createTags answers CreateTags: each Tag.n is set on every resource.
func createTags(q *request) error {
	insts, err := q.tagResources()
	if err != nil {
		return err
	}
	tags := q.tagSet("")
	if len(tags) == 0 {
		return ec2Error(codeMissingParameter, "The request must contain the parameter Tag.")
	}
	for k := range tags {
		if strings.HasPrefix(k, "aws:") {
			return ec2Error(codeInvalidParameterValue, "Tag keys starting with 'aws:' are reserved for internal use")
		}
	}
	for _, inst := range insts {
		if err := q.updateInstance(&structs.InstanceUpdateRequest{InstanceID: inst.ID, SetMetadata: tags}); err != nil {
			return err
		}
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "CreateTagsResponse"}, Return: true})
}

// deleteTags answers DeleteTags: each Tag.n's key is removed (only when
// its value matches, if Tag.n.Value is given); a tag that is not there
// is no error, as in EC2.
func deleteTags(q *request) error {
	insts, err := q.tagResources()
	if err != nil {
		return err
	}
	type want struct {
		key, value string
		anyValue   bool
	}
	var wants []want
	for _, i := range q.indices("Tag") {
		p := "Tag." + itoa(i)
		_, hasValue := q.params[p+".Value"]
		wants = append(wants, want{key: q.params.Get(p + ".Key"), value: q.params.Get(p + ".Value"), anyValue: !hasValue})
	}
	for _, inst := range insts {
		var del []string
		for _, w := range wants {
			if v, ok := inst.Metadata[w.key]; ok && w.key != clientTokenKey && (w.anyValue || v == w.value) {
				del = append(del, w.key)
			}
		}
		// No Tag.n at all removes every tag.
		if len(wants) == 0 {
			for _, t := range tagsOf(inst) {
				del = append(del, t.Key)
			}
		}
		if len(del) == 0 {
			continue
		}
		if err := q.updateInstance(&structs.InstanceUpdateRequest{InstanceID: inst.ID, DeleteMetadata: del}); err != nil {
			return err
		}
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "DeleteTagsResponse"}, Return: true})
}

// updateInstance sends one Instance.Update.
func (q *request) updateInstance(args *structs.InstanceUpdateRequest) error {
	err := q.call("Instance.Update", args, &structs.InstanceUpdateResponse{})
	if structs.KindOf(err) == structs.KindQuotaReached {
		return ec2Error("TagLimitExceeded", "The maximum number of tags for the resource has been reached: %s", structs.Message(err))
	}
	return err
}

type tagItem struct {
	ResourceID   string `xml:"resourceId"`
	ResourceType string `xml:"resourceType"`
	Key          string `xml:"key"`
	Value        string `xml:"value"`
}

type describeTagsResponse struct {
	XMLName xml.Name `xml:"DescribeTagsResponse"`
	meta
	Tags []tagItem `xml:"tagSet>item"`
}

// describeTags answers DescribeTags: every tag of the project's
// instances, kept by the filters resource-id, resource-type, key and
// value.
func describeTags(q *request) error {
	insts, err := q.instancesOf()
	if err != nil {
		return err
	}
	filters := q.filters()
	resp := &describeTagsResponse{}
	for _, inst := range insts {
		for _, t := range tagsOf(inst) {
			it := tagItem{ResourceID: instanceID(inst.ID), ResourceType: "instance", Key: t.Key, Value: t.Value}
			if tagItemMatches(it, filters) {
				resp.Tags = append(resp.Tags, it)
			}
		}
	}
	return q.reply(resp)
}

func tagItemMatches(it tagItem, filters []filter) bool {
	for _, f := range filters {
		var v string
		switch f.Name {
		case "resource-id":
			v = it.ResourceID
		case "resource-type":
			v = it.ResourceType
		case "key":
			v = it.Key
		case "value":
			v = it.Value
		default:
			continue
		}
		if !matches(f.Values, v) {
			return false
		}
	}
	return true
}
