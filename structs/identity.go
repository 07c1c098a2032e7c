package structs

import (
	"regexp"
	"strings"
	"time"
	"unicode"
)

// DefaultDomainID is the one identity domain Stratus serves, as
// Keystone's "Default" domain.
const (
	DefaultDomainID   = "default"
	DefaultDomainName = "Default"
)

// MaxTokenTTL bounds a token's lifetime. Revocation events are kept
// that long, so no token outlives the events that revoke it.
const MaxTokenTTL = 24 * time.Hour

// AuthFailedMessage is Keystone's answer to bad credentials; it never
// says which part was wrong.
const AuthFailedMessage = "The request you have made requires authentication."

// Project is a Keystone project (tenant): the owner of instances, key
// pairs are per user.
type Project struct {
	ID          string
	Name        string
	DomainID    string
	Description string
	Enabled     bool

	CreateIndex uint64
	ModifyIndex uint64
}

// User is a Keystone user. PasswordHash is a bcrypt hash; it never
// leaves the servers (endpoints clear it in answers).
type User struct {
	ID               string
	Name             string
	DomainID         string
	DefaultProjectID string
	Email            string
	Description      string
	Enabled          bool
	PasswordHash     []byte

	CreateIndex uint64
	ModifyIndex uint64
}

// Role is a Keystone role (admin, member, reader, …).
type Role struct {
	ID          string
	Name        string
	Description string

	CreateIndex uint64
	ModifyIndex uint64
}

// RoleAssignment grants a role to a user on a project.
type RoleAssignment struct {
	UserID    string
	ProjectID string
	RoleID    string

	CreateIndex uint64
	ModifyIndex uint64
}

// SigningKey signs tokens so any agent can validate them without a
// round trip. The leader creates the first one. Only the servers sign:
// Secret, the Ed25519 private key, never leaves them (Identity.List
// answers the PublicKey only); keys from before Ed25519 (a 32-byte HMAC
// secret and no PublicKey) sign and verify nothing.
type SigningKey struct {
	ID     string
	Secret []byte
	// PublicKey is the Ed25519 public key agents verify tokens with.
	PublicKey []byte
	// CreatedAt is unix nanoseconds, chosen before proposal.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// RevokedToken records a revoked token by its audit id until it would
// have expired anyway.
//
// A record with UserID, ProjectID or RoleID set is instead a revocation
// event, as Keystone's: it revokes every token issued at or before
// IssuedBefore whose user, project and roles match all the fields set.
// Its AuditID is then a key of its own ("event-…") no token carries.
type RevokedToken struct {
	AuditID string
	// ExpiresAt is unix nanoseconds; the record is useless after it.
	ExpiresAt int64

	UserID    string
	ProjectID string
	RoleID    string
	// AppCredID revokes the tokens of an application credential (its
	// deletion). A server or agent from before application credentials
	// ignores it.
	AppCredID string `json:",omitempty"`
	// IssuedBefore is unix nanoseconds.
	IssuedBefore int64

	CreateIndex uint64
	ModifyIndex uint64
}

// IdentityUpsertEntry creates or replaces identity objects.
type IdentityUpsertEntry struct {
	Projects    []*Project
	Users       []*User
	Roles       []*Role
	Assignments []*RoleAssignment
	// Bootstrap makes the entry the cluster's first-admin bootstrap: it
	// is refused, changing nothing, once any user exists.
	Bootstrap bool
}

// IdentityDeleteEntry deletes identity objects; deleting a user, project
// or role also deletes its role assignments.
type IdentityDeleteEntry struct {
	ProjectIDs  []string
	UserIDs     []string
	RoleIDs     []string
	Assignments []*RoleAssignment
}

// SigningKeyEntry stores a token signing key.
type SigningKeyEntry struct {
	Key *SigningKey
}

// TokenRevokeEntry revokes tokens by audit id (or records revocation
// events). PruneBefore, unix nanoseconds chosen by the proposer, drops
// the records that expired before it, so Apply stays deterministic.
type TokenRevokeEntry struct {
	Tokens      []*RevokedToken
	PruneBefore int64
}

// IdentityAuthRequest authenticates a user and resolves a project scope.
// Method "password" checks Password; method "token" trusts UserID, which
// the caller took from a token it already verified.
type IdentityAuthRequest struct {
	Method string
	// The user: by id, or by name within a domain (id or name).
	UserID, UserName, UserDomainID, UserDomainName string
	Password                                       string
	// The scope, optional: a project by id, or by name within a domain.
	ProjectID, ProjectName, ProjectDomainID, ProjectDomainName string
	WriteRequest
}

// IdentityAuthResponse is the authenticated user (without its hash), the
// scoped project (nil when unscoped) and the user's roles on it.
type IdentityAuthResponse struct {
	User    *User
	Project *Project
	Roles   []*Role
}

// Identity list kinds, for IdentityListRequest.Kind.
const (
	IdentityKindProjects    = "projects"
	IdentityKindUsers       = "users"
	IdentityKindRoles       = "roles"
	IdentityKindAssignments = "assignments"
	IdentityKindSigningKeys = "signing_keys"
	IdentityKindRevoked     = "revoked"
)

// IdentityListRequest lists identity objects of one Kind, optionally
// filtered. Filters that apply:
//   - projects: ID, Name; UserID keeps the projects the user has a role on.
//   - users: ID, Name.
//   - roles: ID, Name; UserID with ProjectID keeps the roles the user has
//     on the project.
//   - assignments: UserID, ProjectID, RoleID.
//   - signing_keys, revoked: none.
type IdentityListRequest struct {
	Kind      string
	ID        string
	UserID    string
	ProjectID string
	RoleID    string
	Name      string
	QueryOptions
}

// IdentityListResponse carries identity objects (PasswordHash cleared).
type IdentityListResponse struct {
	Projects    []*Project
	Users       []*User
	Roles       []*Role
	Assignments []*RoleAssignment
	SigningKeys []*SigningKey
	Revoked     []*RevokedToken
	QueryMeta
}

// IdentityUpsertRequest creates or updates identity objects; an object
// with an empty ID is new and gets a generated one. Passwords maps a
// user id (or, for a new user without an id, its name) to a new
// plaintext password, hashed by the server before proposal. A user's
// PasswordHash in the request is ignored: a user upserted without a
// password keeps its current one.
type IdentityUpsertRequest struct {
	Projects    []*Project
	Users       []*User
	Passwords   map[string]string
	Roles       []*Role
	Assignments []*RoleAssignment
	WriteRequest
}

// IdentityUpsertResponse returns the stored objects (PasswordHash
// cleared) in request order, with their ids.
type IdentityUpsertResponse struct {
	Projects    []*Project
	Users       []*User
	Roles       []*Role
	Assignments []*RoleAssignment
	WriteMeta
}

// IdentitySeedRequest asks a server to create devstack's identity
// objects (Identity.SeedDev); it is idempotent.
type IdentitySeedRequest struct {
	WriteRequest
}

// IdentityDeleteRequest deletes identity objects.
type IdentityDeleteRequest struct {
	ProjectIDs  []string
	UserIDs     []string
	RoleIDs     []string
	Assignments []*RoleAssignment
	WriteRequest
}

// TokenRevokeRequest revokes a token by its audit id.
type TokenRevokeRequest struct {
	AuditID   string
	ExpiresAt time.Time
	// Token is the token revoked, when the caller has it: the servers
	// let a user without the admin role revoke its own tokens only.
	Token string `json:",omitempty"`
	WriteRequest
}

// identityIDPattern bounds ids a client may choose: they appear in URLs.
var identityIDPattern = regexp.MustCompile(`^[A-Za-z0-9_.@:-]{1,64}$`)

// validIdentityID checks an id that may be empty (the server generates
// one) or client chosen.
func validIdentityID(what, id string) error {
	if id != "" && !identityIDPattern.MatchString(id) {
		return Errorf(KindInvalid, "%s id %q must be 1-64 letters, digits or '_.@:-'", what, id)
	}
	return nil
}

// validIdentityName checks a Keystone name: not blank, at most max
// characters, no control characters.
func validIdentityName(what, name string, max int) error {
	if strings.TrimSpace(name) == "" {
		return Errorf(KindInvalid, "%s name is required", what)
	}
	if n := len([]rune(name)); n > max {
		return Errorf(KindInvalid, "%s name %q is longer than %d characters", what, name, max)
	}
	if strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return Errorf(KindInvalid, "%s name %q has control characters", what, name)
	}
	return nil
}

