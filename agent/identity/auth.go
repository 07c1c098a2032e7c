package identity

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// nameOrID names a domain (or a user or project) by id or by name.
type nameOrID struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// authRequest is the body of POST /v3/auth/tokens.
type authRequest struct {
	Auth struct {
		Identity struct {
			Methods  []string `json:"methods"`
			Password *struct {
				User *struct {
					ID       string    `json:"id"`
					Name     string    `json:"name"`
					Domain   *nameOrID `json:"domain"`
					Password string    `json:"password"`
				} `json:"user"`
			} `json:"password"`
			Token *struct {
				ID string `json:"id"`
			} `json:"token"`
			ApplicationCredential *appCredAuth `json:"application_credential"`
		} `json:"identity"`
		// Scope is "unscoped" or an object; only project scope is served.
		Scope json.RawMessage `json:"scope"`
	} `json:"auth"`
}

// appCredAuth is method application_credential: the credential by id,
// or by name with its user (by id, or by name within a domain).
type appCredAuth struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Secret string `json:"secret"`
	User   *struct {
		ID     string    `json:"id"`
		Name   string    `json:"name"`
		Domain *nameOrID `json:"domain"`
	} `json:"user"`
}

// appCredIssue fills a token request of method application_credential.
func appCredIssue(ac *appCredAuth, scope json.RawMessage, issue *structs.TokenIssueRequest) error {
	if ac == nil {
		return errBadRequest("Expecting to find application_credential in identity.")
	}
	if len(scope) > 0 && string(scope) != "null" {
		// Keystone's: the credential's project is the scope.
		return &apiError{code: http.StatusUnauthorized, msg: "Application credentials cannot request a scope."}
	}
	if ac.Secret == "" {
		return errBadRequest("Expecting to find secret in application_credential.")
	}
	switch {
	case ac.ID != "":
	case ac.Name == "":
		return errBadRequest("Expecting to find id or name in application_credential.")
	case ac.User == nil || (ac.User.ID == "" && ac.User.Name == ""):
		return errBadRequest("Expecting to find user in application_credential.")
	case ac.User.ID == "" && ac.User.Domain == nil:
		return errBadRequest("Expecting to find domain in user.")
	}
	issue.AppCredID, issue.AppCredName, issue.AppCredSecret = ac.ID, ac.Name, ac.Secret
	if u := ac.User; u != nil && ac.ID == "" {
		issue.UserID, issue.UserName = u.ID, u.Name
		if u.Domain != nil {
			issue.UserDomainID, issue.UserDomainName = u.Domain.ID, u.Domain.Name
		}
	}
	return nil
}

// scopeRequest is an object scope.
type scopeRequest struct {
	Project *struct {
		ID     string    `json:"id"`
		Name   string    `json:"name"`
		Domain *nameOrID `json:"domain"`
	} `json:"project"`
	Domain *nameOrID      `json:"domain"`
	System map[string]any `json:"system"`
}

// applyScope copies a request's scope into an authentication request.
func applyScope(raw json.RawMessage, auth *structs.IdentityAuthRequest) error {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `"unscoped"` {
		return nil
	}
	var sc scopeRequest
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return errBadRequest("Invalid input for field 'scope': %v.", err)
	}
	if sc.Domain != nil || sc.System != nil {
		return errBadRequest("Only project scope is supported; domain and system scopes are not.")
	}
	if sc.Project == nil {
		return errBadRequest("Expecting to find project in scope.")
	}
	if sc.Project.ID == "" && sc.Project.Name == "" {
		return errBadRequest("Expecting to find id or name in project.")
	}
	auth.ProjectID, auth.ProjectName = sc.Project.ID, sc.Project.Name
	if d := sc.Project.Domain; d != nil {
		auth.ProjectDomainID, auth.ProjectDomainName = d.ID, d.Name
	}
	return nil
}

