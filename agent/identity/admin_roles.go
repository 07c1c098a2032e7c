package identity

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// The admin APIs for roles, role grants on projects, role assignments
// and domains. All need the admin role.

func (s *Service) getRole(r *http.Request, id string) (*structs.Role, error) {
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindRoles, ID: id})
	if err != nil {
		return nil, err
	}
	if len(resp.Roles) == 0 {
		return nil, errNotFound("role", id)
	}
	return resp.Roles[0], nil
}

func (s *Service) roleList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindRoles, Name: r.URL.Query().Get("name")})
	if err != nil {
		return 0, nil, err
	}
	roles := resp.Roles
	if d := r.URL.Query().Get("domain_id"); d != "" {
		roles = nil // Stratus has global roles only.
	}
	return http.StatusOK, map[string]any{"roles": s.roleViews(r, roles), "links": s.listLinks(r)}, nil
}

func (s *Service) roleCreate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		Role *struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			DomainID    *string        `json:"domain_id"`
			Options     map[string]any `json:"options"`
		} `json:"role"`
	}
	if err := decodeJSON(w, r, &body); err != nil {
		return 0, nil, err
	}
	if body.Role == nil || body.Role.Name == "" {
		return 0, nil, errBadRequest("'name' is a required property.")
	}
	if body.Role.DomainID != nil {
		return 0, nil, errBadRequest("Domain-specific roles are not supported.")
	}
	role := &structs.Role{Name: body.Role.Name, Description: body.Role.Description}
	resp, err := s.upsert(r, &structs.IdentityUpsertRequest{Roles: []*structs.Role{role}}, "role", role.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"role": s.roleView(r, resp.Roles[0])}, nil
}

func (s *Service) roleGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	role, err := s.getRole(r, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"role": s.roleView(r, role)}, nil
}

func (s *Service) roleDelete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id := r.PathValue("id")
	if err := s.remove(r, &structs.IdentityDeleteRequest{RoleIDs: []string{id}}, "role", id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// grantTarget checks that the project and user of a grant path exist
// (and the role, when the path names one).
func (s *Service) grantTarget(r *http.Request) (*structs.RoleAssignment, error) {
	a := &structs.RoleAssignment{ProjectID: r.PathValue("project"), UserID: r.PathValue("user"), RoleID: r.PathValue("role")}
	if a.RoleID != "" {
		if _, err := s.getRole(r, a.RoleID); err != nil {
			return nil, err
		}
	}
	if _, err := s.getProject(r, a.ProjectID); err != nil {
		return nil, err
	}
	if _, err := s.getUser(r, a.UserID); err != nil {
		return nil, err
	}
	return a, nil
}

func errNoGrant(a *structs.RoleAssignment) error {
	return &apiError{code: http.StatusNotFound, msg: "Could not find role assignment with role: " + a.RoleID +
		", user or group: " + a.UserID + ", project, domain, or system: " + a.ProjectID + "."}
}

// grantList answers GET /v3/projects/{p}/users/{u}/roles.
func (s *Service) grantList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	a, err := s.grantTarget(r)
	if err != nil {
		return 0, nil, err
	}
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindRoles, UserID: a.UserID, ProjectID: a.ProjectID})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"roles": s.roleViews(r, resp.Roles), "links": s.listLinks(r)}, nil
}

// grantCreate answers PUT /v3/projects/{p}/users/{u}/roles/{r}.
func (s *Service) grantCreate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	a, err := s.grantTarget(r)
	if err != nil {
		return 0, nil, err
	}
	if _, err := s.upsert(r, &structs.IdentityUpsertRequest{Assignments: []*structs.RoleAssignment{a}}, "role assignment", ""); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// grantCheck answers HEAD and GET /v3/projects/{p}/users/{u}/roles/{r}.
func (s *Service) grantCheck(w http.ResponseWriter, r *http.Request) (int, any, error) {
	a, err := s.grantTarget(r)
	if err != nil {
		return 0, nil, err
	}
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindAssignments, UserID: a.UserID, ProjectID: a.ProjectID, RoleID: a.RoleID})
	if err != nil {
		return 0, nil, err
	}
	if len(resp.Assignments) == 0 {
		return 0, nil, errNoGrant(a)
	}
	return http.StatusNoContent, nil, nil
}

