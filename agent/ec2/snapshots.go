package ec2

import (
	"encoding/xml"

	"github.com/stratus-cloud/stratus/structs"
)

// EC2 snapshots are Cinder's volume snapshots (Volume.Snapshot*):
// "snap-" and 17 hex digits of the UUID; their tags are their metadata
// and their name, as a volume's. Stratus keeps a snapshot on its
// volume's storage host; it is taken of an in-use volume too (Cinder's
// force), crash-consistent as EC2's are. A snapshot being deleted is no
// longer listed: EC2 deletes at once.

// snapshotsOf lists the caller's project's snapshots, oldest first.
func (q *request) snapshotsOf() ([]*structs.VolumeSnapshot, error) {
	var out structs.VolumeSnapshotListResponse
	if err := q.call("Volume.SnapshotList", &structs.VolumeSnapshotListRequest{ProjectID: q.caller.ProjectID}, &out); err != nil {
		return nil, err
	}
	snaps := out.Snapshots[:0:0]
	for _, s := range out.Snapshots {
		if s.Status != structs.SnapshotDeleting {
			snaps = append(snaps, s)
		}
	}
	return snaps, nil
}

// resolveSnapshots maps snap- ids to the caller's snapshots.
func (q *request) resolveSnapshots(ids []string) ([]*structs.VolumeSnapshot, error) {
	all, err := q.snapshotsOf()
	if err != nil {
		return nil, err
	}
	return resolveByID(snapshotKind, ids, all, func(s *structs.VolumeSnapshot) string { return s.ID })
}

// snapshotState is EC2's state of a Cinder snapshot status.
func snapshotState(s *structs.VolumeSnapshot) string {
	switch s.Status {
	case structs.SnapshotCreating:
		return "pending"
	case structs.SnapshotAvailable:
		return "completed"
	}
	return "error"
}

type snapshotItem struct {
	SnapshotID  string   `xml:"snapshotId"`
	VolumeID    string   `xml:"volumeId"`
	Status      string   `xml:"status"`
	StartTime   string   `xml:"startTime"`
	Progress    string   `xml:"progress"`
	OwnerID     string   `xml:"ownerId"`
	VolumeSize  int      `xml:"volumeSize"`
	Description string   `xml:"description"`
	Encrypted   bool     `xml:"encrypted"`
	StateMsg    string   `xml:"statusMessage,omitempty"`
	TagSet      []tagRef `xml:"tagSet>item"`
}

func viewSnapshot(s *structs.VolumeSnapshot) snapshotItem {
	it := snapshotItem{SnapshotID: snapshotID(s.ID), VolumeID: volumeID(s.VolumeID), Status: snapshotState(s),
		StartTime: isoTime(s.CreatedAt), Progress: "0%", OwnerID: s.ProjectID, VolumeSize: s.SizeGB,
		Description: s.Description, TagSet: namedTags(s.Name, s.Metadata)}
	if it.Status == "completed" {
		it.Progress = "100%"
	}
	if it.Status == "error" {
		it.StateMsg = s.ErrorMessage
	}
	return it
}

type createSnapshotResponse struct {
	XMLName xml.Name `xml:"CreateSnapshotResponse"`
	meta
	snapshotItem
}

// createSnapshot answers CreateSnapshot with Volume.SnapshotCreate:
// VolumeId, Description and snapshot tags of TagSpecification.n.
func createSnapshot(q *request) error {
	v, err := q.oneVolume()
	if err != nil {
		return err
	}
	tags, err := q.specTags("snapshot")
	if err != nil {
		return err
	}
	snap := &structs.VolumeSnapshot{VolumeID: v.ID, UserID: q.caller.UserID, Name: tags["Name"],
		Description: q.params.Get("Description"), SizeGB: v.SizeGB, Metadata: tags}
	delete(snap.Metadata, "Name")
	var out structs.SingleVolumeSnapshotResponse
	err = q.call("Volume.SnapshotCreate", &structs.VolumeSnapshotCreateRequest{ProjectID: q.caller.ProjectID, Snapshot: snap, Force: true}, &out)
	switch structs.KindOf(err) {
	case "":
	case structs.KindQuotaReached:
		return ec2Error(codeSnapshotLimit, "The maximum number of snapshots has been reached: %s", structs.Message(err))
	case structs.KindInvalid:
		return ec2Error(codeIncorrectState, "The volume '%s' cannot be snapshotted now: %s", volumeID(v.ID), structs.Message(err))
	}
	if err != nil {
		return err
	}
	return q.reply(&createSnapshotResponse{snapshotItem: viewSnapshot(out.Snapshot)})
}

