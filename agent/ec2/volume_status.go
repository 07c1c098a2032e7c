package ec2

import (
	"encoding/xml"

	"github.com/stratus-cloud/stratus/structs"
)

type volumeStatusDetail struct {
	Name   string `xml:"name"`
	Status string `xml:"status"`
}

type volumeStatusItem struct {
	VolumeID         string `xml:"volumeId"`
	AvailabilityZone string `xml:"availabilityZone"`
	VolumeStatus     struct {
		Status  string               `xml:"status"`
		Details []volumeStatusDetail `xml:"details>item"`
	} `xml:"volumeStatus"`
}

type describeVolumeStatusResponse struct {
	XMLName xml.Name `xml:"DescribeVolumeStatusResponse"`
	meta
	Items     []volumeStatusItem `xml:"volumeStatusSet>item"`
	NextToken string             `xml:"nextToken,omitempty"`
}

// volumeHealth is EC2's volume status of a Cinder status: Stratus has
// no I/O probe of its own, so a volume its storage host made and
// serves is ok (io-enabled passed), one in an error status impaired
// (failed), and one still being made insufficient-data.
func volumeHealth(v *structs.Volume) (status, ioEnabled string) {
	switch v.Status {
	case structs.VolumeError, structs.VolumeErrorExtend, structs.VolumeErrorDeleting:
		return "impaired", "failed"
	case structs.VolumeCreating:
		return "insufficient-data", "insufficient-data"
	}
	return "ok", "passed"
}

// describeVolumeStatus answers DescribeVolumeStatus: each volume's
// status and its io-enabled check, by VolumeId.n and the filters
// volume-id, availability-zone and volume-status.status; paged as
// DescribeVolumes.
func describeVolumeStatus(q *request) error {
	vols, err := q.volumesOf()
	if err != nil {
		return err
	}
	if ids := q.list("VolumeId"); len(ids) > 0 {
		if vols, err = resolveByID(volumeKind, ids, vols, func(v *structs.Volume) string { return v.ID }); err != nil {
			return err
		}
	}
	filters := q.filters()
	var items []volumeStatusItem
	for _, v := range vols {
		it := volumeStatusItem{VolumeID: volumeID(v.ID), AvailabilityZone: v.AvailabilityZone}
		st, io := volumeHealth(v)
		it.VolumeStatus.Status = st
		it.VolumeStatus.Details = []volumeStatusDetail{{Name: "io-enabled", Status: io}}
		ok := true
		for _, f := range filters {
			switch f.Name {
			case "volume-id":
				ok = ok && matches(f.Values, it.VolumeID)
			case "availability-zone":
				ok = ok && matches(f.Values, it.AvailabilityZone)
			case "volume-status.status":
				ok = ok && matches(f.Values, st)
			case "volume-status.details-name":
				ok = ok && matches(f.Values, "io-enabled")
			case "volume-status.details-status":
				ok = ok && matches(f.Values, io)
			default:
				return ec2Error(codeInvalidParameterValue, "The filter '%s' is invalid", f.Name)
			}
		}
		if ok {
			items = append(items, it)
		}
	}
	page, next, err := pageOf(q, pager{min: 5, max: 1000, idsParam: "VolumeId"}, items, func(it volumeStatusItem) string { return it.VolumeID })
	if err != nil {
		return err
	}
	return q.reply(&describeVolumeStatusResponse{Items: page, NextToken: next})
}
