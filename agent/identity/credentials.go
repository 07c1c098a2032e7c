package identity

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// Keystone's OS-EC2 extension: EC2-style credentials (an access key and
// a secret) a user creates for one of its projects, which the S3 API
// (agent/s3) accepts as AWS Signature Version 4 keys. A user manages its
// own; an admin anyone's.

// ec2View is an EC2 credential as Keystone shows it.
type ec2View struct {
	UserID   string            `json:"user_id"`
	TenantID string            `json:"tenant_id"`
	Access   string            `json:"access"`
	Secret   string            `json:"secret"`
	TrustID  *string           `json:"trust_id"`
	Links    map[string]string `json:"links"`
}

func (s *Service) ec2View(r *http.Request, c *structs.EC2Credential) ec2View {
	return ec2View{UserID: c.UserID, TenantID: c.ProjectID, Access: c.Access, Secret: c.Secret,
		Links: map[string]string{"self": s.base(r) + "/identity/v3/users/" + c.UserID + "/credentials/OS-EC2/" + c.Access}}
}

// ec2Owner verifies the caller and that it may manage the credentials
// of the path's user: itself, or any user for an admin.
func (s *Service) ec2Owner(r *http.Request, action string) (*Token, string, error) {
	t, err := s.authenticated(r)
	if err != nil {
		return nil, "", err
	}
	id := r.PathValue("id")
	if t.UserID != id && !t.IsAdmin() {
		return nil, "", errForbidden(action)
	}
	return t, id, nil
}

func (s *Service) ec2Create(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, userID, err := s.ec2Owner(r, "ec2_create_credential")
	if err != nil {
		return 0, nil, err
	}
	var body struct {
		TenantID string `json:"tenant_id"`
	}
	if err := decodeJSON(w, r, &body); err != nil {
		return 0, nil, err
	}
	if body.TenantID == "" {
		return 0, nil, errBadRequest("'tenant_id' is a required property.")
	}
	if !t.IsAdmin() {
		// A user may only create credentials for a project it has a
		// role on.
		resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindProjects, UserID: userID, ID: body.TenantID})
		if err != nil {
			return 0, nil, err
		}
		if len(resp.Projects) == 0 {
			return 0, nil, errForbidden("ec2_create_credential")
		}
	}
	var resp structs.EC2CredentialResponse
	if err := s.callAs(r, "S3.CredentialCreate", &structs.EC2CredentialCreateRequest{UserID: userID, ProjectID: body.TenantID}, &resp); err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"credential": s.ec2View(r, resp.Credential)}, nil
}

func (s *Service) ec2List(w http.ResponseWriter, r *http.Request) (int, any, error) {
	_, userID, err := s.ec2Owner(r, "ec2_list_credentials")
	if err != nil {
		return 0, nil, err
	}
	var resp structs.EC2CredentialListResponse
	if err := s.callAs(r, "S3.CredentialList", &structs.EC2CredentialListRequest{UserID: userID}, &resp); err != nil {
		return 0, nil, err
	}
	out := make([]ec2View, 0, len(resp.Credentials))
	for _, c := range resp.Credentials {
		out = append(out, s.ec2View(r, c))
	}
	return http.StatusOK, map[string]any{"credentials": out, "links": s.listLinks(r)}, nil
}

func (s *Service) ec2Get(w http.ResponseWriter, r *http.Request) (int, any, error) {
	_, userID, err := s.ec2Owner(r, "ec2_get_credential")
	if err != nil {
		return 0, nil, err
	}
	var resp structs.EC2CredentialListResponse
	err = s.callAs(r, "S3.CredentialList", &structs.EC2CredentialListRequest{UserID: userID, Access: r.PathValue("access")}, &resp)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"credential": s.ec2View(r, resp.Credentials[0])}, nil
}

func (s *Service) ec2Delete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	_, userID, err := s.ec2Owner(r, "ec2_delete_credential")
	if err != nil {
		return 0, nil, err
	}
	var resp structs.GenericResponse
	if err := s.callAs(r, "S3.CredentialDelete", &structs.EC2CredentialDeleteRequest{UserID: userID, Access: r.PathValue("access")}, &resp); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
