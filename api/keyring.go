package api

import "net/http"

// KeyringResponse sums up a gossip keyring operation across the pool.
type KeyringResponse struct {
	// Members is how many members were asked, Responses how many answered.
	Members, Responses int
	// Errors maps a member's name to its failure.
	Errors map[string]string
	// Keys counts the members holding each (base64) key; PrimaryKeys the
	// members encrypting with it.
	Keys        map[string]int
	PrimaryKeys map[string]int
}

// KeyringList lists the gossip keys installed across the pool.
func (o *Operator) KeyringList() (*KeyringResponse, error) {
	var out KeyringResponse
	if _, err := o.c.query("/v1/agent/keyring/list", &out, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// KeyringInstall installs a base64 gossip key on every member.
func (o *Operator) KeyringInstall(key string) (*KeyringResponse, error) {
	return o.keyringChange("install", key)
}

// KeyringUse makes every member encrypt with an installed key.
func (o *Operator) KeyringUse(key string) (*KeyringResponse, error) {
	return o.keyringChange("use", key)
}

// KeyringRemove removes a key (not the one in use) from every member.
func (o *Operator) KeyringRemove(key string) (*KeyringResponse, error) {
	return o.keyringChange("remove", key)
}

func (o *Operator) keyringChange(op, key string) (*KeyringResponse, error) {
	var out KeyringResponse
	if _, err := o.c.write(http.MethodPost, "/v1/agent/keyring/"+op, nil, map[string]string{"Key": key}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
