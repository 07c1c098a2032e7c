package authtoken

import (
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

type keyring map[string]ed25519.PublicKey

func (k keyring) lookup(id string) (ed25519.PublicKey, bool) {
	pub, ok := k[id]
	return pub, ok
}

func claims(ttl time.Duration) *structs.TokenClaims {
	now := time.Now().UTC().Truncate(time.Microsecond)
	return &structs.TokenClaims{UserID: "u1", UserName: "demo", DomainID: "default", ProjectID: "p1",
		Roles: []string{"member"}, RoleIDs: []string{"r1"}, Methods: []string{"password"},
		IssuedAt: now, ExpiresAt: now.Add(ttl), AuditID: NewAuditID()}
}

func mustKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

func wantPermission(t *testing.T, name string, err error, why string) {
	t.Helper()
	if structs.KindOf(err) != structs.KindPermission || !strings.Contains(err.Error(), why) {
		t.Errorf("%s: got %v, want permission denied (%s)", name, err, why)
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	pub, priv := mustKey(t)
	c := claims(time.Hour)
	tok, err := Sign("k1", priv, c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "v2.k1.") {
		t.Fatalf("token %q", tok)
	}
	got, err := Verify(tok, keyring{"k1": pub}.lookup)
	if err != nil {
		t.Fatal(err)
	}
	if got.KeyID != "k1" || got.UserID != "u1" || got.ProjectID != "p1" || got.Roles[0] != "member" ||
		!got.IssuedAt.Equal(c.IssuedAt) || !got.ExpiresAt.Equal(c.ExpiresAt) || got.AuditID != c.AuditID {
		t.Fatalf("claims %+v, want %+v", got, c)
	}
}

func TestForgedAndTamperedTokensFail(t *testing.T) {
	pub, priv := mustKey(t)
	otherPub, otherPriv := mustKey(t)
	keys := keyring{"k1": pub, "k2": otherPub}
	tok, err := Sign("k1", priv, claims(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(strings.TrimPrefix(tok, Prefix), ".")
	raw, _ := b64.DecodeString(parts[1])
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	p.Roles, p.RoleIDs = []string{"admin"}, []string{"x"}
	elevated, _ := json.Marshal(p)
	byOther, _ := Sign("k2", otherPriv, claims(time.Hour))
	// A token signed by k2's private key but claiming k1, as someone
	// holding one key might try.
	otherParts := strings.Split(strings.TrimPrefix(byOther, Prefix), ".")
	flipped := []byte(parts[2])
	flipped[0] ^= 'A' ^ 'B'
	cases := map[string]struct{ tok, why string }{
		"elevated roles":     {Prefix + "k1." + b64.EncodeToString(elevated) + "." + parts[2], "signature is not valid"},
		"wrong key id":       {Prefix + "k2." + parts[1] + "." + parts[2], "signature is not valid"},
		"key swapped":        {Prefix + "k1." + otherParts[1] + "." + otherParts[2], "signature is not valid"},
		"unknown key":        {Prefix + "nope." + parts[1] + "." + parts[2], "unknown key"},
		"bad signature":      {Prefix + "k1." + parts[1] + "." + string(flipped), "is malformed"},
		"no signature":       {Prefix + "k1." + parts[1], "is malformed"},
		"old hmac version":   {"v1." + parts[1] + "." + parts[2], "is malformed"},
		"garbage":            {"garbage", "is malformed"},
		"empty":              {"", "is malformed"},
		"too long":           {tok + strings.Repeat("A", MaxLen), "is malformed"},
		"truncated sig":      {tok[:len(tok)-4], "is malformed"},
		"signature of other": {Prefix + "k1." + parts[1] + "." + otherParts[2], "signature is not valid"},
	}
	for name, c := range cases {
		_, err := Verify(c.tok, keys.lookup)
		if name == "bad signature" && structs.KindOf(err) == structs.KindPermission {
			continue // a flipped character may or may not still decode
		}
		wantPermission(t, name, err, c.why)
	}
	if _, err := Verify(tok, keys.lookup); err != nil {
		t.Fatalf("the genuine token fails: %v", err)
	}
}

func TestExpiredToken(t *testing.T) {
	pub, priv := mustKey(t)
	c := claims(time.Minute)
	tok, err := Sign("k1", priv, c)
	if err != nil {
		t.Fatal(err)
	}
	keys := keyring{"k1": pub}
	if _, err := VerifyAt(tok, keys.lookup, c.ExpiresAt.Add(-time.Microsecond)); err != nil {
		t.Fatalf("valid until its expiry: %v", err)
	}
	_, err = VerifyAt(tok, keys.lookup, c.ExpiresAt)
	wantPermission(t, "at expiry", err, "has expired")
	expired := claims(-time.Second)
	tok, _ = Sign("k1", priv, expired)
	_, err = Verify(tok, keys.lookup)
	wantPermission(t, "expired", err, "has expired")
}

func TestSignRejectsBadInput(t *testing.T) {
	_, priv := mustKey(t)
	if _, err := Sign("k1", priv[:32], claims(time.Hour)); err == nil {
		t.Error("a short private key signed")
	}
	if _, err := Sign("k.1", priv, claims(time.Hour)); err == nil {
		t.Error("a key id with a dot signed")
	}
	c := claims(time.Hour)
	c.AuditID = ""
	if _, err := Sign("k1", priv, c); err == nil {
		t.Error("a token without an audit id signed")
	}
}

func TestRevokes(t *testing.T) {
	c := claims(time.Hour)
	issued := c.IssuedAt.UnixNano()
	for name, tc := range map[string]struct {
		r    structs.RevokedToken
		want bool
	}{
		"audit id":            {structs.RevokedToken{AuditID: c.AuditID}, true},
		"other audit id":      {structs.RevokedToken{AuditID: "x"}, false},
		"user event":          {structs.RevokedToken{AuditID: "event-1", UserID: "u1", IssuedBefore: issued}, true},
		"user event before":   {structs.RevokedToken{AuditID: "event-1", UserID: "u1", IssuedBefore: issued - 1}, false},
		"other user event":    {structs.RevokedToken{AuditID: "event-1", UserID: "u2", IssuedBefore: issued}, false},
		"role event":          {structs.RevokedToken{AuditID: "event-1", RoleID: "r1", IssuedBefore: issued}, true},
		"project+other role":  {structs.RevokedToken{AuditID: "event-1", ProjectID: "p1", RoleID: "r9", IssuedBefore: issued}, false},
		"project event":       {structs.RevokedToken{AuditID: "event-1", ProjectID: "p1", IssuedBefore: issued}, true},
		"other project event": {structs.RevokedToken{AuditID: "event-1", ProjectID: "p2", IssuedBefore: issued}, false},
	} {
		if got := tc.r.Revokes(c); got != tc.want {
			t.Errorf("%s: Revokes = %v, want %v", name, got, tc.want)
		}
	}
}
