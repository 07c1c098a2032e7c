package identity

import (
	"net/http"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Keystone's application credentials: a user creates one for the
// project its token is scoped to, with a subset of the token's roles,
// and automation authenticates with its id (or name and user) and
// secret (method application_credential, auth.go). The secret is
// answered once, at creation; the servers keep only a hash. A user
// manages its own; an admin lists, shows and deletes anyone's.

// appCredView is an application credential as Keystone shows it.
type appCredView struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Description  *string    `json:"description"`
	UserID       string     `json:"user_id"`
	ProjectID    string     `json:"project_id"`
	Roles        []roleRef  `json:"roles"`
	ExpiresAt    *string    `json:"expires_at"`
	Unrestricted bool       `json:"unrestricted"`
	AccessRules  []struct{} `json:"access_rules"`
	Secret       string     `json:"secret,omitempty"`
	Links        selfLink   `json:"links"`
}

// roleRef is a role in an application credential.
type roleRef struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	DomainID *string `json:"domain_id"`
}

// appCredTime is Keystone's format of expires_at: UTC, microseconds, no
// zone.
const appCredTime = "2006-01-02T15:04:05.000000"

func (s *Service) appCredView(r *http.Request, c *structs.ApplicationCredential, roles map[string]*structs.Role) appCredView {
	v := appCredView{ID: c.ID, Name: c.Name, UserID: c.UserID, ProjectID: c.ProjectID, Roles: []roleRef{},
		Unrestricted: c.Unrestricted, AccessRules: []struct{}{},
		Links: selfLink{Self: s.base(r) + "/identity/v3/users/" + c.UserID + "/application_credentials/" + c.ID}}
	if c.Description != "" {
		v.Description = &c.Description
	}
	if c.ExpiresAt != 0 {
		at := time.Unix(0, c.ExpiresAt).UTC().Format(appCredTime)
		v.ExpiresAt = &at
	}
	for _, id := range c.RoleIDs {
		if role := roles[id]; role != nil {
			v.Roles = append(v.Roles, roleRef{ID: role.ID, Name: role.Name})
		}
	}
	return v
}

// appCredOwner verifies the caller and that it may manage the
// application credentials of the path's user: itself, or any user's
// for an admin (not create: Keystone creates only the caller's own).
func (s *Service) appCredOwner(r *http.Request, action string) (*Token, string, error) {
	t, err := s.authenticated(r)
	if err != nil {
		return nil, "", err
	}
	id := r.PathValue("id")
	if t.UserID != id && (!t.IsAdmin() || action == "create_application_credential") {
		return nil, "", errForbidden(action)
	}
	if t.AppCredRestricted && action != "get_application_credential" && action != "list_application_credentials" {
		return nil, "", &apiError{code: http.StatusForbidden, msg: "You are not authorized to perform the requested action: " +
			"Using method 'application_credential' is not allowed for managing additional application credentials."}
	}
	return t, id, nil
}

// appCredCreateBody is the body of a create.
type appCredCreateBody struct {
	ApplicationCredential *struct {
		Name         string     `json:"name"`
		Description  *string    `json:"description"`
		Secret       *string    `json:"secret"`
		ExpiresAt    *string    `json:"expires_at"`
		Roles        []nameOrID `json:"roles"`
		Unrestricted *bool      `json:"unrestricted"`
		AccessRules  []any      `json:"access_rules"`
	} `json:"application_credential"`
}

// parseExpiry reads expires_at as Keystone does: ISO 8601, UTC when it
// has no zone.
func parseExpiry(s string) (int64, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixNano(), nil
		}
	}
	return 0, errBadRequest("Invalid input for field 'expires_at': %q is not an ISO 8601 date and time.", s)
}

