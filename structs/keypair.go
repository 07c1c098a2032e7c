package structs

import (
	"regexp"
)

// KeyPair is an SSH public key a user can inject into instances.
type KeyPair struct {
	Name        string
	UserID      string
	Type        string // "ssh" or "x509"
	PublicKey   string
	Fingerprint string
	// CreatedAt is chosen by the server before the entry is proposed
	// (unix nanoseconds), so Apply stays deterministic.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

var keyPairNamePattern = regexp.MustCompile(`^[A-Za-z0-9 _.@-]{1,255}$`)

// Validate checks a key pair's fields.
func (k *KeyPair) Validate() error {
	if !keyPairNamePattern.MatchString(k.Name) {
		return Errorf(KindInvalid, "keypair name %q must be 1-255 characters of letters, digits, spaces, '_', '.', '@' and '-'", k.Name)
	}
	if k.UserID == "" {
		return Errorf(KindInvalid, "keypair %q has no user", k.Name)
	}
	if k.Type != "ssh" && k.Type != "x509" {
		return Errorf(KindInvalid, "keypair type %q must be ssh or x509", k.Type)
	}
	if k.PublicKey == "" || len(k.PublicKey) > 16384 {
		return Errorf(KindInvalid, "keypair %q needs a public key of at most 16384 bytes", k.Name)
	}
	return nil
}

// KeyPairUpsertRequest stores key pairs.
type KeyPairUpsertRequest struct {
	KeyPairs []*KeyPair
	WriteRequest
}

// KeyPairDeleteRequest removes a user's key pairs by name.
type KeyPairDeleteRequest struct {
	UserID string
	Names  []string
	WriteRequest
}

// KeyPairCreateRequest stores a new key pair; an existing name of the
// same user is a conflict.
type KeyPairCreateRequest struct {
	KeyPair *KeyPair
	WriteRequest
}

// KeyPairListRequest lists one user's key pairs.
type KeyPairListRequest struct {
	UserID string
	QueryOptions
}

// KeyPairSpecificRequest reads one key pair of a user.
type KeyPairSpecificRequest struct {
	UserID string
	Name   string
	QueryOptions
}

// KeyPairListResponse answers KeyPairListRequest.
type KeyPairListResponse struct {
	KeyPairs []*KeyPair
	QueryMeta
}

// SingleKeyPairResponse answers KeyPairSpecificRequest.
type SingleKeyPairResponse struct {
	KeyPair *KeyPair
	QueryMeta
}
