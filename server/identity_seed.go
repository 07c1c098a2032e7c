package server

import (
	"github.com/stratus-cloud/stratus/structs"
)

// devUser is one of devstack's users: a password and a role on a
// project of the same name.
type devUser struct{ name, password, project, role string }

var (
	devRoles    = []string{"admin", "member", "reader"}
	devProjects = []string{"admin", "demo"}
	devUsers    = []devUser{
		{name: "admin", password: "admin", project: "admin", role: "admin"},
		{name: "demo", password: "demo", project: "demo", role: "member"},
	}
)

// SeedDevIdentity creates devstack's identity objects: roles admin,
// member and reader; projects admin and demo in the default domain; user
// admin (password admin) with role admin on project admin and user demo
// (password demo) with role member on project demo. Whatever already
// exists by name is left as it is, so it is idempotent. It writes through
// the Identity endpoint, so it works on any server.
func (s *Server) SeedDevIdentity() error {
	err := s.seedDevIdentity()
	if structs.KindOf(err) == structs.KindConflict {
		// Someone created the same names concurrently: look again.
		err = s.seedDevIdentity()
	}
	return err
}

func (s *Server) seedDevIdentity() error {
	list := func(kind string) (*structs.IdentityListResponse, error) {
		var resp structs.IdentityListResponse
		err := s.RPC("Identity.List", &structs.IdentityListRequest{Kind: kind}, &resp)
		return &resp, err
	}
	have := func() (roles, projects, users map[string]string, err error) {
		roles, projects, users = map[string]string{}, map[string]string{}, map[string]string{}
		var r, p, u *structs.IdentityListResponse
		if r, err = list(structs.IdentityKindRoles); err != nil {
			return
		}
		if p, err = list(structs.IdentityKindProjects); err != nil {
			return
		}
		if u, err = list(structs.IdentityKindUsers); err != nil {
			return
		}
		for _, x := range r.Roles {
			roles[x.Name] = x.ID
		}
		for _, x := range p.Projects {
			if x.DomainID == structs.DefaultDomainID {
				projects[x.Name] = x.ID
			}
		}
		for _, x := range u.Users {
			if x.DomainID == structs.DefaultDomainID {
				users[x.Name] = x.ID
			}
		}
		return
	}
	roles, projects, users, err := have()
	if err != nil {
		return err
	}
	req := &structs.IdentityUpsertRequest{Passwords: map[string]string{}}
	for _, name := range devRoles {
		if roles[name] == "" {
			req.Roles = append(req.Roles, &structs.Role{Name: name})
		}
	}
	for _, name := range devProjects {
		if projects[name] == "" {
			req.Projects = append(req.Projects, &structs.Project{Name: name, DomainID: structs.DefaultDomainID,
				Enabled: true, Description: "devstack's " + name + " project"})
		}
	}
	for _, u := range devUsers {
		if users[u.name] == "" {
			req.Users = append(req.Users, &structs.User{Name: u.name, DomainID: structs.DefaultDomainID, Enabled: true})
			req.Passwords[u.name] = u.password
		}
	}
	if len(req.Roles)+len(req.Projects)+len(req.Users) > 0 {
		var resp structs.IdentityUpsertResponse
		if err := s.RPC("Identity.Upsert", req, &resp); err != nil {
			return err
		}
		for _, x := range resp.Roles {
			roles[x.Name] = x.ID
		}
		for _, x := range resp.Projects {
			projects[x.Name] = x.ID
		}
		for _, x := range resp.Users {
			users[x.Name] = x.ID
		}
	}
	assign := &structs.IdentityUpsertRequest{}
	for _, u := range devUsers {
		a := &structs.RoleAssignment{UserID: users[u.name], ProjectID: projects[u.project], RoleID: roles[u.role]}
		var existing structs.IdentityListResponse
		err := s.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindAssignments,
			UserID: a.UserID, ProjectID: a.ProjectID, RoleID: a.RoleID}, &existing)
		if err != nil {
			return err
		}
		if len(existing.Assignments) == 0 {
			assign.Assignments = append(assign.Assignments, a)
		}
	}
	if len(assign.Assignments) == 0 {
		return nil
	}
	var resp structs.IdentityUpsertResponse
	if err := s.RPC("Identity.Upsert", assign, &resp); err != nil {
		return err
	}
	s.logger.Info("dev mode: seeded identity (users admin/admin and demo/demo)")
	return nil
}