// appCredRequest checks a create's body against the caller's token.
func appCredRequest(t *Token, userID string, body *appCredCreateBody) (*structs.AppCredCreateRequest, error) {
	ac := body.ApplicationCredential
	if ac == nil {
		return nil, errBadRequest("'application_credential' is a required property.")
	}
	if strings.TrimSpace(ac.Name) == "" {
		return nil, errBadRequest("Invalid input for field 'name': the name is required.")
	}
	if len(ac.AccessRules) > 0 {
		return nil, errBadRequest("Invalid input for field 'access_rules': access rules are not supported.")
	}
	req := &structs.AppCredCreateRequest{UserID: userID, ProjectID: t.ProjectID, Name: ac.Name}
	if ac.Description != nil {
		req.Description = *ac.Description
	}
	if ac.Secret != nil {
		if *ac.Secret == "" {
			return nil, errBadRequest("Invalid input for field 'secret': the secret may not be empty.")
		}
		req.Secret = *ac.Secret
	}
	if ac.Unrestricted != nil {
		req.Unrestricted = *ac.Unrestricted
	}
	if ac.ExpiresAt != nil && *ac.ExpiresAt != "" {
		at, err := parseExpiry(*ac.ExpiresAt)
		if err != nil {
			return nil, err
		}
		if at <= time.Now().UnixNano() {
			return nil, errBadRequest("Invalid input for field 'expires_at': the time is in the past.")
		}
		req.ExpiresAt = at
	}
	// The roles are the token's by default, and a subset of them.
	if len(ac.Roles) == 0 {
		req.Roles = append(req.Roles, t.RoleIDs...)
	}
	for _, want := range ac.Roles {
		found := ""
		for i, name := range t.Roles {
			if (want.ID != "" && want.ID == t.RoleIDs[i]) || (want.ID == "" && want.Name != "" && strings.EqualFold(want.Name, name)) {
				found = t.RoleIDs[i]
			}
		}
		if found == "" {
			return nil, errBadRequest("Invalid input for field 'roles': role %s is not one the token carries.", firstOf(want.ID, want.Name))
		}
		req.Roles = append(req.Roles, found)
	}
	return req, nil
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Service) appCredCreate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, userID, err := s.appCredOwner(r, "create_application_credential")
	if err != nil {
		return 0, nil, err
	}
	if !t.IsScoped() {
		return 0, nil, &apiError{code: http.StatusForbidden, msg: "An application credential is created with a project-scoped token."}
	}
	var body appCredCreateBody
	if err := decodeJSON(w, r, &body); err != nil {
		return 0, nil, err
	}
	req, err := appCredRequest(t, userID, &body)
	if err != nil {
		return 0, nil, err
	}
	var resp structs.AppCredResponse
	if err := s.callAs(r, "Identity.AppCredCreate", req, &resp); err != nil {
		return 0, nil, err
	}
	roles := map[string]*structs.Role{}
	for _, role := range resp.Roles {
		roles[role.ID] = role
	}
	v := s.appCredView(r, resp.Credential, roles)
	v.Secret = resp.Secret
	return http.StatusCreated, map[string]any{"application_credential": v}, nil
}

func (s *Service) appCredList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	_, userID, err := s.appCredOwner(r, "list_application_credentials")
	if err != nil {
		return 0, nil, err
	}
	var resp structs.AppCredListResponse
	req := &structs.AppCredListRequest{UserID: userID, Name: r.URL.Query().Get("name")}
	if err := s.callAs(r, "Identity.AppCredList", req, &resp); err != nil {
		return 0, nil, err
	}
	out := make([]appCredView, 0, len(resp.Credentials))
	for _, c := range resp.Credentials {
		out = append(out, s.appCredView(r, c, resp.Roles))
	}
	return http.StatusOK, map[string]any{"application_credentials": out, "links": s.listLinks(r)}, nil
}

func (s *Service) appCredGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	_, userID, err := s.appCredOwner(r, "get_application_credential")
	if err != nil {
		return 0, nil, err
	}
	var resp structs.AppCredListResponse
	if err := s.callAs(r, "Identity.AppCredList", &structs.AppCredListRequest{UserID: userID, ID: r.PathValue("cred")}, &resp); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"application_credential": s.appCredView(r, resp.Credentials[0], resp.Roles)}, nil
}

func (s *Service) appCredDelete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	_, userID, err := s.appCredOwner(r, "delete_application_credential")
	if err != nil {
		return 0, nil, err
	}
	var resp structs.GenericResponse
	if err := s.callAs(r, "Identity.AppCredDelete", &structs.AppCredDeleteRequest{UserID: userID, ID: r.PathValue("cred")}, &resp); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
