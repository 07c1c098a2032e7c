package ec2

import (
	"encoding/xml"
	"strings"
)

// CreateTags, DeleteTags and DescribeTags reach every resource whose
// Stratus record keeps tags (tag_resources.go): instances (their
// metadata), volumes and snapshots (their metadata, the Name tag their
// name), images the project owns (Glance's tags, "key=value"), and
// VPCs and subnets (their name, the Name tag, which is all a Neutron
// network keeps). Security groups and elastic IPs keep no tags in
// Stratus: tagging them is UnsupportedOperation, never a tag dropped
// silently.

// taggedResources resolves ResourceId.n, checking every resource takes
// the keys before anything is changed.
func (q *request) taggedResources(keys []string) ([]*taggable, error) {
	ids := q.list("ResourceId")
	if len(ids) == 0 {
		return nil, ec2Error(codeMissingParameter, "The request must contain the parameter ResourceId.")
	}
	out, err := q.resolveTaggables(ids)
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		for _, k := range keys {
			if r.nameOnly && k != "Name" {
				return nil, ec2Error(codeUnsupported, "The %s '%s' keeps a name only: Name is its one tag (Stratus networks have no tags).", r.kind, r.id())
			}
		}
	}
	return out, nil
}

// createTags answers CreateTags: each Tag.n is set on every resource.
func createTags(q *request) error {
	tags := q.tagSet("")
	if len(tags) == 0 {
		return ec2Error(codeMissingParameter, "The request must contain the parameter Tag.")
	}
	if err := checkTagKeys(tags); err != nil {
		return err
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	rs, err := q.taggedResources(keys)
	if err != nil {
		return err
	}
	for _, r := range rs {
		if err := r.set(q, tags); err != nil {
			return err
		}
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "CreateTagsResponse"}, Return: true})
}

// deleteTags answers DeleteTags: each Tag.n's key is removed (only when
// its value matches, if Tag.n.Value is given); a tag that is not there
// is no error, as in EC2. No Tag.n at all removes every tag.
func deleteTags(q *request) error {
	type want struct {
		key, value string
		anyValue   bool
	}
	var wants []want
	var keys []string
	for _, i := range q.indices("Tag") {
		p := "Tag." + itoa(i)
		_, hasValue := q.params[p+".Value"]
		wants = append(wants, want{key: q.params.Get(p + ".Key"), value: q.params.Get(p + ".Value"), anyValue: !hasValue})
		keys = append(keys, q.params.Get(p+".Key"))
	}
	rs, err := q.taggedResources(keys)
	if err != nil {
		return err
	}
	for _, r := range rs {
		var del []string
		for _, t := range r.tags {
			for _, w := range wants {
				if t.Key == w.key && (w.anyValue || t.Value == w.value) {
					del = append(del, t.Key)
				}
			}
			if len(wants) == 0 {
				del = append(del, t.Key)
			}
		}
		if len(del) == 0 {
			continue
		}
		if err := r.del(q, del); err != nil {
			return err
		}
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "DeleteTagsResponse"}, Return: true})
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
	Tags      []tagItem `xml:"tagSet>item"`
	NextToken string    `xml:"nextToken,omitempty"`
}

// describeTags answers DescribeTags: every tag of the project's
// taggable resources, kept by the filters resource-id, resource-type,
// key and value (tag:<key> too), paged with MaxResults (5-1000) and
// NextToken. Only the kinds a resource-type filter asks for are read.
func describeTags(q *request) error {
	filters := q.filters()
	for _, f := range filters {
		switch f.Name {
		case "resource-id", "resource-type", "key", "value":
		default:
			if !strings.HasPrefix(f.Name, "tag:") {
				return ec2Error(codeInvalidParameterValue, "The filter '%s' is invalid", f.Name)
			}
		}
	}
	var items []tagItem
	for _, k := range tagKinds {
		if !kindWanted(k.resourceType, filters) {
			continue
		}
		rs, err := k.list(q)
		if err != nil {
			return err
		}
		for _, r := range rs {
			for _, t := range r.tags {
				it := tagItem{ResourceID: r.id(), ResourceType: r.kind, Key: t.Key, Value: t.Value}
				if tagItemMatches(it, filters) {
					items = append(items, it)
				}
			}
		}
	}
	page, next, err := pageOf(q, pager{min: 5, max: 1000}, items, func(it tagItem) string { return it.ResourceID + "/" + it.Key })
	if err != nil {
		return err
	}
	return q.reply(&describeTagsResponse{Tags: page, NextToken: next})
}

// kindWanted reports whether the resource-type filters keep a kind.
func kindWanted(kind string, filters []filter) bool {
	for _, f := range filters {
		if f.Name == "resource-type" && !matches(f.Values, kind) {
			return false
		}
	}
	return true
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
			if f.Name != "tag:"+it.Key {
				return false
			}
			v = it.Value
		}
		if !matches(f.Values, v) {
			return false
		}
	}
	return true
}
