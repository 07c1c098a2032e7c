package identity

import (
	"crypto/ed25519"
	"slices"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

// Token is a verified token: who, on which project, with which roles.
type Token struct {
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
	Methods   []string
	IssuedAt  time.Time
	ExpiresAt time.Time
	// AuditID identifies the token for revocation without revealing it;
	// ParentAuditID is the audit id of the token it was exchanged for,
	// if any.
	AuditID       string
	ParentAuditID string
}

// HasRole reports whether the token carries the role of that name,
// ignoring case as oslo.policy's role checks do.
func (t *Token) HasRole(name string) bool {
	return slices.ContainsFunc(t.Roles, func(r string) bool { return strings.EqualFold(r, name) })
}

// IsAdmin reports whether the token carries the admin role, which makes
// its user a cloud administrator, as in Keystone's default policy.
func (t *Token) IsAdmin() bool { return t.HasRole("admin") }

// IsScoped reports whether the token is scoped to a project.
func (t *Token) IsScoped() bool { return t.ProjectID != "" }

// tokenFromClaims converts verified or issued claims.
func tokenFromClaims(c *structs.TokenClaims) *Token {
	return &Token{
		UserID: c.UserID, UserName: c.UserName, DomainID: c.DomainID,
		ProjectID: c.ProjectID, ProjectName: c.ProjectName, ProjectDomainID: c.ProjectDomainID,
		Roles: c.Roles, RoleIDs: c.RoleIDs, Methods: c.Methods,
		IssuedAt: c.IssuedAt.UTC(), ExpiresAt: c.ExpiresAt.UTC(),
		AuditID: c.AuditID, ParentAuditID: c.ParentAuditID,
	}
}

// claims converts back, for the revocation checks.
func (t *Token) claims() *structs.TokenClaims {
	return &structs.TokenClaims{
		UserID: t.UserID, UserName: t.UserName, DomainID: t.DomainID,
		ProjectID: t.ProjectID, ProjectName: t.ProjectName, ProjectDomainID: t.ProjectDomainID,
		Roles: t.Roles, RoleIDs: t.RoleIDs, Methods: t.Methods,
		IssuedAt: t.IssuedAt, ExpiresAt: t.ExpiresAt, AuditID: t.AuditID, ParentAuditID: t.ParentAuditID,
	}
}

// issue asks the servers for a signed token: agents never sign.
func (s *Service) issue(req *structs.TokenIssueRequest) (*Token, string, error) {
	req.TTL = s.cfg.TokenTTL
	var resp structs.TokenIssueResponse
	if err := s.call("Identity.IssueToken", req, &resp); err != nil {
		return nil, "", err
	}
	if resp.Claims == nil || resp.Token == "" {
		return nil, "", structs.Errorf(structs.KindInternal, "the servers issued an empty token")
	}
	return tokenFromClaims(resp.Claims), resp.Token, nil
}

// lookupKey is authtoken's key lookup over the cached public keys.
func (s *Service) lookupKey(id string) (ed25519.PublicKey, bool) {
	k := s.key(id)
	if k == nil || len(k.PublicKey) != ed25519.PublicKeySize {
		return nil, false
	}
	return ed25519.PublicKey(k.PublicKey), true
}

// Verify checks a token's signature, expiry and revocation and returns
// what it carries. Every failure (malformed, unknown key, bad signature,
// expired, revoked) is a *structs.Error of KindPermission.
func (s *Service) Verify(token string) (*Token, error) {
	c, err := authtoken.Verify(token, s.lookupKey)
	if err != nil {
		return nil, err
	}
	t := tokenFromClaims(c)
	if s.isRevoked(t) {
		return nil, structs.Errorf(structs.KindPermission, "token has been revoked")
	}
	return t, nil
}

// keystoneTime formats a time as Keystone does: UTC, microseconds, Z.
func keystoneTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}
