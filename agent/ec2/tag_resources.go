package ec2

import (
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// taggable is one resource as the tag actions see it: its EC2 id, its
// tags, and how they change on its Stratus record.
type taggable struct {
	prefix, uuid string
	// kind is EC2's resource type (instance, volume, snapshot, image,
	// vpc, subnet).
	kind string
	tags []tagRef
	// nameOnly resources keep the Name tag only.
	nameOnly bool
	set      func(q *request, tags map[string]string) error
	del      func(q *request, keys []string) error
}

func (t *taggable) id() string { return ec2ID(t.prefix, t.uuid) }

// tagKind is one kind of taggable resource: its ids and how the
// project's are listed.
type tagKind struct {
	idKind
	resourceType string
	list         func(q *request) ([]*taggable, error)
}

// tagKinds are the taggable kinds, in DescribeTags's order.
var tagKinds = []tagKind{
	{idKind{"i", "instance", codeInvalidInstanceID, codeInstanceNotFound}, "instance", (*request).taggableInstances},
	{volumeKind, "volume", (*request).taggableVolumes},
	{snapshotKind, "snapshot", (*request).taggableSnapshots},
	{idKind{"ami", "image", codeInvalidAMIMalformed, codeInvalidAMINotFound}, "image", (*request).taggableImages},
	{idKind{"vpc", "vpc", "InvalidVpcID.Malformed", "InvalidVpcID.NotFound"}, "vpc", (*request).taggableNetworks},
	{idKind{"subnet", "subnet", "InvalidSubnetID.Malformed", "InvalidSubnetID.NotFound"}, "subnet", (*request).taggableSubnets},
}

// resolveTaggables maps resource ids to the project's resources, each
// kind listed once.
func (q *request) resolveTaggables(ids []string) ([]*taggable, error) {
	byKind := map[string][]string{}
	for _, id := range ids {
		prefix, _, _ := strings.Cut(id, "-")
		switch prefix {
		case "sg", "eipalloc":
			return nil, ec2Error(codeUnsupported, "Tagging '%s' is not supported: Stratus keeps no tags on security groups or elastic IPs.", id)
		}
		if !slices.ContainsFunc(tagKinds, func(k tagKind) bool { return k.prefix == prefix }) {
			return nil, ec2Error("InvalidID", "The ID '%s' is not valid", id)
		}
		byKind[prefix] = append(byKind[prefix], id)
	}
	var out []*taggable
	for _, k := range tagKinds {
		want := byKind[k.prefix]
		if len(want) == 0 {
			continue
		}
		all, err := k.list(q)
		if err != nil {
			return nil, err
		}
		found, err := resolveByID(k.idKind, want, all, func(t *taggable) string { return t.uuid })
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
	}
	return out, nil
}

func (q *request) taggableInstances() ([]*taggable, error) {
	insts, err := q.instancesOf()
	if err != nil {
		return nil, err
	}
	out := make([]*taggable, 0, len(insts))
	for _, inst := range insts {
		id := inst.ID
		out = append(out, &taggable{prefix: "i", uuid: id, kind: "instance", tags: tagsOf(inst),
			set: func(q *request, tags map[string]string) error {
				return q.updateInstance(&structs.InstanceUpdateRequest{InstanceID: id, SetMetadata: tags})
			},
			del: func(q *request, keys []string) error {
				return q.updateInstance(&structs.InstanceUpdateRequest{InstanceID: id, DeleteMetadata: keys})
			}})
	}
	return out, nil
}

// updateInstance sends one Instance.Update.
func (q *request) updateInstance(args *structs.InstanceUpdateRequest) error {
	err := q.call("Instance.Update", args, &structs.InstanceUpdateResponse{})
	if structs.KindOf(err) == structs.KindQuotaReached {
		return ec2Error("TagLimitExceeded", "The maximum number of tags for the resource has been reached: %s", structs.Message(err))
	}
	return err
}

// namedChange splits a tag change of a record whose Name tag is its
// name (unless its metadata has a Name key of its own, set by another
// API) into the name and the metadata's change.
type namedChange struct {
	name *string
	set  map[string]string
	del  []string
}

func splitNamed(metadata, set map[string]string, del []string) namedChange {
	_, own := metadata["Name"]
	c := namedChange{}
	for k, v := range set {
		if k == "Name" && !own {
			c.name = &v
			continue
		}
		if c.set == nil {
			c.set = map[string]string{}
		}
		c.set[k] = v
	}
	for _, k := range del {
		if k == "Name" && !own {
			c.name = new(string)
			continue
		}
		c.del = append(c.del, k)
	}
	return c
}

func (q *request) taggableVolumes() ([]*taggable, error) {
	vols, err := q.volumesOf()
	if err != nil {
		return nil, err
	}
	out := make([]*taggable, 0, len(vols))
	for _, v := range vols {
		update := func(q *request, c namedChange) error {
			return q.call("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: v.ID, ProjectID: q.caller.ProjectID,
				Name: c.name, Metadata: c.set, DeleteMetadata: c.del}, &structs.SingleVolumeResponse{})
		}
		out = append(out, &taggable{prefix: "vol", uuid: v.ID, kind: "volume", tags: namedTags(v.Name, v.Metadata),
			set: func(q *request, tags map[string]string) error { return update(q, splitNamed(v.Metadata, tags, nil)) },
			del: func(q *request, keys []string) error { return update(q, splitNamed(v.Metadata, nil, keys)) }})
	}
	return out, nil
}

func (q *request) taggableSnapshots() ([]*taggable, error) {
	snaps, err := q.snapshotsOf()
	if err != nil {
		return nil, err
	}
	out := make([]*taggable, 0, len(snaps))
	for _, s := range snaps {
		update := func(q *request, c namedChange) error {
			return q.call("Volume.SnapshotUpdate", &structs.VolumeSnapshotUpdateRequest{SnapshotID: s.ID, ProjectID: q.caller.ProjectID,
				Name: c.name, Metadata: c.set, DeleteMetadata: c.del}, &structs.SingleVolumeSnapshotResponse{})
		}
		out = append(out, &taggable{prefix: "snap", uuid: s.ID, kind: "snapshot", tags: namedTags(s.Name, s.Metadata),
			set: func(q *request, tags map[string]string) error { return update(q, splitNamed(s.Metadata, tags, nil)) },
			del: func(q *request, keys []string) error { return update(q, splitNamed(s.Metadata, nil, keys)) }})
	}
	return out, nil
}
