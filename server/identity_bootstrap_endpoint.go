package server

import (
	"crypto/rand"
	"encoding/base64"

	"github.com/stratus-cloud/stratus/structs"
)

// bootstrapName names the first administrator, its project and role,
// as Keystone's `keystone-manage bootstrap` defaults.
const bootstrapName = "admin"

// Bootstrap creates the cluster's first administrator exactly once, as
// `nomad acl bootstrap`: user admin with a generated password and the
// admin role on project admin, plus the member and reader roles Nova's
// policy expects. Once any user exists it is a conflict and changes
// nothing; the FSM decides that, so two racing calls cannot both win.
func (e *Identity) Bootstrap(args *structs.IdentityBootstrapRequest, reply *structs.IdentityBootstrapResponse) error {
	if done, err := e.srv.forward("Identity.Bootstrap", args, args, reply); done {
		return err
	}
	state := e.srv.fsm.State()
	if users, err := state.Users(nil); err != nil {
		return err
	} else if len(users) > 0 {
		return structs.Errorf(structs.KindConflict, "the cluster is already bootstrapped: it has users")
	}
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	password := base64.RawURLEncoding.EncodeToString(secret)
	roles, err := state.Roles(nil)
	if err != nil {
		return err
	}
	roleIDs := map[string]string{}
	for _, r := range roles {
		roleIDs[r.Name] = r.ID
	}
	req := &structs.IdentityUpsertRequest{}
	for _, name := range []string{"admin", "member", "reader"} {
		if roleIDs[name] == "" {
			roleIDs[name] = newIdentityID()
			req.Roles = append(req.Roles, &structs.Role{ID: roleIDs[name], Name: name})
		}
	}
	projectID, err := e.bootstrapProject(req)
	if err != nil {
		return err
	}
	userID := newIdentityID()
	req.Users = append(req.Users, &structs.User{ID: userID, Name: bootstrapName, DomainID: structs.DefaultDomainID,
		DefaultProjectID: projectID, Enabled: true})
	req.Passwords = map[string]string{userID: password}
	req.Assignments = append(req.Assignments, &structs.RoleAssignment{UserID: userID, ProjectID: projectID, RoleID: roleIDs["admin"]})
	entry, err := e.upsertEntry(req)
	if err != nil {
		return err
	}
	entry.Bootstrap = true
	index, err := e.srv.apply(structs.IdentityUpsertType, entry)
	if err != nil {
		return err
	}
	*reply = structs.IdentityBootstrapResponse{UserID: userID, UserName: bootstrapName, Password: password,
		ProjectID: projectID, ProjectName: bootstrapName, DomainID: structs.DefaultDomainID}
	reply.Index = index
	return nil
}

// bootstrapProject returns the id of the admin project, adding it to the
// request unless it exists already.
func (e *Identity) bootstrapProject(req *structs.IdentityUpsertRequest) (string, error) {
	projects, err := e.srv.fsm.State().Projects(nil)
	if err != nil {
		return "", err
	}
	for _, p := range projects {
		if p.Name == bootstrapName && p.DomainID == structs.DefaultDomainID {
			return p.ID, nil
		}
	}
	id := newIdentityID()
	req.Projects = append(req.Projects, &structs.Project{ID: id, Name: bootstrapName, DomainID: structs.DefaultDomainID,
		Description: "Bootstrap project for initializing the cloud.", Enabled: true})
	return id, nil
}
