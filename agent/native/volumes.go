package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// Volumes on the native API (cloudctl volume): a thin view of the Volume
// endpoint. A volume belongs to the caller's project, or to the project
// an operator names without a token.

// volumeCreateJSON is the body of POST /v1/volumes.
type volumeCreateJSON struct {
	Name           string
	Description    string
	SizeGB         int
	ImageID        string
	SnapshotID     string
	SourceVolumeID string
	AZ             string
	ProjectID      string
}

// volumeOwner is the project and user a write is for: the token's
// (verified here when ACLs are off and the request carries one), else
// the project the body or ?project names. An admin may name another
// project.
func (a *API) volumeOwner(q *request, named string) (project, user string, err error) {
	project, user, admin := a.caller(q)
	if project != "" && (named == "" || !admin) {
		return project, user, nil
	}
	p, err := q.volumeProject(named)
	return p, user, err
}

// caller is who the request's token says sent it: the ACL subject, or,
// with ACLs off, the token verified here when the request carries one
// (empty for an anonymous request). Instances and volumes a token
// creates belong to its project either way, so they can be joined.
func (a *API) caller(q *request) (project, user string, admin bool) {
	if s := q.subject; s != nil {
		return s.ProjectID, s.UserID, s.IsAdmin()
	}
	if q.token == "" || a.cfg.Verifier == nil {
		return "", "", false
	}
	tok, err := a.cfg.Verifier.Verify(q.token)
	if err != nil || tok == nil {
		return "", "", false
	}
	return tok.ProjectID, tok.UserID, tok.IsAdmin()
}

// nonAdminToken reports whether the request carries a token without the
// admin role.
func (a *API) nonAdminToken(q *request) bool {
	if s := q.subject; s != nil {
		return !s.IsAdmin()
	}
	if q.token == "" || a.cfg.Verifier == nil {
		return false
	}
	tok, err := a.cfg.Verifier.Verify(q.token)
	return err == nil && tok != nil && !tok.IsAdmin()
}

// volumeProject is the project the body or ?project names.
func (q *request) volumeProject(named string) (string, error) {
	if named == "" {
		named = q.URL.Query().Get("project")
	}
	if named == "" {
		return "", structs.Errorf(structs.KindInvalid, "a volume belongs to a project: send a project-scoped token or name the project")
	}
	return named, nil
}

func (a *API) volumeList(w http.ResponseWriter, q *request) (any, error) {
	args := structs.VolumeListRequest{ProjectID: q.URL.Query().Get("project")}
	if p := q.restrictedProject(); p != "" {
		args.ProjectID = p
	}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.VolumeListResponse
	if err := q.rpc.RPC("Volume.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Volumes == nil {
		out.Volumes = []*structs.Volume{}
	}
	return out.Volumes, nil
}

func (a *API) volumeCreate(w http.ResponseWriter, q *request) (any, error) {
	var body volumeCreateJSON
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	project, user, err := a.volumeOwner(q, body.ProjectID)
	if err != nil {
		return nil, err
	}
	v := &structs.Volume{Name: body.Name, Description: body.Description, SizeGB: body.SizeGB, ImageID: body.ImageID,
		SnapshotID: body.SnapshotID, SourceVolumeID: body.SourceVolumeID, AvailabilityZone: body.AZ, UserID: user}
	var out structs.SingleVolumeResponse
	if err := q.rpc.RPC("Volume.Create", &structs.VolumeCreateRequest{ProjectID: project, Volume: v}, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.Volume, nil
}

func (a *API) volumeGet(w http.ResponseWriter, q *request) (any, error) {
	args := structs.VolumeSpecificRequest{VolumeID: q.param("id"), ProjectID: q.restrictedProject()}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleVolumeResponse
	if err := q.rpc.RPC("Volume.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out.Volume, nil
}

func (a *API) volumeDelete(w http.ResponseWriter, q *request) (any, error) {
	force, err := boolParam(q, "force")
	if err != nil {
		return nil, err
	}
	if force && a.nonAdminToken(q) {
		// Checked here too: with ACLs off the servers do not check
		// the token, but a token says who the caller is.
		return nil, structs.Errorf(structs.KindPermission, "Policy doesn't allow volume_extension:volume_admin_actions:force_delete to be performed.")
	}
	args := structs.VolumeDeleteRequest{VolumeID: q.param("id"), ProjectID: q.restrictedProject(), Force: force}
	var out structs.GenericResponse
	if err := q.rpc.RPC("Volume.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

// volumeSnapshotJSON is the body of POST /v1/volumes/{id}/snapshot.
type volumeSnapshotJSON struct {
	Name        string
	Description string
	Force       bool
}

func (a *API) volumeSnapshot(w http.ResponseWriter, q *request) (any, error) {
	var body volumeSnapshotJSON
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	snap := &structs.VolumeSnapshot{VolumeID: q.param("id"), Name: body.Name, Description: body.Description}
	if s := q.subject; s != nil {
		snap.UserID = s.UserID
	}
	var out structs.SingleVolumeSnapshotResponse
	args := structs.VolumeSnapshotCreateRequest{ProjectID: q.restrictedProject(), Snapshot: snap, Force: body.Force}
	if err := q.rpc.RPC("Volume.SnapshotCreate", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.Snapshot, nil
}
