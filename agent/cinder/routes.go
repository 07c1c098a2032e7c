package cinder

import (
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// routes is every route of the API under MountPath, with the project id
// segment of /v3/{project_id}/… taken out (dispatch checks it), who may
// call it and Cinder's policy rule. The servers check ownership again:
// a non-admin reaches only its project's volumes.
func (a *API) routes() []route.Route[handler] {
	const (
		reader = policy.Reader
		member = policy.Member
		admin  = policy.Admin
	)
	return []route.Route[handler]{
		{Pattern: "GET /", Access: policy.Public, Handle: a.versionsAll},
		{Pattern: "GET /v3", Access: policy.Public, Handle: a.versionsV3},

		{Pattern: "GET /v3/volumes", Access: reader, Policy: "volume:get_all", Handle: a.volumeList},
		{Pattern: "GET /v3/volumes/detail", Access: reader, Policy: "volume:get_all", Handle: a.volumeDetailList},
		{Pattern: "POST /v3/volumes", Access: member, Policy: "volume:create", Handle: a.volumeCreate},
		{Pattern: "GET /v3/volumes/{id}", Access: reader, Policy: "volume:get", Handle: a.volumeShow},
		{Pattern: "PUT /v3/volumes/{id}", Access: member, Policy: "volume:update", Handle: a.volumeUpdate},
		{Pattern: "DELETE /v3/volumes/{id}", Access: member, Policy: "volume:delete", Handle: a.volumeDelete},
		{Pattern: "POST /v3/volumes/{id}/action", Access: member, Policy: "volume:volume_actions", Handle: a.volumeAction},
		{Pattern: "GET /v3/volumes/{id}/metadata", Access: reader, Policy: "volume:get_volume_metadata", Handle: a.metadataShow},
		{Pattern: "POST /v3/volumes/{id}/metadata", Access: member, Policy: "volume:create_volume_metadata", Handle: a.metadataMerge},
		{Pattern: "PUT /v3/volumes/{id}/metadata", Access: member, Policy: "volume:update_volume_metadata", Handle: a.metadataReplace},
		{Pattern: "GET /v3/volumes/{id}/metadata/{key}", Access: reader, Policy: "volume:get_volume_metadata", Handle: a.metadataItemShow},
		{Pattern: "PUT /v3/volumes/{id}/metadata/{key}", Access: member, Policy: "volume:update_volume_metadata", Handle: a.metadataItemSet},
		{Pattern: "DELETE /v3/volumes/{id}/metadata/{key}", Access: member, Policy: "volume:delete_volume_metadata", Handle: a.metadataItemDelete},

		{Pattern: "GET /v3/snapshots", Access: reader, Policy: "volume:get_all_snapshots", Handle: a.snapshotList},
		{Pattern: "GET /v3/snapshots/detail", Access: reader, Policy: "volume:get_all_snapshots", Handle: a.snapshotDetailList},
		{Pattern: "POST /v3/snapshots", Access: member, Policy: "volume:create_snapshot", Handle: a.snapshotCreate},
		{Pattern: "GET /v3/snapshots/{id}", Access: reader, Policy: "volume:get_snapshot", Handle: a.snapshotShow},
		{Pattern: "PUT /v3/snapshots/{id}", Access: member, Policy: "volume:update_snapshot", Handle: a.snapshotUpdate},
		{Pattern: "DELETE /v3/snapshots/{id}", Access: member, Policy: "volume:delete_snapshot", Handle: a.snapshotDelete},
		{Pattern: "POST /v3/snapshots/{id}/action", Access: admin, Policy: "volume_extension:snapshot_admin_actions:reset_status", Handle: a.snapshotAction},

		// Summary, snapshot metadata, type access (the cinderapi
		// block); the type action's removeProjectAccess is Cinder's
		// volume_extension:volume_type_access:removeProjectAccess.
		{Pattern: "GET /v3/volumes/summary", Access: reader, Policy: "volume:get_all", Handle: a.volumesSummary},
		{Pattern: "GET /v3/snapshots/{id}/metadata", Access: reader, Policy: "volume:get_snapshot_metadata", Handle: a.snapshotMetadataShow},
		{Pattern: "POST /v3/snapshots/{id}/metadata", Access: member, Policy: "volume:update_snapshot_metadata", Handle: a.snapshotMetadataMerge},
		{Pattern: "PUT /v3/snapshots/{id}/metadata", Access: member, Policy: "volume:update_snapshot_metadata", Handle: a.snapshotMetadataReplace},
		{Pattern: "GET /v3/snapshots/{id}/metadata/{key}", Access: reader, Policy: "volume:get_snapshot_metadata", Handle: a.snapshotMetadataItemShow},
		{Pattern: "PUT /v3/snapshots/{id}/metadata/{key}", Access: member, Policy: "volume:update_snapshot_metadata", Handle: a.snapshotMetadataItemSet},
		{Pattern: "DELETE /v3/snapshots/{id}/metadata/{key}", Access: member, Policy: "volume:delete_snapshot_metadata", Handle: a.snapshotMetadataItemDelete},
		{Pattern: "GET /v3/types/{id}/os-volume-type-access", Access: admin, Policy: "volume_extension:volume_type_access:get_all_for_type", Handle: a.typeAccessList},
		{Pattern: "POST /v3/types/{id}/action", Access: admin, Policy: "volume_extension:volume_type_access:addProjectAccess", Handle: a.typeAction},

		{Pattern: "GET /v3/attachments", Access: reader, Policy: "volume:attachment_get_all", Handle: a.attachmentIndex},
		{Pattern: "GET /v3/attachments/detail", Access: reader, Policy: "volume:attachment_get_all", Handle: a.attachmentDetails},
		{Pattern: "POST /v3/attachments", Access: member, Policy: "volume:attachment_create", Handle: a.attachmentCreate},
		{Pattern: "GET /v3/attachments/{id}", Access: reader, Policy: "volume:attachment_get", Handle: a.attachmentShow},
		{Pattern: "PUT /v3/attachments/{id}", Access: member, Policy: "volume:attachment_update", Handle: a.attachmentUpdate},
		{Pattern: "DELETE /v3/attachments/{id}", Access: member, Policy: "volume:attachment_delete", Handle: a.attachmentDelete},
		{Pattern: "POST /v3/attachments/{id}/action", Access: member, Policy: "volume:attachment_complete", Handle: a.attachmentAction},

		{Pattern: "GET /v3/types", Access: reader, Policy: "volume_extension:volume_type_access", Handle: a.typeList},
		{Pattern: "GET /v3/types/{id}", Access: reader, Policy: "volume_extension:volume_type_access", Handle: a.typeShow},
		{Pattern: "POST /v3/types", Access: admin, Policy: "volume_extension:types_manage", Handle: a.typeCreate},
		{Pattern: "DELETE /v3/types/{id}", Access: admin, Policy: "volume_extension:types_manage", Handle: a.typeDelete},
		{Pattern: "GET /v3/types/{id}/extra_specs", Access: reader, Policy: "volume_extension:types_extra_specs:index", Handle: a.typeSpecsList},
		{Pattern: "POST /v3/types/{id}/extra_specs", Access: admin, Policy: "volume_extension:types_extra_specs:create", Handle: a.typeSpecsSet},
		{Pattern: "GET /v3/types/{id}/extra_specs/{key}", Access: reader, Policy: "volume_extension:types_extra_specs:show", Handle: a.typeSpecShow},
		{Pattern: "DELETE /v3/types/{id}/extra_specs/{key}", Access: admin, Policy: "volume_extension:types_extra_specs:delete", Handle: a.typeSpecDelete},

		{Pattern: "GET /v3/os-quota-sets/{project}", Access: reader, Policy: "volume_extension:quotas:show", Handle: a.quotaShow},
		{Pattern: "GET /v3/os-quota-sets/{project}/defaults", Access: reader, Policy: "volume_extension:quotas:show", Handle: a.quotaDefaults},
		{Pattern: "PUT /v3/os-quota-sets/{project}", Access: admin, Policy: "volume_extension:quotas:update", Handle: a.quotaUpdate},
		{Pattern: "GET /v3/os-quota-class-sets/{class}", Access: admin, Policy: "volume_extension:quota_classes", Handle: a.quotaClassShow},
		{Pattern: "PUT /v3/os-quota-class-sets/{class}", Access: admin, Policy: "volume_extension:quota_classes", Handle: a.quotaClassUpdate},
		{Pattern: "GET /v3/limits", Access: reader, Policy: "limits_extension:used_limits", Handle: a.limits},
		{Pattern: "GET /v3/os-availability-zone", Access: reader, Policy: "volume_extension:availability_zone_list", Handle: a.zones},
	}
}
