// Package authtoken signs and verifies Stratus's Keystone-compatible
// tokens with Ed25519. The servers sign (they alone hold the private
// keys); agents and servers verify with the public keys. It checks
// signatures and expiry only: revocation is the caller's, against the
// replicated revocation list. It must not do I/O or keep state.
package authtoken

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Prefix starts every token this version issues. Tokens of the older
// HMAC format ("v1.") are not accepted.
const Prefix = "v2."

// MaxLen bounds the length of a token Verify looks at.
const MaxLen = 16384

// KeyLookup returns the public key of a signing key id, or false when
// the key is unknown.
type KeyLookup func(keyID string) (ed25519.PublicKey, bool)

var b64 = base64.RawURLEncoding

// payload is the signed body. Times are unix microseconds, the
// precision of Keystone's timestamps.
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
	// The application credential of method application_credential.
	AppCredID         string `json:"acid,omitempty"`
	AppCredName       string `json:"acn,omitempty"`
	AppCredRestricted bool   `json:"acr,omitempty"`
}

// GenerateKey returns a new Ed25519 key pair.
func GenerateKey() (ed25519.PublicKey, ed25519.PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate token signing key: %w", err)
	}
	return pub, priv, nil
}

// NewAuditID returns a random audit id, 22 characters as Keystone's.
func NewAuditID() string {
	buf := make([]byte, 16)
	_, _ = rand.Read(buf)
	return b64.EncodeToString(buf)
}

// Sign returns the token for c signed with the private key of keyID;
// c.KeyID is set to keyID. The token is "v2.<kid>.<payload>.<sig>",
// the signature covering everything before its dot.
func Sign(keyID string, priv ed25519.PrivateKey, c *structs.TokenClaims) (string, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("token signing key %s is not an Ed25519 private key", keyID)
	}
	if keyID == "" || strings.Contains(keyID, ".") {
		return "", fmt.Errorf("token signing key id %q is empty or has a dot", keyID)
	}
	if c.UserID == "" || c.AuditID == "" {
		return "", fmt.Errorf("a token needs a user id and an audit id")
	}
	c.KeyID = keyID
	raw, err := json.Marshal(payload{
		KeyID: keyID, UserID: c.UserID, UserName: c.UserName, DomainID: c.DomainID,
		ProjectID: c.ProjectID, ProjectName: c.ProjectName, ProjectDomainID: c.ProjectDomainID,
		Roles: c.Roles, RoleIDs: c.RoleIDs, Methods: c.Methods,
		IssuedAt: c.IssuedAt.UnixMicro(), ExpiresAt: c.ExpiresAt.UnixMicro(),
		AuditID: c.AuditID, ParentAuditID: c.ParentAuditID,
		AppCredID: c.AppCredID, AppCredName: c.AppCredName, AppCredRestricted: c.AppCredRestricted,
	})
	if err != nil {
		return "", fmt.Errorf("encode token: %w", err)
	}
	signed := Prefix + keyID + "." + b64.EncodeToString(raw)
	return signed + "." + b64.EncodeToString(ed25519.Sign(priv, []byte(signed))), nil
}

// invalid is Verify's error: always KindPermission.
func invalid(why string) error {
	return structs.Errorf(structs.KindPermission, "token %s", why)
}

// Verify checks a token's signature and expiry against the current time
// and returns its claims. Every failure (malformed, unknown key, bad
// signature, expired) is a *structs.Error of KindPermission.
func Verify(raw string, lookup KeyLookup) (*structs.TokenClaims, error) {
	return VerifyAt(raw, lookup, time.Now())
}

// VerifyAt is Verify at the time now.
func VerifyAt(raw string, lookup KeyLookup, now time.Time) (*structs.TokenClaims, error) {
	if len(raw) > MaxLen || !strings.HasPrefix(raw, Prefix) {
		return nil, invalid("is malformed")
	}
	parts := strings.Split(strings.TrimPrefix(raw, Prefix), ".")
	if len(parts) != 3 || parts[0] == "" {
		return nil, invalid("is malformed")
	}
	kid := parts[0]
	sig, err := b64.DecodeString(parts[2])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, invalid("is malformed")
	}
	pub, ok := lookup(kid)
	if !ok || len(pub) != ed25519.PublicKeySize {
		return nil, invalid("is signed with an unknown key")
	}
	if !ed25519.Verify(pub, []byte(Prefix+kid+"."+parts[1]), sig) {
		return nil, invalid("signature is not valid")
	}
	body, err := b64.DecodeString(parts[1])
	if err != nil {
		return nil, invalid("is malformed")
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil || p.KeyID != kid || p.UserID == "" || p.AuditID == "" {
		return nil, invalid("is malformed")
	}
	c := &structs.TokenClaims{
		KeyID: p.KeyID, UserID: p.UserID, UserName: p.UserName, DomainID: p.DomainID,
		ProjectID: p.ProjectID, ProjectName: p.ProjectName, ProjectDomainID: p.ProjectDomainID,
		Roles: p.Roles, RoleIDs: p.RoleIDs, Methods: p.Methods,
		IssuedAt: time.UnixMicro(p.IssuedAt).UTC(), ExpiresAt: time.UnixMicro(p.ExpiresAt).UTC(),
		AuditID: p.AuditID, ParentAuditID: p.ParentAuditID,
		AppCredID: p.AppCredID, AppCredName: p.AppCredName, AppCredRestricted: p.AppCredRestricted,
	}
	if !now.Before(c.ExpiresAt) {
		return nil, invalid("has expired")
	}
	return c, nil
}
