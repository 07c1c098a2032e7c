package server

import (
	"errors"
	"maps"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// bcryptCost is the work factor of stored password hashes.
const bcryptCost = 10

// Identity is the endpoint for Keystone's data: projects, users, roles,
// role assignments, application credentials, token signing keys and
// revocations. The servers alone
// sign tokens (IssueToken); agents verify them with the public keys
// (agent/identity).
type Identity struct{ srv *Server }

// newIdentityID returns a Keystone-style id: a random uuid in hex.
func newIdentityID() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }

// errAuthFailed is the one answer to bad credentials of any kind.
func errAuthFailed() error {
	return structs.Errorf(structs.KindPermission, "%s", structs.AuthFailedMessage)
}

// dummyHash is compared against when the user is unknown, so an unknown
// name costs as much time as a wrong password.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("stratus-no-such-user"), bcryptCost)
	return h
})

// Authenticate checks a user's password and resolves the optional
// project scope, answering the user, the project and the user's roles on
// it. Any failure (unknown user, wrong password, disabled user or
// project, no role on the project) is the same KindPermission error.
func (e *Identity) Authenticate(args *structs.IdentityAuthRequest, reply *structs.IdentityAuthResponse) error {
	if done, err := e.srv.forward("Identity.Authenticate", args, args, reply); done {
		return err
	}
	if args.Method != "password" {
		// The token method trusts its caller with the user id: it is
		// for IssueToken, which verifies the token itself.
		return structs.Errorf(structs.KindInvalid, "Identity.Authenticate checks passwords only; exchange a token with Identity.IssueToken")
	}
	return e.srv.authenticateUser(args, reply)
}

// authenticateUser is Authenticate's check, also used to issue tokens.
func (s *Server) authenticateUser(args *structs.IdentityAuthRequest, reply *structs.IdentityAuthResponse) error {
	if args.Method != "password" && args.Method != "token" {
		return structs.Errorf(structs.KindInvalid, "authentication method %q is not supported", args.Method)
	}
	if args.UserID == "" && args.UserName == "" {
		return structs.Errorf(structs.KindInvalid, "Expecting to find id or name in user.")
	}
	if args.UserID == "" && args.UserDomainID == "" && args.UserDomainName == "" {
		return structs.Errorf(structs.KindInvalid, "Expecting to find domain in user.")
	}
	if args.Method == "token" && args.UserID == "" {
		return structs.Errorf(structs.KindInvalid, "token authentication needs the user id")
	}
	state := s.fsm.State()
	user, err := lookupUser(state, args.UserID, args.UserName, args.UserDomainID, args.UserDomainName)
	if err != nil {
		return err
	}
	if args.Method == "password" {
		hash := dummyHash()
		if user != nil && len(user.PasswordHash) > 0 {
			hash = user.PasswordHash
		}
		match := bcrypt.CompareHashAndPassword(hash, []byte(args.Password)) == nil
		if user == nil || len(user.PasswordHash) == 0 || !match {
			return errAuthFailed()
		}
	}
	if user == nil || !user.Enabled {
		return errAuthFailed()
	}
	reply.User = user.Sanitized()
	if args.ProjectID == "" && args.ProjectName == "" {
		return nil
	}
	if args.ProjectID == "" && args.ProjectDomainID == "" && args.ProjectDomainName == "" {
		return structs.Errorf(structs.KindInvalid, "Expecting to find domain in project.")
	}
	project, err := lookupProject(state, args.ProjectID, args.ProjectName, args.ProjectDomainID, args.ProjectDomainName)
	if err != nil {
		return err
	}
	if project == nil || !project.Enabled {
		return errAuthFailed()
	}
	roles, err := userRoles(state, user.ID, project.ID)
	if err != nil {
		return err
	}
	if len(roles) == 0 {
		return errAuthFailed()
	}
	reply.Project = project
	reply.Roles = roles
	return nil
}

