package identity

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

// keyServer answers Identity.List with the signing keys it holds, as
// the servers do, so that a test can retire a key (the servers have no
// RPC for that yet).
type keyServer struct {
	mu   sync.Mutex
	keys []*structs.SigningKey
}

func (k *keyServer) RPC(method string, _, reply any) error {
	if method != "Identity.List" {
		return structs.Errorf(structs.KindInternal, "unexpected %s", method)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	reply.(*structs.IdentityListResponse).SigningKeys = append([]*structs.SigningKey(nil), k.keys...)
	return nil
}

func (k *keyServer) set(keys ...*structs.SigningKey) {
	k.mu.Lock()
	k.keys = keys
	k.mu.Unlock()
}

// signingKey makes a key and a signer of tokens for user with it.
func signingKey(t *testing.T, id string) (*structs.SigningKey, func(user string, ttl time.Duration) string) {
	t.Helper()
	pub, priv, err := authtoken.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	sign := func(user string, ttl time.Duration) string {
		now := time.Now().UTC().Truncate(time.Microsecond)
		tok, err := authtoken.Sign(id, priv, &structs.TokenClaims{UserID: user, ProjectID: "p1", Roles: []string{"member"},
			Methods: []string{"password"}, IssuedAt: now, ExpiresAt: now.Add(ttl), AuditID: authtoken.NewAuditID()})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	return &structs.SigningKey{ID: id, PublicKey: []byte(pub), CreatedAt: time.Now().UnixNano()}, sign
}

// refreshKeys makes svc read the keys now, as its background query
// does when they change.
func refreshKeys(t *testing.T, svc *Service, ks *keyServer) {
	t.Helper()
	var resp structs.IdentityListResponse
	if err := ks.RPC("Identity.List", nil, &resp); err != nil {
		t.Fatal(err)
	}
	svc.setKeys(&resp)
}

func TestVerifiedTokensAreRememberedUntilTheKeysChange(t *testing.T) {
	t.Parallel()
	ks := &keyServer{}
	k1, sign1 := signingKey(t, "k1")
	k2, sign2 := signingKey(t, "k2")
	ks.set(k1)
	svc, err := New(Config{RPC: ks})
	if err != nil {
		t.Fatal(err)
	}
	refreshKeys(t, svc, ks)
	tok := sign1("u1", time.Hour)
	for i := 0; i < 3; i++ {
		got, err := svc.Verify(tok)
		if err != nil || got.UserID != "u1" || got.ProjectID != "p1" {
			t.Fatalf("verify %d: %+v, %v", i, got, err)
		}
	}
	if n := len(svc.verified.entries); n != 1 {
		t.Fatalf("%d cached tokens, want 1", n)
	}

	// A caller changing what it got changes nothing for the next.
	got, _ := svc.Verify(tok)
	got.Roles[0] = "admin"
	if again, _ := svc.Verify(tok); again.IsAdmin() {
		t.Fatal("a caller's change reached the cache")
	}

	// Another key added: the cache starts afresh, tokens of both verify.
	ks.set(k1, k2)
	refreshKeys(t, svc, ks)
	if n := len(svc.verified.entries); n != 0 {
		t.Fatalf("%d cached tokens after the keys changed", n)
	}
	if _, err := svc.Verify(tok); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Verify(sign2("u2", time.Hour)); err != nil {
		t.Fatal(err)
	}

	// k1 retired: its token, verified a moment ago, is refused at once.
	ks.set(k2)
	refreshKeys(t, svc, ks)
	if _, err := svc.Verify(tok); structs.KindOf(err) != structs.KindPermission || !strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("a token of a retired key: %v", err)
	}

	// The same key set read again keeps the entries.
	tok2 := sign2("u3", time.Hour)
	if _, err := svc.Verify(tok2); err != nil {
		t.Fatal(err)
	}
	refreshKeys(t, svc, ks)
	if _, ok := svc.verified.entries[tok2]; !ok {
		t.Fatal("an unchanged key set dropped the cache")
	}
}

func TestCachedTokensAreStillCheckedForRevocationAndExpiry(t *testing.T) {
	t.Parallel()
	ks := &keyServer{}
	k1, sign := signingKey(t, "k1")
	ks.set(k1)
	svc, err := New(Config{RPC: ks})
	if err != nil {
		t.Fatal(err)
	}
	refreshKeys(t, svc, ks)
	tok := sign("u1", time.Hour)
	got, err := svc.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	svc.setRevoked(&structs.IdentityListResponse{Revoked: []*structs.RevokedToken{{AuditID: got.AuditID, ExpiresAt: got.ExpiresAt.UnixNano()}}})
	if _, err := svc.Verify(tok); structs.KindOf(err) != structs.KindPermission || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("a cached token revoked since: %v", err)
	}
	// A revocation event (all of a user's tokens) too.
	tok2 := sign("u2", time.Hour)
	if _, err := svc.Verify(tok2); err != nil {
		t.Fatal(err)
	}
	svc.setRevoked(&structs.IdentityListResponse{Revoked: []*structs.RevokedToken{{AuditID: "event-1", UserID: "u2",
		IssuedBefore: time.Now().Add(time.Minute).UnixNano(), ExpiresAt: time.Now().Add(time.Hour).UnixNano()}}})
	if _, err := svc.Verify(tok2); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("a cached token revoked by an event: %v", err)
	}

	// An entry is never used past the token's expiry nor past verifiedTTL.
	claims := &structs.TokenClaims{UserID: "u3", ExpiresAt: time.Now().Add(time.Hour)}
	var c verifyCache
	now := time.Now()
	c.put("t", claims, c.generation(), now)
	if c.get("t", now.Add(verifiedTTL-time.Second)) == nil {
		t.Fatal("a fresh entry was not used")
	}
	if c.get("t", now.Add(verifiedTTL)) != nil {
		t.Fatal("an entry was used past verifiedTTL")
	}
	claims.ExpiresAt = now.Add(time.Second)
	c.put("t", claims, c.generation(), now)
	if c.get("t", now.Add(time.Second)) != nil {
		t.Fatal("an entry was used past the token's expiry")
	}
	// Checked against keys that changed meanwhile: not remembered.
	gen := c.generation()
	c.keysChanged()
	c.put("t2", claims, gen, now)
	if c.get("t2", now) != nil {
		t.Fatal("an entry checked against older keys was remembered")
	}
}

