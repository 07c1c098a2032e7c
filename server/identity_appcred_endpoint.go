package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"golang.org/x/crypto/bcrypt"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Keystone's application credentials: a secret a user creates for one
// project with a subset of its roles there, which authenticates as the
// user (Identity.IssueToken, method application_credential). Who may
// manage whose credentials is the identity API's policy and the RPC
// rules' (ownUser); the secret is hashed here, before proposal, so no
// plaintext enters the Raft log.

// appCredSecret returns a new secret: 64 random bytes, URL-safe base64,
// as long as Keystone's.
func appCredSecret() string {
	b := make([]byte, 64)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// appCredHash hashes a secret: bcrypt of its SHA-256, so a client's
// secret of any length counts in full.
func appCredHash(secret string) ([]byte, error) {
	sum := sha256.Sum256([]byte(secret))
	h, err := bcrypt.GenerateFromPassword([]byte(base64.StdEncoding.EncodeToString(sum[:])), bcryptCost)
	if err != nil {
		return nil, structs.Errorf(structs.KindInternal, "hash application credential secret: %v", err)
	}
	return h, nil
}

// appCredMatch reports whether secret is the one hash was made of.
func appCredMatch(hash []byte, secret string) bool {
	sum := sha256.Sum256([]byte(secret))
	return bcrypt.CompareHashAndPassword(hash, []byte(base64.StdEncoding.EncodeToString(sum[:]))) == nil
}

// AppCredCreate creates an application credential for a user on a
// project. Its roles must be roles the user has there (all of them when
// none are asked for); the answer carries the secret, once.
func (e *Identity) AppCredCreate(args *structs.AppCredCreateRequest, reply *structs.AppCredResponse) error {
	if done, err := e.srv.forward("Identity.AppCredCreate", args, args, reply); done {
		return err
	}
	now := time.Now().UnixNano()
	c := &structs.ApplicationCredential{ID: newIdentityID(), Name: args.Name, Description: args.Description,
		UserID: args.UserID, ProjectID: args.ProjectID, ExpiresAt: args.ExpiresAt,
		Unrestricted: args.Unrestricted, CreatedAt: now}
	if err := c.Validate(); err != nil {
		return err
	}
	if c.Expired(now) {
		return structs.Errorf(structs.KindInvalid, "Invalid input for field 'expires_at': the time is in the past.")
	}
	state := e.srv.fsm.State()
	roles, err := appCredRoles(state, args.UserID, args.ProjectID, args.Roles)
	if err != nil {
		return err
	}
	for _, r := range roles {
		c.RoleIDs = append(c.RoleIDs, r.ID)
	}
	secret := args.Secret
	if secret == "" {
		secret = appCredSecret()
	}
	if c.SecretHash, err = appCredHash(secret); err != nil {
		return err
	}
	index, err := e.srv.apply(structs.ApplicationCredentialType, &structs.ApplicationCredentialEntry{Op: structs.AppCredOpCreate, Credential: c})
	if err != nil {
		return err
	}
	stored, err := e.srv.fsm.State().AppCredByID(nil, c.ID)
	if err != nil {
		return err
	}
	if stored == nil {
		return fsm.AppCredNotFound(c.ID)
	}
	reply.Index, reply.Credential, reply.Roles, reply.Secret = index, stored.Sanitized(), roles, secret
	return nil
}

// appCredRoles resolves the roles asked for (ids or names) among the
// ones the user has on the project; none asked for is all of them.
func appCredRoles(state *fsm.StateStore, userID, projectID string, asked []string) ([]*structs.Role, error) {
	have, err := userRoles(state, userID, projectID)
	if err != nil {
		return nil, err
	}
	if len(have) == 0 {
		return nil, structs.Errorf(structs.KindPermission, "the user has no role on project %s", projectID)
	}
	if len(asked) == 0 {
		return have, nil
	}
	var out []*structs.Role
	for _, a := range asked {
		i := slices.IndexFunc(have, func(r *structs.Role) bool { return r.ID == a || strings.EqualFold(r.Name, a) })
		if i < 0 {
			return nil, structs.Errorf(structs.KindInvalid,
				"Invalid input for field 'roles': the user does not have role %s on the project.", a)
		}
		if !slices.Contains(out, have[i]) {
			out = append(out, have[i])
		}
	}
	return out, nil
}

// AppCredDelete deletes a user's application credential and revokes
// the tokens issued for it.
func (e *Identity) AppCredDelete(args *structs.AppCredDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Identity.AppCredDelete", args, args, reply); done {
		return err
	}
	c, err := e.srv.fsm.State().AppCredByID(nil, args.ID)
	if err != nil {
		return err
	}
	if c == nil || (args.UserID != "" && c.UserID != args.UserID) {
		return fsm.AppCredNotFound(args.ID)
	}
	if _, err := e.srv.apply(structs.ApplicationCredentialType, &structs.ApplicationCredentialEntry{Op: structs.AppCredOpDelete, ID: c.ID}); err != nil {
		return err
	}
	reply.Index, err = e.srv.revokeTokens([]*structs.RevokedToken{{AppCredID: c.ID}})
	return err
}

