package api

import (
	"net/http"
	"net/url"
)

// KeyPairs manages users' key pairs, the SSH public keys injected into
// instances. A key pair belongs to the user of the client's identity
// token; without one, the user must be named with ForUser.
type KeyPairs struct {
	c    *Client
	user string
}

// KeyPairs returns a handle on the /v1/keypairs endpoints.
func (c *Client) KeyPairs() *KeyPairs { return &KeyPairs{c: c} }

// ForUser returns a handle on another user's key pairs (an operator's
// call, or an admin token's).
func (k *KeyPairs) ForUser(userID string) *KeyPairs { return &KeyPairs{c: k.c, user: userID} }

// KeyPair is a user's named public key.
type KeyPair struct {
	Name        string
	UserID      string
	Type        string // "ssh" or "x509"
	PublicKey   string
	Fingerprint string
	// CreatedAt is in unix nanoseconds.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

func (k *KeyPairs) params() url.Values {
	if k.user == "" {
		return nil
	}
	return url.Values{"user_id": {k.user}}
}

// List returns the user's key pairs, sorted by name.
func (k *KeyPairs) List(q *QueryOptions) ([]*KeyPair, *QueryMeta, error) {
	var out []*KeyPair
	h, err := k.c.doJSON(&request{method: http.MethodGet, path: "/v1/keypairs", params: k.params(), query: q}, nil, &out)
	if err != nil {
		return nil, nil, err
	}
	qm, err := parseQueryMeta(h)
	return out, qm, err
}

// Info returns one of the user's key pairs.
func (k *KeyPairs) Info(name string, q *QueryOptions) (*KeyPair, *QueryMeta, error) {
	var out KeyPair
	h, err := k.c.doJSON(&request{method: http.MethodGet, path: "/v1/keypairs/" + url.PathEscape(name), params: k.params(), query: q}, nil, &out)
	if err != nil {
		return nil, nil, err
	}
	qm, err := parseQueryMeta(h)
	return &out, qm, err
}

// Create registers a public key under name; the type is "ssh" when
// empty. The servers never see a private key.
func (k *KeyPairs) Create(name, keyType, publicKey string) (*KeyPair, *WriteMeta, error) {
	in := map[string]string{"Name": name, "Type": keyType, "PublicKey": publicKey}
	if k.user != "" {
		in["UserID"] = k.user
	}
	var out KeyPair
	wm, err := k.c.write(http.MethodPost, "/v1/keypairs", nil, in, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Delete removes one of the user's key pairs.
func (k *KeyPairs) Delete(name string) (*WriteMeta, error) {
	return k.c.delete("/v1/keypairs/"+url.PathEscape(name), k.params())
}
