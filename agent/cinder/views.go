package cinder

import (
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// cinderTime is Cinder's timestamp format (no zone, microseconds).
const cinderTime = "2006-01-02T15:04:05.000000"

func timeOf(ns int64) any {
	if ns == 0 {
		return nil
	}
	return time.Unix(0, ns).UTC().Format(cinderTime)
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func metadataOf(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// links are a resource's self and bookmark links.
func (q *request) links(collection, id string) []map[string]string {
	return []map[string]string{
		{"rel": "self", "href": q.base + "/" + collection + "/" + id},
		{"rel": "bookmark", "href": q.base + "/" + collection + "/" + id},
	}
}

// volumeSummary is a volume in GET /volumes.
func (q *request) volumeSummary(v *structs.Volume) map[string]any {
	return map[string]any{"id": v.ID, "name": v.Name, "links": q.links("volumes", v.ID)}
}

// volumeDetail is Cinder's detailed volume view at the request's
// microversion; types names the volume types by id.
func (q *request) volumeDetail(v *structs.Volume, types map[string]*structs.VolumeType) map[string]any {
	typeName := v.VolumeTypeID
	if t := types[v.VolumeTypeID]; t != nil {
		typeName = t.Name
	}
	attachments := []map[string]any{}
	for _, at := range v.Attachments {
		a := map[string]any{"id": v.ID, "attachment_id": at.ID, "volume_id": v.ID, "server_id": at.InstanceID,
			"host_name": nil, "device": at.Device, "attached_at": timeOf(at.AttachedAt)}
		if q.isAdmin() {
			a["host_name"] = at.Host
		}
		attachments = append(attachments, a)
	}
	out := map[string]any{
		"id": v.ID, "status": v.Status, "size": v.SizeGB, "availability_zone": v.AvailabilityZone,
		"created_at": timeOf(v.CreatedAt), "updated_at": timeOf(v.UpdatedAt),
		"name": v.Name, "description": v.Description, "volume_type": typeName,
		"snapshot_id": orNil(v.SnapshotID), "source_volid": orNil(v.SourceVolumeID),
		"metadata": metadataOf(v.Metadata), "links": q.links("volumes", v.ID), "user_id": v.UserID,
		"bootable": boolString(v.Bootable), "encrypted": false, "replication_status": nil,
		"consistencygroup_id": nil, "multiattach": v.Multiattach, "attachments": attachments,
		"os-vol-tenant-attr:tenant_id": v.ProjectID,
	}
	if v.ImageID != "" {
		out["volume_image_metadata"] = map[string]string{"image_id": v.ImageID}
	}
	if q.isAdmin() {
		out["migration_status"] = nil
		out["os-vol-host-attr:host"] = orNil(v.Host)
		out["os-vol-mig-status-attr:migstat"] = nil
		out["os-vol-mig-status-attr:name_id"] = nil
	}
	q.volumeDetailVersions(v, out)
	return out
}

// volumeDetailVersions adds the fields later microversions show.
func (q *request) volumeDetailVersions(v *structs.Volume, out map[string]any) {
	if q.at(mvGroupVolume) {
		out["group_id"] = nil
	}
	if q.isAdmin() && q.at(mvProviderID) {
		out["provider_id"] = nil
	}
	if q.at(mvSharedTargets) {
		out["shared_targets"] = false
		out["service_uuid"] = nil
	}
	if q.isAdmin() && q.at(mvClusterName) {
		out["cluster_name"] = nil
	}
	if q.at(mvVolumeTypeID) {
		out["volume_type_id"] = v.VolumeTypeID
	}
	if q.at(mvUseQuota) {
		out["consumes_quota"] = true
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// snapshotDetail is Cinder's snapshot view at the request's
// microversion.
func (q *request) snapshotDetail(s *structs.VolumeSnapshot) map[string]any {
	out := map[string]any{
		"id": s.ID, "created_at": timeOf(s.CreatedAt), "updated_at": timeOf(s.UpdatedAt),
		"name": s.Name, "description": s.Description, "volume_id": s.VolumeID, "status": s.Status,
		"size": s.SizeGB, "metadata": metadataOf(s.Metadata),
		"os-extended-snapshot-attributes:project_id": s.ProjectID,
		"os-extended-snapshot-attributes:progress":   snapshotProgress(s.Status),
	}
	if q.at(mvGroupSnapshots) {
		out["group_snapshot_id"] = nil
	}
	if q.at(mvSnapshotUserID) {
		out["user_id"] = s.UserID
	}
	if q.at(mvUseQuota) {
		out["consumes_quota"] = true
	}
	return out
}

func snapshotProgress(status string) string {
	if status == structs.SnapshotAvailable {
		return "100%"
	}
	return "0%"
}

// typeView is Cinder's volume type view.
func typeView(t *structs.VolumeType) map[string]any {
	specs := t.ExtraSpecs
	if specs == nil {
		specs = map[string]string{}
	}
	return map[string]any{"id": t.ID, "name": t.Name, "description": orNil(t.Description), "is_public": t.IsPublic,
		"os-volume-type-access:is_public": t.IsPublic, "extra_specs": specs, "qos_specs_id": nil}
}