// Upsert creates or updates identity objects. New objects (empty ID) get
// a generated id; passwords are hashed here so no plaintext enters the
// Raft log. Disabling a user or project, or changing a password, revokes
// the tokens issued before.
func (e *Identity) Upsert(args *structs.IdentityUpsertRequest, reply *structs.IdentityUpsertResponse) error {
	if done, err := e.srv.forward("Identity.Upsert", args, args, reply); done {
		return err
	}
	entry, err := e.upsertEntry(args)
	if err != nil {
		return err
	}
	state := e.srv.fsm.State()
	var events []*structs.RevokedToken
	for _, u := range entry.Users {
		old, err := state.UserByID(nil, u.ID)
		if err != nil {
			return err
		}
		if old != nil && ((old.Enabled && !u.Enabled) || u.PasswordHash != nil) {
			events = append(events, &structs.RevokedToken{UserID: u.ID})
		}
	}
	for _, p := range entry.Projects {
		old, err := state.ProjectByID(nil, p.ID)
		if err != nil {
			return err
		}
		if old != nil && old.Enabled && !p.Enabled {
			events = append(events, &structs.RevokedToken{ProjectID: p.ID})
		}
	}
	index, err := e.srv.apply(structs.IdentityUpsertType, entry)
	if err != nil {
		return err
	}
	reply.Index = index
	if len(events) > 0 {
		if reply.Index, err = e.srv.revokeTokens(events); err != nil {
			return err
		}
	}
	state = e.srv.fsm.State()
	for _, p := range entry.Projects {
		if stored, err := state.ProjectByID(nil, p.ID); err != nil {
			return err
		} else if stored != nil {
			reply.Projects = append(reply.Projects, stored)
		}
	}
	for _, u := range entry.Users {
		if stored, err := state.UserByID(nil, u.ID); err != nil {
			return err
		} else if stored != nil {
			reply.Users = append(reply.Users, stored.Sanitized())
		}
	}
	for _, r := range entry.Roles {
		if stored, err := state.RoleByID(nil, r.ID); err != nil {
			return err
		} else if stored != nil {
			reply.Roles = append(reply.Roles, stored)
		}
	}
	for _, a := range entry.Assignments {
		if stored, err := state.Assignment(nil, a.UserID, a.ProjectID, a.RoleID); err != nil {
			return err
		} else if stored != nil {
			reply.Assignments = append(reply.Assignments, stored)
		}
	}
	return nil
}

// upsertEntry validates a request and builds its Raft entry from copies
// (an in-process caller shares its objects with us).
func (e *Identity) upsertEntry(args *structs.IdentityUpsertRequest) (*structs.IdentityUpsertEntry, error) {
	if len(args.Projects)+len(args.Users)+len(args.Roles)+len(args.Assignments) == 0 {
		return nil, structs.Errorf(structs.KindInvalid, "no identity objects to upsert")
	}
	b := &upsertBuilder{entry: &structs.IdentityUpsertEntry{}, seen: map[string]bool{}, state: e.srv.fsm.State()}
	if err := b.projects(args.Projects); err != nil {
		return nil, err
	}
	if err := b.users(args.Users, args.Passwords); err != nil {
		return nil, err
	}
	if err := b.roles(args.Roles); err != nil {
		return nil, err
	}
	for _, a := range args.Assignments {
		if a == nil {
			return nil, structs.Errorf(structs.KindInvalid, "empty role assignment in request")
		}
		if err := a.Validate(); err != nil {
			return nil, err
		}
		c := *a
		b.entry.Assignments = append(b.entry.Assignments, &c)
	}
	return b.entry, nil
}

// upsertBuilder checks and completes an upsert request's objects into
// its entry: defaults, new ids, password hashes, and no object named
// twice.
type upsertBuilder struct {
	entry *structs.IdentityUpsertEntry
	seen  map[string]bool
	state *fsm.StateStore
}

func (b *upsertBuilder) once(key, what, name string) error {
	if b.seen[key] {
		return structs.Errorf(structs.KindInvalid, "%s %q appears twice in the request", what, name)
	}
	b.seen[key] = true
	return nil
}

func (b *upsertBuilder) projects(list []*structs.Project) error {
	for _, p := range list {
		if p == nil {
			return structs.Errorf(structs.KindInvalid, "empty project in request")
		}
		c := *p
		if c.DomainID == "" {
			c.DomainID = structs.DefaultDomainID
		}
		if c.ID == "" {
			c.ID = newIdentityID()
		}
		if err := c.Validate(); err != nil {
			return err
		}
		if err := errors.Join(b.once("p:"+c.ID, "project", c.ID), b.once("pn:"+c.Name, "project", c.Name)); err != nil {
			return err
		}
		b.entry.Projects = append(b.entry.Projects, &c)
	}
	return nil
}

// users completes the users, hashing the passwords given for them (by
// id, or by name for a new user); a password for a user not in the
// request is refused. A default project must exist or be in the
// request.
func (b *upsertBuilder) users(list []*structs.User, given map[string]string) error {
	passwords := maps.Clone(given)
	for _, u := range list {
		if u == nil {
			return structs.Errorf(structs.KindInvalid, "empty user in request")
		}
		c := *u
		c.PasswordHash = nil
		if c.DomainID == "" {
			c.DomainID = structs.DefaultDomainID
		}
		key := c.ID
		if c.ID == "" {
			c.ID, key = newIdentityID(), c.Name
		}
		if err := c.Validate(); err != nil {
			return err
		}
		if err := errors.Join(b.once("u:"+c.ID, "user", c.ID), b.once("un:"+c.Name, "user", c.Name)); err != nil {
			return err
		}
		if pw, ok := passwords[key]; ok {
			delete(passwords, key)
			hash, err := bcrypt.GenerateFromPassword([]byte(pw), bcryptCost)
			if err != nil {
				return structs.Errorf(structs.KindInvalid, "password of user %q: %v", c.Name, err)
			}
			c.PasswordHash = hash
		}
		if c.DefaultProjectID != "" && !b.seen["p:"+c.DefaultProjectID] {
			if p, err := b.state.ProjectByID(nil, c.DefaultProjectID); err != nil {
				return err
			} else if p == nil {
				return structs.Errorf(structs.KindInvalid, "default project %q of user %q does not exist", c.DefaultProjectID, c.Name)
			}
		}
		b.entry.Users = append(b.entry.Users, &c)
	}
	for k := range passwords {
		return structs.Errorf(structs.KindInvalid, "password given for user %q, which is not in the request", k)
	}
	return nil
}

