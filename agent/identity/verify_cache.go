package identity

import (
	"slices"
	"sync"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

const (
	// verifiedTTL bounds how long a token's checked signature is reused,
	// as the servers' cache of verified credentials does.
	verifiedTTL = 30 * time.Second
	// maxVerified bounds the cache (cleared when full).
	maxVerified = 4096
)

// verifyCache remembers the tokens whose signature this agent has
// checked, so that a client's every request does not cost an ed25519
// verification. Only the signature and the decoding are reused: an entry
// is valid for the signing keys it was checked against (any change of
// the keys — rotation, retirement — drops every entry), until the token
// expires and for at most verifiedTTL; revocations are checked on every
// request, as before.
type verifyCache struct {
	mu sync.Mutex
	// gen counts the changes of the signing keys.
	gen     uint64
	entries map[string]verifiedClaims
}

// verifiedClaims is one checked token: its claims, the key generation it
// was checked against and when the entry stops being used.
type verifiedClaims struct {
	claims *structs.TokenClaims
	gen    uint64
	until  time.Time
}

// generation is the current key generation, read before a verification
// so that an entry is never stored against keys newer than the ones that
// checked it.
func (c *verifyCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// keysChanged drops every entry: a key may have gone.
func (c *verifyCache) keysChanged() {
	c.mu.Lock()
	c.gen++
	clear(c.entries)
	c.mu.Unlock()
}

// get returns a copy of the claims of raw if it was checked against the
// current keys and its entry is still fresh at now.
func (c *verifyCache) get(raw string, now time.Time) *structs.TokenClaims {
	c.mu.Lock()
	e, ok := c.entries[raw]
	gen := c.gen
	c.mu.Unlock()
	if !ok || e.gen != gen || !now.Before(e.until) {
		return nil
	}
	return cloneClaims(e.claims)
}

// put remembers raw's claims, checked at now against the keys of
// generation gen.
func (c *verifyCache) put(raw string, claims *structs.TokenClaims, gen uint64, now time.Time) {
	until := now.Add(verifiedTTL)
	if claims.ExpiresAt.Before(until) {
		until = claims.ExpiresAt
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil || len(c.entries) >= maxVerified {
		c.entries = make(map[string]verifiedClaims)
	}
	c.entries[raw] = verifiedClaims{claims: cloneClaims(claims), gen: gen, until: until}
}

// cloneClaims copies claims with their own slices, so that no caller can
// change what the cache or another request holds.
func cloneClaims(c *structs.TokenClaims) *structs.TokenClaims {
	out := *c
	out.Roles, out.RoleIDs, out.Methods = slices.Clone(c.Roles), slices.Clone(c.RoleIDs), slices.Clone(c.Methods)
	return &out
}
