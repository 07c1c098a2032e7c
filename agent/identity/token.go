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
// It is the claims the servers signed, with the agent's role checks.
type Token struct {
	structs.TokenClaims
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
	t := &Token{TokenClaims: *c}
	t.IssuedAt, t.ExpiresAt = c.IssuedAt.UTC(), c.ExpiresAt.UTC()
	return t
}

// claims converts back, for the revocation checks.
func (t *Token) claims() *structs.TokenClaims {
	c := t.TokenClaims
	return &c
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
// what it carries. A signature checked in the last verifiedTTL against
// the current signing keys is not checked again; expiry and revocation
// are checked every time. Every failure (malformed, unknown key, bad signature,
// expired, revoked) is a *structs.Error of KindPermission.
func (s *Service) Verify(token string) (*Token, error) {
	now := time.Now()
	c := s.verified.get(token, now)
	if c == nil {
		gen := s.verified.generation()
		var err error
		unknown := false
		lookup := func(id string) (ed25519.PublicKey, bool) {
			k, ok := s.lookupKey(id)
			unknown = !ok
			return k, ok
		}
		if c, err = authtoken.VerifyAt(token, lookup, now); err != nil {
			if unknown && !s.keysLoaded() {
				// A just-started agent that could not reach the servers
				// yet cannot tell a good token from a forged one: that
				// is the servers being unavailable (503, which clients
				// retry), not the caller's token being bad (401).
				return nil, structs.Errorf(structs.KindUnavailable, "the signing keys have not been loaded from the servers yet; try again")
			}
			return nil, err
		}
		s.verified.put(token, c, gen, now)
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
