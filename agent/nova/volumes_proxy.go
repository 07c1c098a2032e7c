package nova

import (
	"net/http"
	"regexp"
	"strconv"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// Nova's block storage proxies, gone from 2.36 like its other proxies:
// os-volumes and os-snapshots turn Compute API calls into the Block
// Storage API's (here, the servers' volume RPCs, which Stratus's Cinder
// API uses too) and answer in Nova's older camelCase view. They act in
// the caller's project only, as Nova's do.

const volumesRule = "os_compute_api:os-volumes:"

func (a *API) volumeProxyRoutes() []route.Route[handler] {
	r := func(pattern string, access policy.Access, rule string, h handler) route.Route[handler] {
		return route.Route[handler]{Pattern: pattern, MaxVersion: proxyMax, Access: access, Policy: volumesRule + rule, Handle: h}
	}
	return []route.Route[handler]{
		r("GET /os-volumes", reader, "list", a.proxyVolumeList),
		r("GET /os-volumes/detail", reader, "detail", a.proxyVolumeList),
		r("POST /os-volumes", member, "create", a.proxyVolumeCreate),
		r("GET /os-volumes/{vol}", reader, "show", a.proxyVolumeShow),
		r("DELETE /os-volumes/{vol}", member, "delete", a.proxyVolumeDelete),
		r("GET /os-snapshots", reader, "snapshots:list", a.proxySnapshotList),
		r("GET /os-snapshots/detail", reader, "snapshots:detail", a.proxySnapshotList),
		r("POST /os-snapshots", member, "snapshots:create", a.proxySnapshotCreate),
		r("GET /os-snapshots/{snap}", reader, "snapshots:show", a.proxySnapshotShow),
		r("DELETE /os-snapshots/{snap}", member, "snapshots:delete", a.proxySnapshotDelete),
	}
}

var digitsOnly = regexp.MustCompile(`^[0-9]+$`)

// proxyVolumeCreateSchema is Nova's os-volumes create schema.
var proxyVolumeCreateSchema = &schema{types: tObject, required: []string{"volume"}, props: map[string]*schema{
	"volume": {types: tObject, required: []string{"size"}, props: map[string]*schema{
		"volume_type":         {types: tString},
		"metadata":            {types: tObject, open: true},
		"snapshot_id":         {types: tString},
		"size":                {types: tInteger | tString, pattern: digitsOnly, min: ptr(1)},
		"availability_zone":   {types: tString},
		"display_name":        {types: tString},
		"display_description": {types: tString},
	}},
}}

// proxySnapshotCreateSchema is Nova's os-snapshots create schema.
var proxySnapshotCreateSchema = &schema{types: tObject, required: []string{"snapshot"}, props: map[string]*schema{
	"snapshot": {types: tObject, required: []string{"volume_id"}, props: map[string]*schema{
		"volume_id":           {types: tString},
		"force":               booleanSchema,
		"display_name":        {types: tString},
		"display_description": {types: tString},
	}},
}}

// proxyVolumeView is Nova's _translate_volume_summary_view (the detail
// view is the same): the first attachment, or [{}] for none.
func proxyVolumeView(v *structs.Volume, typeName string) map[string]any {
	attachments := []any{map[string]any{}}
	if len(v.Attachments) > 0 {
		at := map[string]any{"id": v.ID, "volumeId": v.ID, "serverId": v.Attachments[0].InstanceID}
		if v.Attachments[0].Device != "" {
			at["device"] = v.Attachments[0].Device
		}
		attachments = []any{at}
	}
	metadata := v.Metadata
	if metadata == nil {
		metadata = map[string]string{}
	}
	return map[string]any{
		"id": v.ID, "status": v.Status, "size": v.SizeGB, "availabilityZone": v.AvailabilityZone,
		"createdAt": pyTime(v.CreatedAt), "attachments": attachments,
		"displayName": v.Name, "displayDescription": v.Description,
		"volumeType": nullString(typeName), "snapshotId": nullString(v.SnapshotID), "metadata": metadata,
	}
}

// volumeTypeNames maps volume type ids to names for the views.
func (q *request) volumeTypeNames() (map[string]string, error) {
	var out structs.VolumeTypeListResponse
	if err := q.call("Volume.TypeList", &structs.VolumeTypeListRequest{}, &out); err != nil {
		return nil, err
	}
	names := make(map[string]string, len(out.Types))
	for _, t := range out.Types {
		names[t.ID] = t.Name
	}
	return names, nil
}

func (a *API) proxyVolumeList(q *request) (*reply, error) {
	var out structs.VolumeListResponse
	if err := q.call("Volume.List", &structs.VolumeListRequest{ProjectID: q.token.ProjectID}, &out); err != nil {
		return nil, err
	}
	vols, err := limited(q, out.Volumes)
	if err != nil {
		return nil, err
	}
	names, err := q.volumeTypeNames()
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(vols))
	for _, v := range vols {
		views = append(views, proxyVolumeView(v, names[v.VolumeTypeID]))
	}
	return okReply(map[string]any{"volumes": views})
}

