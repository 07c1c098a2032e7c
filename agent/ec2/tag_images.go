package ec2

import (
	"maps"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// An image's EC2 tags are its Glance tags: "key=value", or a bare
// "key" for a tag with an empty value, so `openstack image set --tag
// env=prod` and CreateTags agree. Only the project's own images are
// tagged (Image.Update, as the owner); keys with "=" cannot be told
// apart from their values and are refused.

// imageTags reads an image's Glance tags as EC2 tags, sorted by key.
func imageTags(img *structs.Image) []tagRef {
	out := make([]tagRef, 0, len(img.Tags))
	for _, t := range img.Tags {
		k, v, _ := strings.Cut(t, "=")
		out = append(out, tagRef{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b tagRef) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// withImageTags is tags with set added (replacing a key's old value)
// and the keys of del removed.
func withImageTags(tags []string, set map[string]string, del []string) ([]string, error) {
	drop := map[string]bool{}
	for _, k := range del {
		drop[k] = true
	}
	for k := range set {
		if strings.Contains(k, "=") {
			return nil, ec2Error(codeInvalidParameterValue, "Image tag keys may not contain '=': Glance keeps a tag as key=value.")
		}
		drop[k] = true
	}
	var out []string
	for _, t := range tags {
		if k, _, _ := strings.Cut(t, "="); !drop[k] {
			out = append(out, t)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		t := k
		if set[k] != "" {
			t = k + "=" + set[k]
		}
		if len(t) > 255 {
			return nil, ec2Error(codeInvalidParameterValue, "The tag '%s' is too long for an image: Glance keeps key=value in at most 255 characters.", k)
		}
		out = append(out, t)
	}
	if len(out) > structs.MaxImageTags {
		return nil, ec2Error("TagLimitExceeded", "The maximum number of tags for the image has been reached (%d).", structs.MaxImageTags)
	}
	return out, nil
}

func (q *request) taggableImages() ([]*taggable, error) {
	images, err := q.imagesOf()
	if err != nil {
		return nil, err
	}
	var out []*taggable
	for _, img := range images {
		if img.Owner != q.caller.ProjectID {
			continue
		}
		id := img.ID
		out = append(out, &taggable{prefix: "ami", uuid: id, kind: "image", tags: imageTags(img),
			set: func(q *request, tags map[string]string) error { return q.retagImage(id, tags, nil) },
			del: func(q *request, keys []string) error { return q.retagImage(id, nil, keys) }})
	}
	return out, nil
}

// retagImage changes an image's tags with Image.Update, read and
// written again when another writer changed the image in between.
func (q *request) retagImage(id string, set map[string]string, del []string) error {
	for attempt := 0; ; attempt++ {
		var cur structs.SingleImageResponse
		if err := q.call("Image.Get", &structs.ImageSpecificRequest{ImageID: id}, &cur); err != nil {
			return err
		}
		img := cur.Image.Copy()
		tags, err := withImageTags(img.Tags, set, del)
		if err != nil {
			return err
		}
		img.Tags = tags
		err = q.call("Image.Update", &structs.ImageUpdateRequest{Image: img, CASIndex: cur.Image.ModifyIndex}, &structs.SingleImageResponse{})
		if structs.KindOf(err) == structs.KindConflict && attempt < 5 {
			continue
		}
		return err
	}
}