func TestVerifyCacheUnderConcurrentKeyChanges(t *testing.T) {
	t.Parallel()
	ks := &keyServer{}
	k1, sign1 := signingKey(t, "k1")
	k2, _ := signingKey(t, "k2")
	ks.set(k1)
	svc, err := New(Config{RPC: ks})
	if err != nil {
		t.Fatal(err)
	}
	refreshKeys(t, svc, ks)
	toks := []string{sign1("a", time.Hour), sign1("b", time.Hour), sign1("c", time.Hour)}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if _, err := svc.Verify(toks[i%len(toks)]); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := 0; i < 50; i++ {
		if i%2 == 0 {
			ks.set(k1, k2)
		} else {
			ks.set(k1)
		}
		refreshKeys(t, svc, ks)
	}
	wg.Wait()
}

// downServers fails every call, as the servers do for an agent that
// has just started and reaches none of them yet.
type downServers struct{}

func (downServers) RPC(string, any, any) error {
	return structs.Errorf(structs.KindUnavailable, "no servers")
}

// TestUnknownKeyBeforeTheKeysLoadIsUnavailable: an agent that has not
// read the signing keys yet answers a token it cannot check with
// KindUnavailable (503, which clients retry), not KindPermission (401,
// which tells them their token is bad); once the keys are loaded, a key
// they do not have is a bad token again, and a malformed token is one
// always.
func TestUnknownKeyBeforeTheKeysLoadIsUnavailable(t *testing.T) {
	t.Parallel()
	svc, err := New(Config{RPC: downServers{}})
	if err != nil {
		t.Fatal(err)
	}
	k1, sign1 := signingKey(t, "k1")
	_, sign2 := signingKey(t, "k2")
	tok := sign1("u1", time.Hour)
	if _, err := svc.Verify(tok); structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("before the keys load: %v", err)
	}
	if _, err := svc.Verify("gAAAAA-not-a-token"); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("a malformed token before the keys load: %v", err)
	}
	ks := &keyServer{}
	ks.set(k1)
	refreshKeys(t, svc, ks)
	if got, err := svc.Verify(tok); err != nil || got.UserID != "u1" {
		t.Fatalf("after the keys load: %+v %v", got, err)
	}
	if _, err := svc.Verify(sign2("u1", time.Hour)); structs.KindOf(err) != structs.KindPermission ||
		!strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("a key the cluster does not have: %v", err)
	}
}