func (q *request) proxyVolume(id string) (*structs.Volume, error) {
	var out structs.SingleVolumeResponse
	err := q.call("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: id, ProjectID: q.token.ProjectID}, &out)
	if err == nil && out.Volume == nil {
		err = structs.Errorf(structs.KindNotFound, "volume %s not found", id)
	}
	if err != nil {
		return nil, notFoundAs(err, "Volume %s could not be found.", id)
	}
	return out.Volume, nil
}

func (a *API) proxyVolumeShow(q *request) (*reply, error) {
	v, err := q.proxyVolume(q.param("vol"))
	if err != nil {
		return nil, err
	}
	names, err := q.volumeTypeNames()
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"volume": proxyVolumeView(v, names[v.VolumeTypeID])})
}

func (a *API) proxyVolumeDelete(q *request) (*reply, error) {
	id := q.param("vol")
	err := q.call("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: id, ProjectID: q.token.ProjectID}, &structs.GenericResponse{})
	if err != nil {
		if structs.KindOf(err) == structs.KindConflict {
			return nil, badRequest("Invalid input received: %s", structs.Message(err))
		}
		return nil, notFoundAs(err, "Volume %s could not be found.", id)
	}
	return &reply{status: http.StatusAccepted}, nil
}

// proxyVolumeCreate answers POST /os-volumes as Nova's proxy: the size
// (or, with none, the snapshot's), name, description, type, metadata and
// zone go to the volume service; an unknown snapshot is 404, a quota
// reached 403, bad input 400.
func (a *API) proxyVolumeCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, proxyVolumeCreateSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "volume")
	size, _ := strconv.Atoi(pyStr(in["size"]))
	v := &structs.Volume{SizeGB: size, UserID: q.token.UserID}
	v.Name, _ = stringOf(in, "display_name")
	v.Description, _ = stringOf(in, "display_description")
	v.AvailabilityZone, _ = stringOf(in, "availability_zone")
	if md := object(in, "metadata"); md != nil {
		v.Metadata = map[string]string{}
		for k, val := range md {
			v.Metadata[k] = pyStr(val)
		}
	}
	if err := q.volumeZone(v); err != nil {
		return nil, err
	}
	if typ, ok := stringOf(in, "volume_type"); ok {
		if v.VolumeTypeID, err = q.volumeTypeID(typ); err != nil {
			return nil, err
		}
	}
	if snap, ok := stringOf(in, "snapshot_id"); ok {
		if _, err := q.proxySnapshot(snap); err != nil {
			return nil, err
		}
		v.SnapshotID = snap
	}
	var out structs.SingleVolumeResponse
	if err := q.call("Volume.Create", &structs.VolumeCreateRequest{ProjectID: q.token.ProjectID, Volume: v}, &out); err != nil {
		if k := structs.KindOf(err); k == structs.KindInvalid || k == structs.KindConflict {
			return nil, badRequest("Invalid input received: %s", structs.Message(err))
		}
		return nil, err
	}
	names, err := q.volumeTypeNames()
	if err != nil {
		return nil, err
	}
	r, _ := okReply(map[string]any{"volume": proxyVolumeView(out.Volume, names[out.Volume.VolumeTypeID])})
	r.header = http.Header{"Location": {q.selfHref("os-volumes", out.Volume.ID)}}
	return r, nil
}

// volumeZone checks a new volume's zone as the Block Storage API does
// (Nova passes Cinder's 400 on, wrapped), and gives a volume without one
// the first zone that has storage.
func (q *request) volumeZone(v *structs.Volume) error {
	var out structs.VolumeZonesResponse
	if err := q.call("Volume.Zones", &structs.VolumeZonesRequest{}, &out); err != nil {
		return err
	}
	for _, z := range out.Zones {
		if v.AvailabilityZone == "" || z.Name == v.AvailabilityZone {
			v.AvailabilityZone = z.Name
			return nil
		}
	}
	if v.AvailabilityZone == "" {
		return nil // no storage at all: the volume service answers
	}
	return badRequest("Invalid input received: Invalid input received: Availability zone '%s' is invalid. (HTTP 400)", v.AvailabilityZone)
}

