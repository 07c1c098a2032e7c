package structs

import (
	"slices"
	"time"
)

// TokenClaims is what a Keystone-compatible token carries. Only the
// servers sign tokens (Identity.IssueToken, with the Ed25519 private
// half of a SigningKey); agents verify them with the public half.
type TokenClaims struct {
	// KeyID names the signing key.
	KeyID    string
	UserID   string
	UserName string
	// DomainID is the user's domain.
	DomainID string
	// ProjectID is empty for an unscoped token.
	ProjectID       string
	ProjectName     string
	ProjectDomainID string
	// Roles are role names; RoleIDs the matching ids, in the same order.
	Roles   []string
	RoleIDs []string
	// Methods are the authentication methods ("password", "token").
	Methods []string
	// IssuedAt and ExpiresAt are UTC, to the microsecond.
	IssuedAt  time.Time
	ExpiresAt time.Time
	// AuditID identifies the token for revocation without revealing it;
	// ParentAuditID is the audit id of the token it was exchanged for.
	AuditID       string
	ParentAuditID string
	// AppCredID, AppCredName and AppCredRestricted name the application
	// credential a token was issued for (method application_credential);
	// empty otherwise.
	AppCredID         string `json:",omitempty"`
	AppCredName       string `json:",omitempty"`
	AppCredRestricted bool   `json:",omitempty"`
}

// TokenIssueRequest asks the servers for a signed token
// (Identity.IssueToken). Method "password" checks the user's Password;
// method "token" exchanges Token, which the servers verify themselves,
// for a token of the same user with another scope that never outlives
// it.
type TokenIssueRequest struct {
	Method string
	// The user, for method password: by id, or by name within a domain.
	UserID, UserName, UserDomainID, UserDomainName string
	Password                                       string
	// Token is the token exchanged, for method token.
	Token string
	// The application credential, for method application_credential:
	// by id, or by name with the user above; and its secret.
	AppCredID, AppCredName, AppCredSecret string `json:",omitempty"`
	// The scope, optional: a project by id, or by name within a domain.
	ProjectID, ProjectName, ProjectDomainID, ProjectDomainName string
	// TTL is the lifetime asked for (default 1h, at most MaxTokenTTL).
	TTL time.Duration
	WriteRequest
}

// TokenIssueResponse is a signed token and what it says.
type TokenIssueResponse struct {
	Token  string
	Claims *TokenClaims
}

// Revokes reports whether the revocation record applies to a token with
// these claims: the same audit id, or a revocation event matching its
// user, project and role, issued at or before the event.
func (r *RevokedToken) Revokes(c *TokenClaims) bool {
	if !r.IsEvent() {
		return r.AuditID == c.AuditID
	}
	if c.IssuedAt.UnixNano() > r.IssuedBefore {
		return false
	}
	return (r.UserID == "" || r.UserID == c.UserID) &&
		(r.AppCredID == "" || r.AppCredID == c.AppCredID) &&
		(r.ProjectID == "" || r.ProjectID == c.ProjectID) &&
		(r.RoleID == "" || slices.Contains(c.RoleIDs, r.RoleID))
}
