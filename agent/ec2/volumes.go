package ec2

import (
	"encoding/xml"
	"maps"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// EC2 volumes are Cinder's (Volume.*): "vol-" and 17 hex digits of the
// volume's UUID, the same volume the Block Storage API and Nova's
// os-volume_attachments show. A volume's tags are its metadata, and its
// Name tag its name (what `openstack volume list` shows). EC2's volume
// types are Stratus's volume types by name, "standard" the default
// type.

// EC2's error codes of volumes and snapshots.
const (
	codeVolumeMalformed    = "InvalidVolumeID.Malformed"
	codeVolumeNotFound     = "InvalidVolume.NotFound"
	codeVolumeInUse        = "VolumeInUse"
	codeIncorrectState     = "IncorrectState"
	codeZoneMismatch       = "InvalidVolume.ZoneMismatch"
	codeZoneNotFound       = "InvalidZone.NotFound"
	codeAttachmentNotFound = "InvalidAttachment.NotFound"
	codeVolumeLimit        = "VolumeLimitExceeded"
	codeSnapshotMalformed  = "InvalidSnapshotID.Malformed"
	codeSnapshotNotFound   = "InvalidSnapshot.NotFound"
	codeSnapshotLimit      = "SnapshotLimitExceeded"
)

var (
	volumeKind   = idKind{prefix: "vol", noun: "volume", malformed: codeVolumeMalformed, notFound: codeVolumeNotFound}
	snapshotKind = idKind{prefix: "snap", noun: "snapshot", malformed: codeSnapshotMalformed, notFound: codeSnapshotNotFound}
)

// standardType is EC2's name of Stratus's default volume type.
const standardType = "standard"

func volumeID(uuid string) string   { return ec2ID("vol", uuid) }
func snapshotID(uuid string) string { return ec2ID("snap", uuid) }

// volumesOf lists the caller's project's volumes, oldest first.
func (q *request) volumesOf() ([]*structs.Volume, error) {
	var out structs.VolumeListResponse
	if err := q.call("Volume.List", &structs.VolumeListRequest{ProjectID: q.caller.ProjectID}, &out); err != nil {
		return nil, err
	}
	return out.Volumes, nil
}

// resolveVolumes maps vol- ids to the caller's volumes.
func (q *request) resolveVolumes(ids []string) ([]*structs.Volume, error) {
	all, err := q.volumesOf()
	if err != nil {
		return nil, err
	}
	return resolveByID(volumeKind, ids, all, func(v *structs.Volume) string { return v.ID })
}

// oneVolume resolves the VolumeId parameter.
func (q *request) oneVolume() (*structs.Volume, error) {
	id, err := q.required("VolumeId")
	if err != nil {
		return nil, err
	}
	vols, err := q.resolveVolumes([]string{id})
	if err != nil {
		return nil, err
	}
	return vols[0], nil
}

// volumeState is EC2's state of a Cinder status: the attach statuses
// are all in-use (the attachment's own status tells them apart), an
// extend keeps the state the volume had.
func volumeState(v *structs.Volume) string {
	switch v.Status {
	case structs.VolumeCreating:
		return "creating"
	case structs.VolumeReserved, structs.VolumeAttaching, structs.VolumeInUse, structs.VolumeDetaching:
		return "in-use"
	case structs.VolumeDeleting, structs.VolumeErrorDeleting:
		return "deleting"
	case structs.VolumeError, structs.VolumeErrorExtend:
		return "error"
	}
	if len(v.Attachments) > 0 {
		return "in-use"
	}
	return "available"
}

// attachmentState is EC2's state of an attachment.
func attachmentState(v *structs.Volume, a *structs.VolumeAttachment) string {
	switch {
	case v.Status == structs.VolumeDetaching:
		return "detaching"
	case a.AttachedAt == 0:
		return "attaching"
	}
	return "attached"
}

type volumeAttachmentItem struct {
	VolumeID            string `xml:"volumeId"`
	InstanceID          string `xml:"instanceId"`
	Device              string `xml:"device"`
	Status              string `xml:"status"`
	AttachTime          string `xml:"attachTime,omitempty"`
	DeleteOnTermination bool   `xml:"deleteOnTermination"`
}

type volumeItem struct {
	VolumeID           string                 `xml:"volumeId"`
	Size               int                    `xml:"size"`
	SnapshotID         string                 `xml:"snapshotId"`
	AvailabilityZone   string                 `xml:"availabilityZone"`
	Status             string                 `xml:"status"`
	CreateTime         string                 `xml:"createTime"`
	Attachments        []volumeAttachmentItem `xml:"attachmentSet>item"`
	VolumeType         string                 `xml:"volumeType"`
	Encrypted          bool                   `xml:"encrypted"`
	MultiAttachEnabled bool                   `xml:"multiAttachEnabled"`
	TagSet             []tagRef               `xml:"tagSet>item"`
}

// volumeTypeNames reads the volume types' EC2 names by id.
func (q *request) volumeTypeNames() (map[string]string, error) {
	var out structs.VolumeTypeListResponse
	if err := q.call("Volume.TypeList", &structs.VolumeTypeListRequest{}, &out); err != nil {
		return nil, err
	}
	names := map[string]string{structs.DefaultVolumeTypeID: standardType}
	for _, t := range out.Types {
		if t.ID != structs.DefaultVolumeTypeID {
			names[t.ID] = t.Name
		}
	}
	return names, nil
}

// viewVolume shows a volume as EC2 does; types are the type names.
func viewVolume(v *structs.Volume, types map[string]string) volumeItem {
	it := volumeItem{VolumeID: volumeID(v.ID), Size: v.SizeGB, AvailabilityZone: v.AvailabilityZone,
		Status: volumeState(v), CreateTime: isoTime(v.CreatedAt), VolumeType: types[v.VolumeTypeID],
		MultiAttachEnabled: v.Multiattach, TagSet: namedTags(v.Name, v.Metadata)}
	if it.VolumeType == "" {
		it.VolumeType = standardType
	}
	if v.SnapshotID != "" {
		it.SnapshotID = snapshotID(v.SnapshotID)
	}
	for _, a := range v.Attachments {
		at := a.AttachedAt
		if at == 0 {
			at = v.UpdatedAt
		}
		it.Attachments = append(it.Attachments, volumeAttachmentItem{VolumeID: it.VolumeID, InstanceID: instanceID(a.InstanceID),
			Device: a.Device, Status: attachmentState(v, a), AttachTime: isoTime(at), DeleteOnTermination: a.DeleteOnTermination})
	}
	return it
}

// namedTags is the tags of a record with a name and metadata: its
// metadata, and its name as the Name tag (a Name key of the metadata,
// set by another API, wins), less the client token the API keeps.
func namedTags(name string, metadata map[string]string) []tagRef {
	m := maps.Clone(metadata)
	if m == nil {
		m = map[string]string{}
	}
	delete(m, clientTokenKey)
	if _, ok := m["Name"]; !ok && name != "" {
		m["Name"] = name
	}
	out := make([]tagRef, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, tagRef{Key: k, Value: m[k]})
	}
	return out
}

