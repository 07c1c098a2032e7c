package identity

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/stratus-cloud/stratus/structs"
)

// The admin APIs for projects and users. All need the admin role, but a
// user may read itself, list its projects and change its password.

// list reads identity objects of one kind.
func (s *Service) list(r *http.Request, req *structs.IdentityListRequest) (*structs.IdentityListResponse, error) {
	var resp structs.IdentityListResponse
	err := s.callAs(r, "Identity.List", req, &resp)
	return &resp, err
}

// upsert writes identity objects; a name conflict answers Keystone's 409.
func (s *Service) upsert(r *http.Request, req *structs.IdentityUpsertRequest, what, name string) (*structs.IdentityUpsertResponse, error) {
	var resp structs.IdentityUpsertResponse
	err := s.callAs(r, "Identity.Upsert", req, &resp)
	if structs.KindOf(err) == structs.KindConflict {
		msg := fmt.Sprintf("Conflict occurred attempting to store %s - Duplicate entry found with name %s", what, name)
		if what != "role" {
			msg += " at domain ID " + structs.DefaultDomainID
		}
		return nil, &apiError{code: http.StatusConflict, msg: msg + "."}
	}
	return &resp, err
}

// remove deletes identity objects; a missing one answers 404.
func (s *Service) remove(r *http.Request, req *structs.IdentityDeleteRequest, what, id string) error {
	var resp structs.GenericResponse
	err := s.callAs(r, "Identity.Delete", req, &resp)
	if structs.KindOf(err) == structs.KindNotFound {
		return errNotFound(what, id)
	}
	return err
}

func (s *Service) getProject(r *http.Request, id string) (*structs.Project, error) {
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindProjects, ID: id})
	if err != nil {
		return nil, err
	}
	if len(resp.Projects) == 0 {
		return nil, errNotFound("project", id)
	}
	c := *resp.Projects[0]
	return &c, nil
}

func (s *Service) getUser(r *http.Request, id string) (*structs.User, error) {
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindUsers, ID: id})
	if err != nil {
		return nil, err
	}
	if len(resp.Users) == 0 {
		return nil, errNotFound("user", id)
	}
	return resp.Users[0].Sanitized(), nil
}

// listFilter reads Keystone's common list filters: false when the
// domain_id asked for is not the one served.
func listFilter(r *http.Request) (enabled *bool, inDomain bool, err error) {
	q := r.URL.Query()
	if v := q.Get("enabled"); v != "" {
		b, perr := strconv.ParseBool(v)
		if perr != nil {
			return nil, false, errBadRequest("Invalid input for query 'enabled': %q is not a boolean.", v)
		}
		enabled = &b
	}
	d := q.Get("domain_id")
	return enabled, d == "" || d == structs.DefaultDomainID, nil
}

// projectBody is a project in a create or update request.
type projectBody struct {
	Name        opt[string]         `json:"name"`
	Description opt[string]         `json:"description"`
	DomainID    opt[string]         `json:"domain_id"`
	Enabled     opt[bool]           `json:"enabled"`
	IsDomain    opt[bool]           `json:"is_domain"`
	ParentID    opt[string]         `json:"parent_id"`
	Tags        opt[[]string]       `json:"tags"`
	Options     opt[map[string]any] `json:"options"`
}

// applyTo validates the body and sets its fields on p.
func (b *projectBody) applyTo(p *structs.Project) error {
	if b.Name.Set {
		p.Name = b.Name.V
	}
	if b.Description.Set {
		p.Description = b.Description.V
	}
	if b.Enabled.Set {
		p.Enabled = b.Enabled.V
	}
	if b.DomainID.Set && !b.DomainID.Null && b.DomainID.V != p.DomainID {
		return errNotFound("domain", b.DomainID.V)
	}
	if b.IsDomain.V {
		return errBadRequest("Projects acting as domains are not supported.")
	}
	if b.ParentID.Set && !b.ParentID.Null && b.ParentID.V != p.DomainID {
		return errBadRequest("Project hierarchies are not supported; the parent must be the domain.")
	}
	if len(b.Tags.V) > 0 {
		return errBadRequest("Project tags are not supported.")
	}
	return nil
}

func (s *Service) projectList(w http.ResponseWriter, r *http.Request) (int, any, error) {
	enabled, inDomain, err := listFilter(r)
	if err != nil {
		return 0, nil, err
	}
	resp, err := s.list(r, &structs.IdentityListRequest{Kind: structs.IdentityKindProjects, Name: r.URL.Query().Get("name")})
	if err != nil {
		return 0, nil, err
	}
	var ps []*structs.Project
	for _, p := range resp.Projects {
		if inDomain && (enabled == nil || p.Enabled == *enabled) && r.URL.Query().Get("is_domain") != "true" {
			ps = append(ps, p)
		}
	}
	return http.StatusOK, map[string]any{"projects": s.projectViews(r, ps), "links": s.listLinks(r)}, nil
}

func (s *Service) projectCreate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		Project *projectBody `json:"project"`
	}
	if err := decodeJSON(w, r, &body); err != nil {
		return 0, nil, err
	}
	if body.Project == nil || !body.Project.Name.Set || body.Project.Name.Null {
		return 0, nil, errBadRequest("'name' is a required property.")
	}
	p := &structs.Project{DomainID: structs.DefaultDomainID, Enabled: true}
	if err := body.Project.applyTo(p); err != nil {
		return 0, nil, err
	}
	resp, err := s.upsert(r, &structs.IdentityUpsertRequest{Projects: []*structs.Project{p}}, "project", p.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"project": s.projectView(r, resp.Projects[0])}, nil
}

func (s *Service) projectGet(w http.ResponseWriter, r *http.Request) (int, any, error) {
	p, err := s.getProject(r, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"project": s.projectView(r, p)}, nil
}

func (s *Service) projectUpdate(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body struct {
		Project *projectBody `json:"project"`
	}
	if err := decodeJSON(w, r, &body); err != nil {
		return 0, nil, err
	}
	if body.Project == nil {
		return 0, nil, errBadRequest("Expecting to find project in the request body.")
	}
	p, err := s.getProject(r, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	if err := body.Project.applyTo(p); err != nil {
		return 0, nil, err
	}
	resp, err := s.upsert(r, &structs.IdentityUpsertRequest{Projects: []*structs.Project{p}}, "project", p.Name)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"project": s.projectView(r, resp.Projects[0])}, nil
}

func (s *Service) projectDelete(w http.ResponseWriter, r *http.Request) (int, any, error) {
	id := r.PathValue("id")
	if err := s.remove(r, &structs.IdentityDeleteRequest{ProjectIDs: []string{id}}, "project", id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