// validDomain accepts the one domain Stratus serves.
func validDomain(what, domainID string) error {
	if domainID != DefaultDomainID {
		return Errorf(KindInvalid, "%s domain %q is not the %q domain, the only one served", what, domainID, DefaultDomainID)
	}
	return nil
}

// Validate checks a project's fields (DomainID must be set).
func (p *Project) Validate() error {
	if err := validIdentityID("project", p.ID); err != nil {
		return err
	}
	if err := validIdentityName("project", p.Name, 64); err != nil {
		return err
	}
	if len(p.Description) > 65535 {
		return Errorf(KindInvalid, "project %q description is too long", p.Name)
	}
	return validDomain("project", p.DomainID)
}

// Validate checks a user's fields (DomainID must be set).
func (u *User) Validate() error {
	if err := validIdentityID("user", u.ID); err != nil {
		return err
	}
	if err := validIdentityName("user", u.Name, 255); err != nil {
		return err
	}
	if len(u.Description) > 65535 || len(u.Email) > 255 {
		return Errorf(KindInvalid, "user %q description or email is too long", u.Name)
	}
	return validDomain("user", u.DomainID)
}

// Validate checks a role's fields.
func (r *Role) Validate() error {
	if err := validIdentityID("role", r.ID); err != nil {
		return err
	}
	if err := validIdentityName("role", r.Name, 255); err != nil {
		return err
	}
	if len(r.Description) > 65535 {
		return Errorf(KindInvalid, "role %q description is too long", r.Name)
	}
	return nil
}

// Validate checks that an assignment names a user, a project and a role.
func (a *RoleAssignment) Validate() error {
	if a.UserID == "" || a.ProjectID == "" || a.RoleID == "" {
		return Errorf(KindInvalid, "a role assignment needs a user, a project and a role")
	}
	return nil
}

// Sanitized returns a copy of the user without its password hash, for
// answers.
func (u *User) Sanitized() *User {
	c := *u
	c.PasswordHash = nil
	return &c
}

// IsEvent reports whether the record is a revocation event rather than
// the revocation of one token.
func (r *RevokedToken) IsEvent() bool {
	return r.UserID != "" || r.ProjectID != "" || r.RoleID != "" || r.AppCredID != ""
}
