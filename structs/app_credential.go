package structs

import (
	"strings"
	"unicode"
)

// ApplicationCredential is a Keystone application credential: a secret a
// user creates for one project, with a subset of its roles there, for
// automation (Terraform, CI) to authenticate as that user without its
// password. Only a hash of the secret is kept; the secret is shown once,
// when created.
type ApplicationCredential struct {
	ID          string
	Name        string
	Description string
	UserID      string
	ProjectID   string
	// SecretHash is a bcrypt hash of the secret's SHA-256 (bcrypt reads
	// 72 bytes at most, and a client may choose a longer secret). It
	// never leaves the servers: endpoints clear it in answers.
	SecretHash []byte
	// RoleIDs are the roles a token of the credential carries, each one
	// the user had on the project when the credential was created and
	// must still have when it authenticates.
	RoleIDs []string
	// ExpiresAt is unix nanoseconds; 0 never expires.
	ExpiresAt int64
	// Unrestricted lets the credential's tokens create and delete
	// application credentials (Keystone's default is restricted).
	Unrestricted bool
	// CreatedAt is unix nanoseconds, chosen before proposal.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Sanitized returns a copy without the secret's hash, for answers.
func (c *ApplicationCredential) Sanitized() *ApplicationCredential {
	out := *c
	out.SecretHash = nil
	return &out
}

// Expired reports whether the credential has expired at now (unix ns).
func (c *ApplicationCredential) Expired(now int64) bool {
	return c.ExpiresAt != 0 && now >= c.ExpiresAt
}

// Validate checks the fields a client chooses.
func (c *ApplicationCredential) Validate() error {
	if strings.TrimSpace(c.Name) == "" {
		return Errorf(KindInvalid, "Invalid input for field 'name': the name is required.")
	}
	if len([]rune(c.Name)) > 255 || strings.IndexFunc(c.Name, unicode.IsControl) >= 0 {
		return Errorf(KindInvalid, "Invalid input for field 'name': at most 255 characters, no control characters.")
	}
	if len(c.Description) > 65535 {
		return Errorf(KindInvalid, "Invalid input for field 'description': too long.")
	}
	if c.UserID == "" || c.ProjectID == "" {
		return Errorf(KindInvalid, "an application credential needs a user and a project")
	}
	return nil
}

// Application credential operations (ApplicationCredentialEntry.Op).
const (
	AppCredOpCreate = "create"
	AppCredOpDelete = "delete"
)

// ApplicationCredentialEntry creates or deletes an application
// credential (ApplicationCredentialType).
type ApplicationCredentialEntry struct {
	Op         string
	Credential *ApplicationCredential
	// ID names the credential to delete.
	ID string
}

// AppCredCreateRequest creates an application credential for UserID on
// ProjectID. Secret is the client's (the server generates one when
// empty) and is hashed before proposal. Roles are role ids or names the
// user must have on the project; none means all it has there.
type AppCredCreateRequest struct {
	UserID       string
	ProjectID    string
	Name         string
	Description  string
	Secret       string
	Roles        []string
	ExpiresAt    int64
	Unrestricted bool
	WriteRequest
}

// AppCredResponse answers a create: the stored credential (hash
// cleared), its roles, and the secret, which is never shown again.
type AppCredResponse struct {
	Credential *ApplicationCredential
	Roles      []*Role
	Secret     string
	WriteMeta
}

// AppCredListRequest lists the credentials of UserID, optionally by
// Name, or reads one by ID.
type AppCredListRequest struct {
	UserID string
	ID     string
	Name   string
	QueryOptions
}

// AppCredListResponse carries credentials (hashes cleared) and the roles
// they name, by id.
type AppCredListResponse struct {
	Credentials []*ApplicationCredential
	Roles       map[string]*Role
	QueryMeta
}

// AppCredDeleteRequest deletes a credential of UserID.
type AppCredDeleteRequest struct {
	UserID string
	ID     string
	WriteRequest
}

// AppCredTokenMethod is the authentication method of a token issued for
// an application credential.
const AppCredTokenMethod = "application_credential"
