package structs

import (
	"crypto/sha256"
	"crypto/subtle"
)

// MinNodeSecretLen is the shortest node secret the servers accept: an
// agent's is 32 random bytes, hex-encoded.
const MinNodeSecretLen = 32

// HashNodeSecret is what a host record keeps of its agent's node secret.
// A plain SHA-256 suffices: the secret is 256 random bits, not a
// password.
func HashNodeSecret(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

// NodeSecretMatches reports, in constant time, whether secret hashes to
// hash.
func NodeSecretMatches(hash []byte, secret string) bool {
	return subtle.ConstantTimeCompare(hash, HashNodeSecret(secret)) == 1
}