func (b *upsertBuilder) roles(list []*structs.Role) error {
	for _, r := range list {
		if r == nil {
			return structs.Errorf(structs.KindInvalid, "empty role in request")
		}
		c := *r
		if c.ID == "" {
			c.ID = newIdentityID()
		}
		if err := c.Validate(); err != nil {
			return err
		}
		if err := errors.Join(b.once("r:"+c.ID, "role", c.ID), b.once("rn:"+c.Name, "role", c.Name)); err != nil {
			return err
		}
		b.entry.Roles = append(b.entry.Roles, &c)
	}
	return nil
}

// Delete removes identity objects; deleting a user, project or role also
// removes its role assignments. The tokens that relied on what was
// deleted are revoked.
func (e *Identity) Delete(args *structs.IdentityDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Identity.Delete", args, args, reply); done {
		return err
	}
	if len(args.ProjectIDs)+len(args.UserIDs)+len(args.RoleIDs)+len(args.Assignments) == 0 {
		return structs.Errorf(structs.KindInvalid, "no identity objects to delete")
	}
	var events []*structs.RevokedToken
	for _, id := range args.UserIDs {
		events = append(events, &structs.RevokedToken{UserID: id})
	}
	for _, id := range args.ProjectIDs {
		events = append(events, &structs.RevokedToken{ProjectID: id})
	}
	for _, id := range args.RoleIDs {
		events = append(events, &structs.RevokedToken{RoleID: id})
	}
	for _, a := range args.Assignments {
		if a == nil {
			return structs.Errorf(structs.KindInvalid, "empty role assignment in request")
		}
		if err := a.Validate(); err != nil {
			return err
		}
		events = append(events, &structs.RevokedToken{UserID: a.UserID, ProjectID: a.ProjectID, RoleID: a.RoleID})
	}
	entry := &structs.IdentityDeleteEntry{ProjectIDs: args.ProjectIDs, UserIDs: args.UserIDs,
		RoleIDs: args.RoleIDs, Assignments: args.Assignments}
	index, err := e.srv.apply(structs.IdentityDeleteType, entry)
	if err != nil {
		return err
	}
	reply.Index = index
	reply.Index, err = e.srv.revokeTokens(events)
	return err
}

// RevokeToken revokes one token by its audit id until it expires.
func (e *Identity) RevokeToken(args *structs.TokenRevokeRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Identity.RevokeToken", args, args, reply); done {
		return err
	}
	if args.AuditID == "" {
		return structs.Errorf(structs.KindInvalid, "an audit id is required to revoke a token")
	}
	now := time.Now()
	exp := args.ExpiresAt
	if exp.IsZero() || exp.After(now.Add(structs.MaxTokenTTL)) {
		exp = now.Add(structs.MaxTokenTTL)
	}
	index, err := e.srv.apply(structs.TokenRevokeType, &structs.TokenRevokeEntry{
		Tokens:      []*structs.RevokedToken{{AuditID: args.AuditID, ExpiresAt: exp.UnixNano()}},
		PruneBefore: now.UnixNano(),
	})
	reply.Index = index
	return err
}

// SeedDev creates devstack's identity objects (see SeedDevIdentity).
func (e *Identity) SeedDev(args *structs.IdentitySeedRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Identity.SeedDev", args, args, reply); done {
		return err
	}
	if err := e.srv.SeedDevIdentity(); err != nil {
		return err
	}
	reply.Index = e.srv.fsm.State().LatestIndex()
	return nil
}

// revokeTokens commits revocation events: every token issued until now
// that matches one of them is revoked.
func (s *Server) revokeTokens(events []*structs.RevokedToken) (uint64, error) {
	now := time.Now()
	for _, ev := range events {
		ev.AuditID = "event-" + newIdentityID()
		ev.IssuedBefore = now.UnixNano()
		ev.ExpiresAt = now.Add(structs.MaxTokenTTL).UnixNano()
	}
	return s.apply(structs.TokenRevokeType, &structs.TokenRevokeEntry{Tokens: events, PruneBefore: now.UnixNano()})
}

// userRoles returns the roles a user has on a project, by name.
func userRoles(state identityState, userID, projectID string) ([]*structs.Role, error) {
	as, err := state.Assignments(nil, userID, projectID, "")
	if err != nil {
		return nil, err
	}
	var roles []*structs.Role
	for _, a := range as {
		r, err := state.RoleByID(nil, a.RoleID)
		if err != nil {
			return nil, err
		}
		if r != nil {
			roles = append(roles, r)
		}
	}
	sort.Slice(roles, func(i, j int) bool { return roles[i].Name < roles[j].Name })
	return roles, nil
}