type describeVolumesResponse struct {
	XMLName xml.Name `xml:"DescribeVolumesResponse"`
	meta
	Volumes   []volumeItem `xml:"volumeSet>item"`
	NextToken string       `xml:"nextToken,omitempty"`
}

// describeVolumes answers DescribeVolumes: the project's volumes, or
// those of VolumeId.n, kept by the filters and paged (MaxResults 5-500,
// NextToken).
func describeVolumes(q *request) error {
	vols, err := q.volumesOf()
	if err != nil {
		return err
	}
	if ids := q.list("VolumeId"); len(ids) > 0 {
		if vols, err = resolveByID(volumeKind, ids, vols, func(v *structs.Volume) string { return v.ID }); err != nil {
			return err
		}
	}
	types, err := q.volumeTypeNames()
	if err != nil {
		return err
	}
	filters := q.filters()
	var items []volumeItem
	for _, v := range vols {
		it := viewVolume(v, types)
		ok, err := volumeMatches(it, filters)
		if err != nil {
			return err
		}
		if ok {
			items = append(items, it)
		}
	}
	page, next, err := pageOf(q, pager{min: 5, max: 500, idsParam: "VolumeId"}, items, func(it volumeItem) string { return it.VolumeID })
	if err != nil {
		return err
	}
	return q.reply(&describeVolumesResponse{Volumes: page, NextToken: next})
}

// volumeMatches applies DescribeVolumes's filters; an unknown filter is
// refused.
func volumeMatches(it volumeItem, filters []filter) (bool, error) {
	for _, f := range filters {
		var ok bool
		switch f.Name {
		case "volume-id":
			ok = matches(f.Values, it.VolumeID)
		case "status":
			ok = matches(f.Values, it.Status)
		case "size":
			ok = matches(f.Values, itoa(it.Size))
		case "availability-zone":
			ok = matches(f.Values, it.AvailabilityZone)
		case "snapshot-id":
			ok = matches(f.Values, it.SnapshotID)
		case "volume-type":
			ok = matches(f.Values, it.VolumeType)
		case "create-time":
			ok = matches(f.Values, it.CreateTime)
		case "encrypted":
			ok = matches(f.Values, boolString(it.Encrypted))
		case "multi-attach-enabled":
			ok = matches(f.Values, boolString(it.MultiAttachEnabled))
		case "attachment.instance-id", "attachment.device", "attachment.status", "attachment.delete-on-termination", "attachment.attach-time":
			ok = attachmentMatches(it.Attachments, f)
		case "tag-key", "tag-value":
			ok = tagMatches(it.TagSet, f)
		default:
			if len(f.Name) > 4 && f.Name[:4] == "tag:" {
				ok = tagMatches(it.TagSet, f)
				break
			}
			return false, ec2Error(codeInvalidParameterValue, "The filter '%s' is invalid", f.Name)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

func attachmentMatches(atts []volumeAttachmentItem, f filter) bool {
	for _, a := range atts {
		var v string
		switch f.Name {
		case "attachment.instance-id":
			v = a.InstanceID
		case "attachment.device":
			v = a.Device
		case "attachment.status":
			v = a.Status
		case "attachment.delete-on-termination":
			v = boolString(a.DeleteOnTermination)
		case "attachment.attach-time":
			v = a.AttachTime
		}
		if matches(f.Values, v) {
			return true
		}
	}
	return false
}