// volumeTypeID resolves a volume type given by name or id, as Cinder
// takes it; an unknown one is Nova's translated 404.
func (q *request) volumeTypeID(nameOrID string) (string, error) {
	var out structs.VolumeTypeListResponse
	if err := q.call("Volume.TypeList", &structs.VolumeTypeListRequest{}, &out); err != nil {
		return "", err
	}
	for _, t := range out.Types {
		if t.ID == nameOrID || t.Name == nameOrID {
			return t.ID, nil
		}
	}
	return "", notFound("Volume type %s could not be found.", nameOrID)
}

// proxySnapshotView is Nova's _translate_snapshot_summary_view.
func proxySnapshotView(s *structs.VolumeSnapshot) map[string]any {
	return map[string]any{
		"id": s.ID, "volumeId": s.VolumeID, "status": s.Status, "size": s.SizeGB,
		"createdAt": pyTime(s.CreatedAt), "displayName": s.Name, "displayDescription": s.Description,
	}
}

func (q *request) proxySnapshot(id string) (*structs.VolumeSnapshot, error) {
	var out structs.SingleVolumeSnapshotResponse
	err := q.call("Volume.SnapshotGet", &structs.VolumeSnapshotSpecificRequest{SnapshotID: id, ProjectID: q.token.ProjectID}, &out)
	if err == nil && out.Snapshot == nil {
		err = structs.Errorf(structs.KindNotFound, "snapshot %s not found", id)
	}
	if err != nil {
		return nil, notFoundAs(err, "Snapshot %s could not be found.", id)
	}
	return out.Snapshot, nil
}

func (a *API) proxySnapshotList(q *request) (*reply, error) {
	var out structs.VolumeSnapshotListResponse
	if err := q.call("Volume.SnapshotList", &structs.VolumeSnapshotListRequest{ProjectID: q.token.ProjectID}, &out); err != nil {
		return nil, err
	}
	snaps, err := limited(q, out.Snapshots)
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(snaps))
	for _, s := range snaps {
		views = append(views, proxySnapshotView(s))
	}
	return okReply(map[string]any{"snapshots": views})
}

func (a *API) proxySnapshotShow(q *request) (*reply, error) {
	s, err := q.proxySnapshot(q.param("snap"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"snapshot": proxySnapshotView(s)})
}

// proxySnapshotCreate answers POST /os-snapshots: a snapshot of the
// volume, of an in-use one only with force, as Cinder's create_snapshot
// and create_snapshot_force.
func (a *API) proxySnapshotCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, proxySnapshotCreateSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "snapshot")
	volumeID, _ := stringOf(in, "volume_id")
	force := false
	if f, ok := in["force"]; ok {
		force = boolOf(f)
	}
	s := &structs.VolumeSnapshot{VolumeID: volumeID, UserID: q.token.UserID}
	s.Name, _ = stringOf(in, "display_name")
	s.Description, _ = stringOf(in, "display_description")
	var out structs.SingleVolumeSnapshotResponse
	err = q.call("Volume.SnapshotCreate", &structs.VolumeSnapshotCreateRequest{ProjectID: q.token.ProjectID, Snapshot: s, Force: force}, &out)
	if err != nil {
		if k := structs.KindOf(err); k == structs.KindInvalid || k == structs.KindConflict || k == structs.KindNotFound {
			return nil, badRequest("Invalid input received: %s", structs.Message(err))
		}
		return nil, err
	}
	return okReply(map[string]any{"snapshot": proxySnapshotView(out.Snapshot)})
}

func (a *API) proxySnapshotDelete(q *request) (*reply, error) {
	id := q.param("snap")
	err := q.call("Volume.SnapshotDelete", &structs.VolumeSnapshotDeleteRequest{SnapshotID: id, ProjectID: q.token.ProjectID}, &structs.GenericResponse{})
	if err != nil {
		return nil, notFoundAs(err, "Snapshot %s could not be found.", id)
	}
	return &reply{status: http.StatusAccepted}, nil
}