// deleteSnapshot answers DeleteSnapshot with Volume.SnapshotDelete.
func deleteSnapshot(q *request) error {
	id, err := q.required("SnapshotId")
	if err != nil {
		return err
	}
	snaps, err := q.resolveSnapshots([]string{id})
	if err != nil {
		return err
	}
	err = q.call("Volume.SnapshotDelete", &structs.VolumeSnapshotDeleteRequest{SnapshotID: snaps[0].ID, ProjectID: q.caller.ProjectID}, &structs.GenericResponse{})
	if structs.KindOf(err) == structs.KindInvalid {
		return ec2Error(codeIncorrectState, "Snapshot '%s' is in the '%s' state.", id, snapshotState(snaps[0]))
	}
	if err != nil {
		return err
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "DeleteSnapshotResponse"}, Return: true})
}

type describeSnapshotsResponse struct {
	XMLName xml.Name `xml:"DescribeSnapshotsResponse"`
	meta
	Snapshots []snapshotItem `xml:"snapshotSet>item"`
	NextToken string         `xml:"nextToken,omitempty"`
}

// describeSnapshots answers DescribeSnapshots: the project's snapshots
// (Stratus shares none), or those of SnapshotId.n; Owner.n keeps those
// of "self" or the project's id; the filters apply; MaxResults (5-1000)
// and NextToken page.
func describeSnapshots(q *request) error {
	snaps, err := q.snapshotsOf()
	if err != nil {
		return err
	}
	if ids := q.list("SnapshotId"); len(ids) > 0 {
		if snaps, err = resolveByID(snapshotKind, ids, snaps, func(s *structs.VolumeSnapshot) string { return s.ID }); err != nil {
			return err
		}
	}
	owners := append(q.list("Owner"), q.list("OwnerId")...)
	filters := q.filters()
	var items []snapshotItem
	for _, s := range snaps {
		it := viewSnapshot(s)
		if len(owners) > 0 && !contains(owners, "self") && !contains(owners, it.OwnerID) {
			continue
		}
		ok, err := snapshotMatches(it, filters)
		if err != nil {
			return err
		}
		if ok {
			items = append(items, it)
		}
	}
	page, next, err := pageOf(q, pager{min: 5, max: 1000, idsParam: "SnapshotId"}, items, func(it snapshotItem) string { return it.SnapshotID })
	if err != nil {
		return err
	}
	return q.reply(&describeSnapshotsResponse{Snapshots: page, NextToken: next})
}

func snapshotMatches(it snapshotItem, filters []filter) (bool, error) {
	for _, f := range filters {
		var ok bool
		switch f.Name {
		case "snapshot-id":
			ok = matches(f.Values, it.SnapshotID)
		case "volume-id":
			ok = matches(f.Values, it.VolumeID)
		case "status":
			ok = matches(f.Values, it.Status)
		case "owner-id":
			ok = matches(f.Values, it.OwnerID)
		case "description":
			ok = matches(f.Values, it.Description)
		case "progress":
			ok = matches(f.Values, it.Progress)
		case "start-time":
			ok = matches(f.Values, it.StartTime)
		case "volume-size":
			ok = matches(f.Values, itoa(it.VolumeSize))
		case "encrypted":
			ok = matches(f.Values, boolString(it.Encrypted))
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
