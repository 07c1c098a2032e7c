package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// tokenPrefix starts every token this version issues.
const tokenPrefix = "v1."

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

func (t *Token) hasRoleID(id string) bool { return slices.Contains(t.RoleIDs, id) }

// payload is the signed body of a token. Times are unix microseconds,
// the precision of Keystone's timestamps.
type payload struct {
	KeyID           string   `json:"kid"`
	UserID          string   `json:"uid"`
	UserName        string   `json:"un"`
	DomainID        string   `json:"ud"`
	ProjectID       string   `json:"pid,omitempty"`
	ProjectName     string   `json:"pn,omitempty"`
	ProjectDomainID string   `json:"pd,omitempty"`
	Roles           []string `json:"rn,omitempty"`
	RoleIDs         []string `json:"ri,omitempty"`
	Methods         []string `json:"m"`
	IssuedAt        int64    `json:"iat"`
	ExpiresAt       int64    `json:"exp"`
	AuditID         string   `json:"aid"`
	ParentAuditID   string   `json:"paid,omitempty"`
}

var b64 = base64.RawURLEncoding

// newAuditID returns a random audit id, 22 characters as Keystone's.
func newAuditID() string {
	buf := make([]byte, 16)
	_, _ = rand.Read(buf)
	return b64.EncodeToString(buf)
}

// mac signs a key id and an encoded payload.
func mac(secret []byte, keyID, body string) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(tokenPrefix + keyID + "."))
	h.Write([]byte(body))
	return h.Sum(nil)
}

// sign issues a token string for t with the newest signing key. It sets
// t's AuditID when empty.
func (s *Service) sign(t *Token) (string, error) {
	key := s.key("")
	if key == nil {
		return "", structs.Errorf(structs.KindUnavailable, "no token signing key is known yet; the cluster leader creates one")
	}
	if t.AuditID == "" {
		t.AuditID = newAuditID()
	}
	p := payload{
		KeyID: key.ID, UserID: t.UserID, UserName: t.UserName, DomainID: t.DomainID,
		ProjectID: t.ProjectID, ProjectName: t.ProjectName, ProjectDomainID: t.ProjectDomainID,
		Roles: t.Roles, RoleIDs: t.RoleIDs, Methods: t.Methods,
		IssuedAt: t.IssuedAt.UnixMicro(), ExpiresAt: t.ExpiresAt.UnixMicro(),
		AuditID: t.AuditID, ParentAuditID: t.ParentAuditID,
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	body := b64.EncodeToString(raw)
	return tokenPrefix + body + "." + b64.EncodeToString(mac(key.Secret, key.ID, body)), nil
}

// invalidToken is Verify's error: always KindPermission.
func invalidToken(why string) error {
	return structs.Errorf(structs.KindPermission, "token %s", why)
}

// Verify checks a token's signature, expiry and revocation and returns
// what it carries. Every failure (malformed, unknown key, bad signature,
// expired, revoked) is a *structs.Error of KindPermission.
func (s *Service) Verify(token string) (*Token, error) {
	body, sig, ok := strings.Cut(strings.TrimPrefix(token, tokenPrefix), ".")
	if !strings.HasPrefix(token, tokenPrefix) || !ok || len(token) > 16384 {
		return nil, invalidToken("is malformed")
	}
	raw, err := b64.DecodeString(body)
	if err != nil {
		return nil, invalidToken("is malformed")
	}
	gotMAC, err := b64.DecodeString(sig)
	if err != nil {
		return nil, invalidToken("is malformed")
	}
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil || p.KeyID == "" || p.UserID == "" || p.AuditID == "" {
		return nil, invalidToken("is malformed")
	}
	key := s.key(p.KeyID)
	if key == nil {
		return nil, invalidToken("is signed with an unknown key")
	}
	if !hmac.Equal(gotMAC, mac(key.Secret, key.ID, body)) {
		return nil, invalidToken("signature is not valid")
	}
	t := &Token{
		UserID: p.UserID, UserName: p.UserName, DomainID: p.DomainID,
		ProjectID: p.ProjectID, ProjectName: p.ProjectName, ProjectDomainID: p.ProjectDomainID,
		Roles: p.Roles, RoleIDs: p.RoleIDs, Methods: p.Methods,
		IssuedAt: time.UnixMicro(p.IssuedAt).UTC(), ExpiresAt: time.UnixMicro(p.ExpiresAt).UTC(),
		AuditID: p.AuditID, ParentAuditID: p.ParentAuditID,
	}
	if !time.Now().Before(t.ExpiresAt) {
		return nil, invalidToken("has expired")
	}
	if s.isRevoked(t) {
		return nil, invalidToken("has been revoked")
	}
	return t, nil
}

// keystoneTime formats a time as Keystone does: UTC, microseconds, Z.
func keystoneTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}
