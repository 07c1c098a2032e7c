package api

import (
	"net/http"
	"time"
)

// NodeIntro is a node introduction token: what a new client agent's
// first registration presents (client { intro_token } or
// STRATUS_INTRO_TOKEN) when the servers enforce ACLs.
type NodeIntro struct {
	Token string
	// HostName is the one host it introduces; "" for any new host.
	HostName  string
	ExpiresAt time.Time
}

// NodeIntroCreate issues an introduction valid for ttl (the servers'
// default, an hour, when zero), for hostName only when it is set. It
// needs an admin token.
func (o *Operator) NodeIntroCreate(ttl time.Duration, hostName string) (*NodeIntro, error) {
	body := struct{ TTL, HostName string }{HostName: hostName}
	if ttl != 0 {
		body.TTL = ttl.String()
	}
	var out NodeIntro
	if _, err := o.c.write(http.MethodPost, "/v1/operator/node-intro", nil, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
