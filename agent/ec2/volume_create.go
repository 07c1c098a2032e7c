package ec2

import (
	"encoding/xml"
	"slices"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

type createVolumeResponse struct {
	XMLName xml.Name `xml:"CreateVolumeResponse"`
	meta
	volumeItem
}

// createVolume answers CreateVolume with Volume.Create: Size in GiB (the
// snapshot's size by default), SnapshotId, AvailabilityZone (the first
// zone of the storage hosts by default), VolumeType ("standard" or a
// Stratus type's name) and volume tags of TagSpecification.n. Stratus
// volumes are neither encrypted nor multi-attach, and have no
// provisioned IOPS or throughput: asking for them is refused rather
// than ignored. ClientToken makes a retry answer the volume the first
// call made (kept in its metadata, as RunInstances keeps an instance's):
// the SDKs send one with every CreateVolume, so a retried request makes
// no second volume. Two first calls racing may still make two: the
// check is the agent's, not the servers'.
func createVolume(q *request) error {
	size, err := q.intParam("Size", 0)
	if err != nil {
		return err
	}
	if err := q.refuseVolumeOptions(); err != nil {
		return err
	}
	v := &structs.Volume{UserID: q.caller.UserID, SizeGB: size}
	if t := q.params.Get("VolumeType"); t != "" && t != standardType {
		v.VolumeTypeID = t
	}
	if err := q.volumeSource(v); err != nil {
		return err
	}
	if v.SizeGB < 1 {
		return ec2Error(codeInvalidParameterValue, "Invalid value '%d' for Size: a volume is at least 1 GiB.", v.SizeGB)
	}
	tags, err := q.specTags("volume")
	if err != nil {
		return err
	}
	v.Name, v.Metadata = tags["Name"], tags
	delete(v.Metadata, "Name")
	if err := q.volumeZone(v); err != nil {
		return err
	}
	if done, err := q.sameVolume(v); done || err != nil {
		return err
	}
	var out structs.SingleVolumeResponse
	if err := q.call("Volume.Create", &structs.VolumeCreateRequest{ProjectID: q.caller.ProjectID, Volume: v}, &out); err != nil {
		return volumeCreateError(err)
	}
	types, err := q.volumeTypeNames()
	if err != nil {
		return err
	}
	return q.reply(&createVolumeResponse{volumeItem: viewVolume(out.Volume, types)})
}

// sameVolume answers the volume an earlier CreateVolume with the same
// ClientToken made (done), IdempotentParameterMismatch if it was made
// with other parameters, or records the token in v's metadata.
func (q *request) sameVolume(v *structs.Volume) (bool, error) {
	tok := q.params.Get("ClientToken")
	if tok == "" {
		return false, nil
	}
	if len(tok) > 64 {
		return false, ec2Error(codeInvalidParameterValue, "The ClientToken must be at most 64 characters.")
	}
	vols, err := q.volumesOf()
	if err != nil {
		return false, err
	}
	for _, old := range vols {
		if old.Metadata[clientTokenKey] != tok {
			continue
		}
		if old.SizeGB != v.SizeGB || old.SnapshotID != v.SnapshotID || old.AvailabilityZone != v.AvailabilityZone {
			return false, ec2Error(codeIdempotentMismatch, "The client token was already used for a different request.")
		}
		types, err := q.volumeTypeNames()
		if err != nil {
			return false, err
		}
		return true, q.reply(&createVolumeResponse{volumeItem: viewVolume(old, types)})
	}
	v.Metadata[clientTokenKey] = tok
	return false, nil
}

// refuseVolumeOptions refuses what Stratus volumes cannot be.
func (q *request) refuseVolumeOptions() error {
	switch {
	case q.params.Get("Encrypted") == "true" || q.params.Get("KmsKeyId") != "":
		return ec2Error(codeUnsupported, "Stratus volumes are not encrypted: Encrypted must be false.")
	case q.params.Get("MultiAttachEnabled") == "true":
		return ec2Error(codeUnsupported, "Stratus volumes attach to one instance at a time: MultiAttachEnabled must be false.")
	case q.params.Get("Iops") != "" || q.params.Get("Throughput") != "":
		return ec2Error(codeInvalidParameterCombo, "Stratus volume types have no provisioned IOPS or throughput.")
	}
	return nil
}

// volumeSource resolves SnapshotId and sizes the volume from it.
func (q *request) volumeSource(v *structs.Volume) error {
	id := q.params.Get("SnapshotId")
	if id == "" {
		if v.SizeGB == 0 {
			return ec2Error(codeMissingParameter, "The request must contain the parameter size or snapshotId.")
		}
		return nil
	}
	snaps, err := q.resolveSnapshots([]string{id})
	if err != nil {
		return err
	}
	s := snaps[0]
	if s.Status != structs.SnapshotAvailable {
		return ec2Error(codeIncorrectState, "Snapshot '%s' is in the '%s' state.", id, snapshotState(s))
	}
	if v.SizeGB == 0 {
		v.SizeGB = s.SizeGB
	}
	if v.SizeGB < s.SizeGB {
		return ec2Error(codeInvalidParameterValue, "The volume size is invalid for the given snapshot: at least %d GiB.", s.SizeGB)
	}
	v.SnapshotID = s.ID
	return nil
}

// volumeZone checks AvailabilityZone against the storage hosts' zones,
// or places the volume in the first of them.
func (q *request) volumeZone(v *structs.Volume) error {
	var out structs.VolumeZonesResponse
	if err := q.call("Volume.Zones", &structs.VolumeZonesRequest{}, &out); err != nil {
		return err
	}
	zone := q.params.Get("AvailabilityZone")
	if zone == "" {
		if len(out.Zones) > 0 {
			v.AvailabilityZone = out.Zones[0].Name
		}
		return nil
	}
	if !slices.ContainsFunc(out.Zones, func(z structs.VolumeZone) bool { return z.Name == zone }) {
		return ec2Error(codeZoneNotFound, "The zone '%s' does not exist.", zone)
	}
	v.AvailabilityZone = zone
	return nil
}

// volumeCreateError maps a refused Volume.Create to EC2's codes.
func volumeCreateError(err error) error {
	msg := structs.Message(err)
	switch structs.KindOf(err) {
	case structs.KindQuotaReached:
		return ec2Error(codeVolumeLimit, "You have exceeded your maximum volume limit: %s", msg)
	case structs.KindNotFound:
		if strings.HasPrefix(msg, "Volume type") {
			return ec2Error(codeInvalidParameterValue, "Invalid value for VolumeType: %s", msg)
		}
	}
	return err
}

// specTags reads the tags of TagSpecification.n, each of which must be
// for resourceType; keys starting "aws:" are EC2's own.
func (q *request) specTags(resourceType string) (map[string]string, error) {
	tags := map[string]string{}
	for _, i := range q.indices("TagSpecification") {
		p := "TagSpecification." + strconv.Itoa(i) + "."
		if rt := q.params.Get(p + "ResourceType"); rt != resourceType {
			return nil, ec2Error(codeInvalidParameterValue, "'%s' is not a valid taggable resource type for this operation.", rt)
		}
		for k, v := range q.tagSet(p) {
			tags[k] = v
		}
	}
	if err := checkTagKeys(tags); err != nil {
		return nil, err
	}
	return tags, nil
}

// checkTagKeys applies EC2's limits on tags: keys of at most 128
// characters, not starting "aws:", values of at most 256.
func checkTagKeys(tags map[string]string) error {
	for k, v := range tags {
		switch {
		case strings.HasPrefix(k, "aws:"):
			return ec2Error(codeInvalidParameterValue, "Tag keys starting with 'aws:' are reserved for internal use")
		case len(k) > 128:
			return ec2Error(codeInvalidParameterValue, "Tag key exceeds the maximum length of 128 characters")
		case len(v) > 256:
			return ec2Error(codeInvalidParameterValue, "Tag value exceeds the maximum length of 256 characters")
		}
	}
	return nil
}

// deleteVolume answers DeleteVolume with Volume.Delete: the volume is
// deleting until its storage host removed it. An attached volume is
// VolumeInUse; one in another state, or with snapshots (Stratus keeps a
// snapshot beside its volume, so the volume outlives none of them), is
// IncorrectState.
func deleteVolume(q *request) error {
	v, err := q.oneVolume()
	if err != nil {
		return err
	}
	id := volumeID(v.ID)
	if len(v.Attachments) > 0 {
		return ec2Error(codeVolumeInUse, "Volume %s is currently attached to %s", id, instanceID(v.Attachments[0].InstanceID))
	}
	err = q.call("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: v.ID, ProjectID: q.caller.ProjectID}, &structs.GenericResponse{})
	if structs.KindOf(err) == structs.KindInvalid {
		return q.whyNotDeleted(v)
	}
	if err != nil {
		return err
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "DeleteVolumeResponse"}, Return: true})
}

// whyNotDeleted words the servers' refusal to delete v: its snapshots,
// else its state.
func (q *request) whyNotDeleted(v *structs.Volume) error {
	// Snapshots being deleted count: the volume waits for them too.
	var snaps structs.VolumeSnapshotListResponse
	if err := q.call("Volume.SnapshotList", &structs.VolumeSnapshotListRequest{ProjectID: q.caller.ProjectID}, &snaps); err != nil {
		return err
	}
	var of []string
	for _, s := range snaps.Snapshots {
		if s.VolumeID == v.ID {
			of = append(of, snapshotID(s.ID))
		}
	}
	if len(of) > 0 {
		return ec2Error(codeIncorrectState, "The volume '%s' has snapshots (%s): Stratus keeps snapshots beside their volume, delete them (and wait for them to go) first.", volumeID(v.ID), strings.Join(of, ", "))
	}
	return ec2Error(codeIncorrectState, "The volume '%s' is in the '%s' state.", volumeID(v.ID), volumeState(v))
}
