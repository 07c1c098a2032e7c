package server

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

// TestNodeIntroduction: with ACLs on, a new host registers only with a
// valid introduction (none, a forged, an expired, another host's, or a
// user's token is refused with an error that says what to do); an
// operator's introduction admits it; the known host then re-registers
// with its node secret alone, and the introduction is no credential.
func TestNodeIntroduction(t *testing.T) {
	s := aclServer(t)
	r := newRemote(t, s)
	admin, demo := r.token("admin", "admin"), r.token("demo", "demo")
	register := func(name, secret, intro string) error {
		return r.call("Host.Register", &structs.HostRegisterRequest{Host: testHost(name, 8, 16384), IntroToken: intro,
			WriteRequest: structs.WriteRequest{AuthToken: secret}}, &structs.HostRegisterResponse{})
	}

	keys, err := s.fsm.State().SigningKeys(nil)
	if err != nil {
		t.Fatal(err)
	}
	key := newestSigningKey(keys)
	now := time.Now().UTC()
	sign := func(priv ed25519.PrivateKey, claims *structs.TokenClaims) string {
		tok, err := authtoken.Sign(key.ID, priv, claims)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	forgedIntro := sign(otherKey, &structs.TokenClaims{UserID: nodeIntroUser, Methods: []string{structs.NodeIntroMethod},
		IssuedAt: now, ExpiresAt: now.Add(time.Hour), AuditID: authtoken.NewAuditID()})
	expiredIntro := sign(ed25519.PrivateKey(key.Secret), &structs.TokenClaims{UserID: nodeIntroUser,
		Methods: []string{structs.NodeIntroMethod}, IssuedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour),
		AuditID: authtoken.NewAuditID()})
	otherHost, _, err := s.NodeIntroToken("hv-elsewhere", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for what, intro := range map[string]string{"no introduction": "", "a forged one": forgedIntro,
		"an expired one": expiredIntro, "another host's": otherHost, "a user's token": admin.Token} {
		err := register("h1", secretA, intro)
		if structs.KindOf(err) != structs.KindPermission || !strings.Contains(err.Error(), "node introduction") {
			t.Errorf("registration with %s: %v", what, err)
		}
	}
	if h, _ := s.fsm.State().HostByID(nil, "h1"); h != nil {
		t.Fatalf("a refused registration stored host %+v", h)
	}

	// Only an admin issues introductions.
	var out structs.NodeIntroCreateResponse
	if err := r.call("Operator.NodeIntroCreate", &structs.NodeIntroCreateRequest{HostName: "hv-h1",
		WriteRequest: structs.WriteRequest{AuthToken: demo.Token}}, &out); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("a member issued an introduction: %v", err)
	}
	if err := r.call("Operator.NodeIntroCreate", &structs.NodeIntroCreateRequest{HostName: "hv-h1", TTL: 10 * time.Minute,
		WriteRequest: structs.WriteRequest{AuthToken: admin.Token}}, &out); err != nil || out.Token == "" || out.HostName != "hv-h1" {
		t.Fatalf("issue an introduction: %+v %v", out, err)
	}
	if d := time.Until(out.ExpiresAt); d <= 0 || d > 10*time.Minute {
		t.Fatalf("introduction expires in %s", d)
	}
	if err := register("h1", secretA, out.Token); err != nil {
		t.Fatalf("registration with a valid introduction: %v", err)
	}
	// Known now: its secret alone re-registers it; the introduction does
	// not let another secret take it over.
	if err := register("h1", secretA, ""); err != nil {
		t.Fatalf("re-registration with the node secret: %v", err)
	}
	wantDenied(t, "another secret with the introduction", register("h1", secretB, out.Token))
	// The introduction is no credential.
	err = r.call("Flavor.List", &structs.FlavorListRequest{QueryOptions: structs.QueryOptions{AuthToken: out.Token}},
		&structs.FlavorListResponse{})
	if structs.KindOf(err) != structs.KindUnauthenticated {
		t.Fatalf("an introduction as a credential: %v", err)
	}
}