// grantDelete answers DELETE /v3/projects/{p}/users/{u}/roles/{r}.
func (s *Service) grantDelete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	a, err := s.grantTarget(r)
	if err != nil {
		return 0, nil, err
	}
	var resp structs.GenericResponse
	err = s.callAs(r, "Identity.Delete", &structs.IdentityDeleteRequest{Assignments: []*structs.RoleAssignment{a}}, &resp)
	if structs.KindOf(err) == structs.KindNotFound {
		return 0, nil, errNoGrant(a)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// assignmentList answers GET /v3/role_assignments with the filters
// user.id, scope.project.id and role.id, and ?include_names. Stratus has
// no groups, domain or system grants: filtering on them finds nothing,
// and effective assignments are the direct ones.
func (s *Service) assignmentList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	out := []map[string]any{}
	links := s.listLinks(r)
	if q.Get("group.id") != "" || q.Get("scope.domain.id") != "" || q.Has("scope.system") {
		return http.StatusOK, map[string]any{"role_assignments": out, "links": links}, nil
	}
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindAssignments,
		UserID: q.Get("user.id"), ProjectID: q.Get("scope.project.id"), RoleID: q.Get("role.id")})
	if err != nil {
		return 0, nil, err
	}
	names := q.Has("include_names") && q.Get("include_names") != "false" && q.Get("include_names") != "0"
	users, projects, roles := map[string]*structs.User{}, map[string]*structs.Project{}, map[string]*structs.Role{}
	if names {
		all := map[string]*structs.IdentityListResponse{}
		for _, kind := range []string{structs.IdentityKindUsers, structs.IdentityKindProjects, structs.IdentityKindRoles} {
			if all[kind], err = s.list(r, &structs.IdentityListRequest{Kind: kind}); err != nil {
				return 0, nil, err
			}
		}
		for _, u := range all[structs.IdentityKindUsers].Users {
			users[u.ID] = u
		}
		for _, p := range all[structs.IdentityKindProjects].Projects {
			projects[p.ID] = p
		}
		for _, role := range all[structs.IdentityKindRoles].Roles {
			roles[role.ID] = role
		}
	}
	base := s.base(r) + "/identity/v3"
	for _, a := range resp.Assignments {
		user, project, role := map[string]any{"id": a.UserID}, map[string]any{"id": a.ProjectID}, map[string]any{"id": a.RoleID}
		if u := users[a.UserID]; u != nil {
			user["name"], user["domain"] = u.Name, domainRef(u.DomainID)
		}
		if p := projects[a.ProjectID]; p != nil {
			project["name"], project["domain"] = p.Name, domainRef(p.DomainID)
		}
		if rl := roles[a.RoleID]; rl != nil {
			role["name"] = rl.Name
		}
		out = append(out, map[string]any{
			"links": map[string]string{"assignment": base + "/projects/" + a.ProjectID + "/users/" + a.UserID + "/roles/" + a.RoleID},
			"role":  role, "scope": map[string]any{"project": project}, "user": user,
		})
	}
	return http.StatusOK, map[string]any{"role_assignments": out, "links": links}, nil
}

// domainView is the one domain Stratus serves.
func (s *Service) domainView(r *http.Request) map[string]any {
	return map[string]any{
		"id": structs.DefaultDomainID, "name": structs.DefaultDomainName, "enabled": true,
		"description": "The default domain", "tags": []string{}, "options": map[string]any{},
		"links": selfLink{Self: s.base(r) + "/identity/v3/domains/" + structs.DefaultDomainID},
	}
}

func (s *Service) domainList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	q := r.URL.Query()
	domains := []map[string]any{}
	enabledOK := true
	if v := q.Get("enabled"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return 0, nil, errBadRequest("Invalid input for query 'enabled': %q is not a boolean.", v)
		}
		enabledOK = b
	}
	if name := q.Get("name"); enabledOK && (name == "" || strings.EqualFold(name, structs.DefaultDomainName)) {
		domains = append(domains, s.domainView(r))
	}
	return http.StatusOK, map[string]any{"domains": domains, "links": s.listLinks(r)}, nil
}

func (s *Service) domainGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	if id := r.PathValue("id"); id != structs.DefaultDomainID {
		return 0, nil, errNotFound("domain", id)
	}
	return http.StatusOK, map[string]any{"domain": s.domainView(r)}, nil
}
