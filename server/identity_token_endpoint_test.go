package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

func issueToken(s *Server, req *structs.TokenIssueRequest) (*structs.TokenIssueResponse, error) {
	var resp structs.TokenIssueResponse
	err := s.RPC("Identity.IssueToken", req, &resp)
	return &resp, err
}

// signingServer is identityServer once the leader created its key.
func signingServer(t *testing.T) *Server {
	t.Helper()
	s := identityServer(t)
	waitFor(t, "a signing key", 60*time.Second, func() error {
		keys, err := s.FSM().State().SigningKeys(nil)
		if err != nil || newestSigningKey(keys) == nil {
			return fmt.Errorf("no usable key (%v)", err)
		}
		return nil
	})
	return s
}

func TestIssueTokenAndVerify(t *testing.T) {
	t.Parallel()
	s := signingServer(t)
	resp, err := issueToken(s, &structs.TokenIssueRequest{Method: "password", UserName: "demo", UserDomainName: "Default",
		Password: "demo", ProjectName: "demo", ProjectDomainID: "default", TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Token, authtoken.Prefix) || resp.Claims.ProjectName != "demo" || len(resp.Claims.Roles) == 0 ||
		resp.Claims.AuditID == "" || resp.Claims.ExpiresAt.Sub(resp.Claims.IssuedAt) != 10*time.Minute {
		t.Fatalf("issued %q %+v", resp.Token, resp.Claims)
	}
	c, err := s.VerifyToken(resp.Token)
	if err != nil || c.UserID != resp.Claims.UserID || c.AuditID != resp.Claims.AuditID {
		t.Fatalf("verify: %+v %v", c, err)
	}

	// Exchange it for an unscoped one: same user, no longer life.
	ex, err := issueToken(s, &structs.TokenIssueRequest{Method: "token", Token: resp.Token, TTL: structs.MaxTokenTTL})
	if err != nil {
		t.Fatal(err)
	}
	if ex.Claims.UserID != c.UserID || ex.Claims.ProjectID != "" || !ex.Claims.ExpiresAt.Equal(c.ExpiresAt) || ex.Claims.ParentAuditID != c.AuditID {
		t.Fatalf("exchanged %+v", ex.Claims)
	}

	// A revoked token neither verifies nor exchanges.
	if err := s.RPC("Identity.RevokeToken", &structs.TokenRevokeRequest{AuditID: c.AuditID, ExpiresAt: c.ExpiresAt}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.VerifyToken(resp.Token); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("revoked token verified: %v", err)
	}
	if _, err := issueToken(s, &structs.TokenIssueRequest{Method: "token", Token: resp.Token}); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("revoked token exchanged: %v", err)
	}
	if _, err := s.VerifyToken(ex.Token); err != nil {
		t.Fatalf("revoking the parent revoked the exchanged token: %v", err)
	}
}

func TestIssueTokenRefusals(t *testing.T) {
	t.Parallel()
	s := signingServer(t)
	var off structs.IdentityUpsertResponse
	if err := s.RPC("Identity.Upsert", &structs.IdentityUpsertRequest{Users: []*structs.User{{Name: "off", Enabled: true}},
		Passwords: map[string]string{"off": "secret"}}, &off); err != nil {
		t.Fatal(err)
	}
	tok, err := issueToken(s, &structs.TokenIssueRequest{Method: "password", UserID: off.Users[0].ID, Password: "secret"})
	if err != nil {
		t.Fatal(err)
	}
	// Disabling the user revokes its tokens: they no longer exchange.
	u := *off.Users[0]
	u.Enabled = false
	if err := s.RPC("Identity.Upsert", &structs.IdentityUpsertRequest{Users: []*structs.User{&u}}, &structs.IdentityUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	for name, req := range map[string]*structs.TokenIssueRequest{
		"wrong password":  {Method: "password", UserName: "admin", UserDomainID: "default", Password: "nope"},
		"disabled user":   {Method: "password", UserID: off.Users[0].ID, Password: "secret"},
		"revoked token":   {Method: "token", Token: tok.Token},
		"forged token":    {Method: "token", Token: "v2.k.e30.AAAA"},
		"old hmac token":  {Method: "token", Token: "v1.e30.AAAA"},
		"no token at all": {Method: "token"},
	} {
		if _, err := issueToken(s, req); structs.KindOf(err) != structs.KindPermission {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := issueToken(s, &structs.TokenIssueRequest{Method: "totp"}); structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("unknown method: %v", err)
	}
	// The TTL is capped.
	long, err := issueToken(s, &structs.TokenIssueRequest{Method: "password", UserName: "admin", UserDomainID: "default",
		Password: "admin", TTL: 1000 * time.Hour})
	if err != nil || long.Claims.ExpiresAt.Sub(long.Claims.IssuedAt) != structs.MaxTokenTTL {
		t.Fatalf("long TTL: %+v %v", long.Claims, err)
	}
}

func TestOldHMACKeyIsReplaced(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1 })
	waitForLeader(t, s)
	waitFor(t, "a signing key", 60*time.Second, func() error {
		if keys, _ := s.FSM().State().SigningKeys(nil); len(keys) == 0 {
			return fmt.Errorf("no key")
		}
		return nil
	})
	// A key of the HMAC format, as an older version left in the state,
	// newer than the Ed25519 key: it signs nothing and is never listed.
	old := &structs.SigningKey{ID: "hmac", Secret: make([]byte, 32), CreatedAt: time.Now().Add(time.Hour).UnixNano()}
	if _, err := s.apply(structs.SigningKeyUpsertType, &structs.SigningKeyEntry{Key: old}); err != nil {
		t.Fatal(err)
	}
	keys, _ := s.FSM().State().SigningKeys(nil)
	if k := newestSigningKey(keys); k == nil || k.ID == "hmac" {
		t.Fatalf("newest key %+v", k)
	}
	for _, k := range identityList(t, s, &structs.IdentityListRequest{Kind: structs.IdentityKindSigningKeys}).SigningKeys {
		if k.ID == "hmac" || len(k.Secret) != 0 {
			t.Fatalf("listed %+v", k)
		}
	}
}
