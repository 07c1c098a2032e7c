package native

import (
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// The native API's S3 routes: turning an object into an image, and EC2
// credentials. The native API is the operator's: it may use any bucket
// and manage anyone's credentials.

// imageImportBody is the body of POST /v1/images/import.
type imageImportBody struct {
	Bucket string
	Key    string
	Image  *structs.Image
}

// imageImport creates an active image whose data is an object's.
func (a *API) imageImport(w http.ResponseWriter, q *request) (any, error) {
	var body imageImportBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	if body.Image == nil {
		body.Image = &structs.Image{}
	}
	args := structs.S3ImageImportRequest{Bucket: body.Bucket, Key: body.Key, Image: body.Image,
		Caller: structs.S3Caller{ProjectID: body.Image.Owner, Admin: true}}
	var out structs.SingleImageResponse
	if err := q.rpc.RPC("S3.ImageImport", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.Image, nil
}

// identityID resolves a user or project given by id or name.
func identityID(q *request, kind, ref string) (string, error) {
	for _, req := range []*structs.IdentityListRequest{{Kind: kind, ID: ref}, {Kind: kind, Name: ref}} {
		var out structs.IdentityListResponse
		if err := q.rpc.RPC("Identity.List", req, &out); err != nil {
			return "", err
		}
		switch {
		case kind == structs.IdentityKindUsers && len(out.Users) == 1:
			return out.Users[0].ID, nil
		case kind == structs.IdentityKindProjects && len(out.Projects) == 1:
			return out.Projects[0].ID, nil
		}
	}
	return "", structs.Errorf(structs.KindNotFound, "no %s %q", strings.TrimSuffix(kind, "s"), ref)
}

func (a *API) s3CredentialList(w http.ResponseWriter, q *request) (any, error) {
	ref := q.URL.Query().Get("user")
	if ref == "" {
		return nil, structs.Errorf(structs.KindInvalid, "name the user: ?user=<id or name>")
	}
	userID, err := identityID(q, structs.IdentityKindUsers, ref)
	if err != nil {
		return nil, err
	}
	var out structs.EC2CredentialListResponse
	args := structs.EC2CredentialListRequest{UserID: userID}
	if err := q.rpc.RPC("S3.CredentialList", &args, &out); err != nil {
		return nil, err
	}
	if out.Credentials == nil {
		out.Credentials = []*structs.EC2Credential{}
	}
	return out.Credentials, nil
}

// s3CredentialBody is the body of POST /v1/s3/credentials: a user and a
// project, each by id or name.
type s3CredentialBody struct {
	User    string
	Project string
}

func (a *API) s3CredentialCreate(w http.ResponseWriter, q *request) (any, error) {
	var body s3CredentialBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	userID, err := identityID(q, structs.IdentityKindUsers, body.User)
	if err != nil {
		return nil, err
	}
	projectID, err := identityID(q, structs.IdentityKindProjects, body.Project)
	if err != nil {
		return nil, err
	}
	var out structs.EC2CredentialResponse
	args := structs.EC2CredentialCreateRequest{UserID: userID, ProjectID: projectID}
	if err := q.rpc.RPC("S3.CredentialCreate", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return out.Credential, nil
}

func (a *API) s3CredentialDelete(w http.ResponseWriter, q *request) (any, error) {
	var out structs.GenericResponse
	args := structs.EC2CredentialDeleteRequest{Access: q.param("access")}
	if err := q.rpc.RPC("S3.CredentialDelete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