// AppCredList lists a user's application credentials (by name when
// asked), or reads one by id, with the roles they name.
func (e *Identity) AppCredList(args *structs.AppCredListRequest, reply *structs.AppCredListResponse) error {
	if done, err := e.srv.forward("Identity.AppCredList", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		index := state.Index(fsm.TableAppCredentials)
		var creds []*structs.ApplicationCredential
		switch {
		case args.ID != "":
			c, err := state.AppCredByID(ws, args.ID)
			if err != nil {
				return nil, 0, err
			}
			if c == nil || (args.UserID != "" && c.UserID != args.UserID) {
				return nil, index, fsm.AppCredNotFound(args.ID)
			}
			creds = append(creds, c)
		default:
			all, err := state.AppCredsOfUser(ws, args.UserID)
			if err != nil {
				return nil, 0, err
			}
			for _, c := range all {
				if args.Name == "" || c.Name == args.Name {
					creds = append(creds, c)
				}
			}
		}
		reply.Credentials, reply.Roles = nil, map[string]*structs.Role{}
		for _, c := range creds {
			reply.Credentials = append(reply.Credentials, c.Sanitized())
			for _, id := range c.RoleIDs {
				r, err := state.RoleByID(nil, id)
				if err != nil {
					return nil, 0, err
				}
				if r != nil {
					reply.Roles[id] = r
				}
			}
		}
		return reply.Credentials, index, nil
	})
}

// authenticateAppCred checks an application credential's secret and
// answers its user, project and roles: the credential's roles the user
// still has there. Any failure (unknown credential, wrong secret,
// expired, disabled user or project, a role lost) is the same
// KindPermission error.
func (s *Server) authenticateAppCred(args *structs.TokenIssueRequest, reply *structs.IdentityAuthResponse) (*structs.ApplicationCredential, error) {
	state := s.fsm.State()
	var c *structs.ApplicationCredential
	var err error
	switch {
	case args.AppCredID != "":
		c, err = state.AppCredByID(nil, args.AppCredID)
	case args.AppCredName != "":
		if args.UserID == "" && args.UserName == "" {
			return nil, structs.Errorf(structs.KindInvalid, "Could not find user for application credential: a name needs its user.")
		}
		var u *structs.User
		if u, err = lookupUser(state, args.UserID, args.UserName, args.UserDomainID, args.UserDomainName); err == nil && u != nil {
			c, err = state.AppCredByName(nil, u.ID, args.AppCredName)
		}
	default:
		return nil, structs.Errorf(structs.KindInvalid, "Expecting to find id or name in application_credential.")
	}
	if err != nil {
		return nil, err
	}
	hash := dummyHash()
	if c != nil {
		hash = c.SecretHash
	}
	if !appCredMatch(hash, args.AppCredSecret) || c == nil || c.Expired(time.Now().UnixNano()) {
		return nil, errAuthFailed()
	}
	user, err := state.UserByID(nil, c.UserID)
	if err != nil {
		return nil, err
	}
	project, err := state.ProjectByID(nil, c.ProjectID)
	if err != nil {
		return nil, err
	}
	if user == nil || !user.Enabled || project == nil || !project.Enabled {
		return nil, errAuthFailed()
	}
	have, err := userRoles(state, user.ID, project.ID)
	if err != nil {
		return nil, err
	}
	var roles []*structs.Role
	for _, r := range have {
		if slices.Contains(c.RoleIDs, r.ID) {
			roles = append(roles, r)
		}
	}
	if len(roles) != len(c.RoleIDs) {
		// The user lost a role the credential delegates: Keystone
		// refuses the credential rather than issue fewer roles.
		return nil, errAuthFailed()
	}
	reply.User, reply.Project, reply.Roles = user.Sanitized(), project, roles
	return c, nil
}