// issueToken answers POST /v3/auth/tokens: methods password and token,
// project scope or none, and application_credential, scoped to the
// credential's project.
func (s *Service) issueToken(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var req authRequest
	if err := decodeJSON(w, r, &req); err != nil {
		return 0, nil, err
	}
	ident := req.Auth.Identity
	if len(ident.Methods) == 0 {
		return 0, nil, errBadRequest("Expecting to find methods in identity.")
	}
	if len(ident.Methods) != 1 {
		return 0, nil, &apiError{code: http.StatusUnauthorized, msg: "Attempted to authenticate with an unsupported method."}
	}
	auth := &structs.IdentityAuthRequest{Method: ident.Methods[0]}
	if auth.Method != structs.AppCredTokenMethod {
		if err := applyScope(req.Auth.Scope, auth); err != nil {
			return 0, nil, err
		}
	}
	issue := &structs.TokenIssueRequest{Method: auth.Method, ProjectID: auth.ProjectID, ProjectName: auth.ProjectName,
		ProjectDomainID: auth.ProjectDomainID, ProjectDomainName: auth.ProjectDomainName}
	switch auth.Method {
	case "password":
		if ident.Password == nil || ident.Password.User == nil {
			return 0, nil, errBadRequest("Expecting to find user in password.")
		}
		u := ident.Password.User
		if u.ID == "" && u.Name == "" {
			return 0, nil, errBadRequest("Expecting to find id or name in user.")
		}
		issue.UserID, issue.UserName, issue.Password = u.ID, u.Name, u.Password
		if u.Domain != nil {
			issue.UserDomainID, issue.UserDomainName = u.Domain.ID, u.Domain.Name
		}
	case "token":
		if ident.Token == nil || ident.Token.ID == "" {
			return 0, nil, errBadRequest("Expecting to find id in token.")
		}
		// The servers verify it again; checking here first spares
		// them a forged or revoked token.
		if _, err := s.Verify(ident.Token.ID); err != nil {
			return 0, nil, errUnauthorized()
		}
		issue.Token = ident.Token.ID
	case structs.AppCredTokenMethod:
		if err := appCredIssue(ident.ApplicationCredential, req.Auth.Scope, issue); err != nil {
			return 0, nil, err
		}
	default:
		return 0, nil, &apiError{code: http.StatusUnauthorized, msg: "Attempted to authenticate with an unsupported method."}
	}
	t, tok, err := s.issue(issue)
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("X-Subject-Token", tok)
	// The access log names who logged in: the servers authenticated them.
	route.ObserveCaller(r.Context(), t.UserID, t.ProjectID)
	return http.StatusCreated, s.tokenView(r, t, !r.URL.Query().Has("nocatalog")), nil
}

// subject verifies the caller and the X-Subject-Token and checks that
// the caller may see it: its own token, or the caller is an admin or a
// service.
func (s *Service) subject(r *http.Request, action string) (*Token, error) {
	caller, err := s.authenticated(r)
	if err != nil {
		return nil, err
	}
	subj := r.Header.Get("X-Subject-Token")
	if subj == "" {
		return nil, errBadRequest("Expecting to find X-Subject-Token in the request headers.")
	}
	t, err := s.Verify(subj)
	if err != nil {
		return nil, &apiError{code: http.StatusNotFound, msg: "Failed to validate token"}
	}
	if caller.UserID != t.UserID && !caller.IsAdmin() && !caller.HasRole("service") {
		return nil, errForbidden(action)
	}
	return t, nil
}

// validateToken answers GET and HEAD /v3/auth/tokens.
func (s *Service) validateToken(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, err := s.subject(r, "validate_token")
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("X-Subject-Token", r.Header.Get("X-Subject-Token"))
	if r.Method == http.MethodHead {
		return http.StatusOK, nil, nil
	}
	return http.StatusOK, s.tokenView(r, t, !r.URL.Query().Has("nocatalog")), nil
}

// revokeToken answers DELETE /v3/auth/tokens.
func (s *Service) revokeToken(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, err := s.subject(r, "revoke_token")
	if err != nil {
		return 0, nil, err
	}
	var resp structs.GenericResponse
	if err := s.callAs(r, "Identity.RevokeToken", &structs.TokenRevokeRequest{AuditID: t.AuditID, ExpiresAt: t.ExpiresAt,
		Token: r.Header.Get("X-Subject-Token")}, &resp); err != nil {
		return 0, nil, err
	}
	s.markRevoked(t.AuditID, t.ExpiresAt)
	return http.StatusNoContent, nil, nil
}

// authCatalog answers GET /v3/auth/catalog.
func (s *Service) authCatalog(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, err := s.authenticated(r)
	if err != nil {
		return 0, nil, err
	}
	if !t.IsScoped() {
		return 0, nil, &apiError{code: http.StatusForbidden, msg: "A project-scoped token is required to produce a service catalog."}
	}
	return http.StatusOK, map[string]any{"catalog": s.catalog(r), "links": s.listLinks(r)}, nil
}

// authProjects answers GET /v3/auth/projects: the enabled projects the
// caller has a role on.
func (s *Service) authProjects(w http.ResponseWriter, r *http.Request) (int, any, error) {
	t, err := s.authenticated(r)
	if err != nil {
		return 0, nil, err
	}
	return s.projectsOf(r, t.UserID, true)
}

// projectsOf lists the projects a user has a role on.
func (s *Service) projectsOf(r *http.Request, userID string, enabledOnly bool) (int, any, error) {
	var resp structs.IdentityListResponse
	if err := s.callAs(r, "Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindProjects, UserID: userID}, &resp); err != nil {
		return 0, nil, err
	}
	var ps []*structs.Project
	for _, p := range resp.Projects {
		if p.Enabled || !enabledOnly {
			ps = append(ps, p)
		}
	}
	return http.StatusOK, map[string]any{"projects": s.projectViews(r, ps), "links": s.listLinks(r)}, nil
}
