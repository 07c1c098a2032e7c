package ec2

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestPagerCutsStatelessPages(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e", "f", "g"}
	p := pager{min: 5, max: 6, idsParam: "Id"}
	page := func(params url.Values) ([]string, string, error) {
		return pageOf(&request{params: params}, p, items, func(s string) string { return s })
	}
	got, next, err := page(url.Values{"MaxResults": {"5"}})
	if err != nil || strings.Join(got, "") != "abcde" || next != "f" {
		t.Fatalf("first page %v %q %v", got, next, err)
	}
	got, next, err = page(url.Values{"MaxResults": {"5"}, "NextToken": {next}})
	if err != nil || strings.Join(got, "") != "fg" || next != "" {
		t.Fatalf("last page %v %q %v", got, next, err)
	}
	if got, next, _ := page(url.Values{"MaxResults": {"900"}}); len(got) != 6 || next != "g" {
		t.Fatalf("MaxResults over the maximum is cut to it: %v %q", got, next)
	}
	if got, next, _ := page(url.Values{}); len(got) != 7 || next != "" {
		t.Fatalf("no MaxResults is everything: %v %q", got, next)
	}
	for params, code := range map[string]string{
		"MaxResults=4":                codeInvalidParameterValue,
		"MaxResults=x":                codeInvalidParameterValue,
		"MaxResults=5&NextToken=gone": codeInvalidNextToken,
		"MaxResults=5&Id.1=a":         codeInvalidParameterCombo,
	} {
		v, _ := url.ParseQuery(params)
		if _, _, err := page(v); toAPIError(err).Code != code {
			t.Errorf("%s: %v, want %s", params, err, code)
		}
	}
}

func TestVolumeAndSnapshotStates(t *testing.T) {
	att := []*structs.VolumeAttachment{{InstanceID: "i1"}}
	for _, c := range []struct {
		status string
		atts   []*structs.VolumeAttachment
		want   string
	}{
		{structs.VolumeCreating, nil, "creating"}, {structs.VolumeAvailable, nil, "available"},
		{structs.VolumeReserved, att, "in-use"}, {structs.VolumeAttaching, att, "in-use"},
		{structs.VolumeInUse, att, "in-use"}, {structs.VolumeDetaching, att, "in-use"},
		{structs.VolumeExtending, nil, "available"}, {structs.VolumeExtending, att, "in-use"},
		{structs.VolumeDeleting, nil, "deleting"}, {structs.VolumeErrorDeleting, nil, "deleting"},
		{structs.VolumeError, nil, "error"}, {structs.VolumeMaintenance, nil, "available"},
	} {
		if got := volumeState(&structs.Volume{Status: c.status, Attachments: c.atts}); got != c.want {
			t.Errorf("%s: %s, want %s", c.status, got, c.want)
		}
	}
	v := &structs.Volume{Status: structs.VolumeAttaching, Attachments: []*structs.VolumeAttachment{{InstanceID: "i1"}}}
	if got := attachmentState(v, v.Attachments[0]); got != "attaching" {
		t.Errorf("attaching: %s", got)
	}
	v.Status, v.Attachments[0].AttachedAt = structs.VolumeInUse, 1
	if got := attachmentState(v, v.Attachments[0]); got != "attached" {
		t.Errorf("attached: %s", got)
	}
	v.Status = structs.VolumeDetaching
	if got := attachmentState(v, v.Attachments[0]); got != "detaching" {
		t.Errorf("detaching: %s", got)
	}
	for status, want := range map[string]string{structs.SnapshotCreating: "pending", structs.SnapshotAvailable: "completed",
		structs.SnapshotError: "error", structs.SnapshotErrorDeleting: "error"} {
		if got := snapshotState(&structs.VolumeSnapshot{Status: status}); got != want {
			t.Errorf("snapshot %s: %s, want %s", status, got, want)
		}
	}
}

func TestNamedTagsAndImageTags(t *testing.T) {
	if got := namedTags("data", map[string]string{"tier": "db"}); len(got) != 2 || got[0] != (tagRef{"Name", "data"}) {
		t.Fatalf("the name is the Name tag: %v", got)
	}
	if got := namedTags("data", map[string]string{"Name": "meta"}); len(got) != 1 || got[0].Value != "meta" {
		t.Fatalf("a Name key of the metadata wins: %v", got)
	}
	c := splitNamed(map[string]string{}, map[string]string{"Name": "x", "a": "b"}, []string{"c"})
	if c.name == nil || *c.name != "x" || c.set["a"] != "b" || len(c.set) != 1 || !slices.Equal(c.del, []string{"c"}) {
		t.Fatalf("split %+v", c)
	}
	c = splitNamed(map[string]string{"Name": "meta"}, nil, []string{"Name"})
	if c.name != nil || !slices.Equal(c.del, []string{"Name"}) {
		t.Fatalf("a metadata Name is metadata: %+v", c)
	}
	tags, err := withImageTags([]string{"env=dev", "golden", "keep"}, map[string]string{"env": "prod", "new": ""}, []string{"golden"})
	if err != nil || strings.Join(tags, ",") != "keep,env=prod,new" {
		t.Fatalf("image tags %v %v", tags, err)
	}
	if got := imageTags(&structs.Image{Tags: tags}); len(got) != 3 || got[0] != (tagRef{"env", "prod"}) || got[2] != (tagRef{"new", ""}) {
		t.Fatalf("read back %v", got)
	}
	if _, err := withImageTags(nil, map[string]string{"a=b": "c"}, nil); toAPIError(err).Code != codeInvalidParameterValue {
		t.Fatalf("a key with '=': %v", err)
	}
}
