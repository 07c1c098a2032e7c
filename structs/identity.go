package structs

import "time"

// DefaultDomainID is the one identity domain Stratus serves, as
// Keystone's "Default" domain.
const (
	DefaultDomainID   = "default"
	DefaultDomainName = "Default"
)

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
	ID   string
	Name string

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
// round trip. The leader creates the first one.
type SigningKey struct {
	ID     string
	Secret []byte
	// CreatedAt is unix nanoseconds, chosen before proposal.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// RevokedToken records a revoked token by its audit id until it would
// have expired anyway.
type RevokedToken struct {
	AuditID string
	// ExpiresAt is unix nanoseconds; the record is useless after it.
	ExpiresAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// IdentityUpsertEntry creates or replaces identity objects.
type IdentityUpsertEntry struct {
	Projects    []*Project
	Users       []*User
	Roles       []*Role
	Assignments []*RoleAssignment
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

// TokenRevokeEntry revokes tokens by audit id.
type TokenRevokeEntry struct {
	Tokens []*RevokedToken
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

// IdentityListRequest lists identity objects, optionally filtered.
type IdentityListRequest struct {
	UserID    string
	ProjectID string
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

// IdentityUpsertRequest creates or updates identity objects. Passwords
// maps a user id to a new plaintext password, hashed by the server
// before proposal.
type IdentityUpsertRequest struct {
	Projects    []*Project
	Users       []*User
	Passwords   map[string]string
	Roles       []*Role
	Assignments []*RoleAssignment
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
	WriteRequest
}
