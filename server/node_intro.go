package server

import (
	"crypto/ed25519"
	"slices"
	"time"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

// Node introduction, as Nomad 1.10's: with ACLs on, the first
// registration of a host the servers do not know (no record, or a record
// without a node secret's hash: never claimed, or deregistered by an
// operator to reset a lost secret) must carry an introduction token in
// HostRegisterRequest.IntroToken. An operator issues one with `cloudctl
// operator node-intro create [-ttl 1h] [-host NAME]`
// (Operator.NodeIntroCreate, admin): a token signed with the cluster's
// signing key like every token (so only servers mint it), of method
// structs.NodeIntroMethod, expiring after its TTL, and naming the one
// host it may introduce when -host is given. The server verifies it
// (signature, expiry, revocation, method, host name) and then stores the
// hash of the agent's node secret as before; every later registration
// and call presents that secret. An agent that runs a server mints its
// own hosts' introductions in process (NodeIntroToken). With ACLs off
// nothing is checked.
//
// An introduction may introduce several hosts until it expires (Nomad's
// do too): keep TTLs short and name the host where you can. Revoking it
// (Identity.RevokeToken of its audit id, as for any token) ends it
// sooner.

// nodeIntroUser is the user id in an introduction's claims: no user has
// it, and the hook refuses introductions as credentials.
const nodeIntroUser = "node-intro"

// NodeIntroToken signs an introduction for hostName ("" for any host)
// valid for ttl (the default when zero, at most the maximum).
func (s *Server) NodeIntroToken(hostName string, ttl time.Duration) (string, time.Time, error) {
	switch {
	case ttl < 0:
		return "", time.Time{}, structs.Errorf(structs.KindInvalid, "an introduction's TTL cannot be negative")
	case ttl == 0:
		ttl = structs.NodeIntroDefaultTTL
	case ttl > structs.NodeIntroMaxTTL:
		return "", time.Time{}, structs.Errorf(structs.KindInvalid, "an introduction's TTL is at most %s", structs.NodeIntroMaxTTL)
	}
	// Right after the first election the leader is still creating the
	// signing key: wait for it (identity_leader.go) rather than refuse.
	key, err := s.awaitSigningKey("NodeIntroToken")
	if err != nil {
		return "", time.Time{}, err
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	claims := &structs.TokenClaims{UserID: nodeIntroUser, UserName: hostName, Methods: []string{structs.NodeIntroMethod},
		IssuedAt: now, ExpiresAt: now.Add(ttl), AuditID: authtoken.NewAuditID()}
	tok, err := authtoken.Sign(key.ID, ed25519.PrivateKey(key.Secret), claims)
	if err != nil {
		return "", time.Time{}, structs.Errorf(structs.KindInternal, "sign a node introduction: %v", err)
	}
	return tok, claims.ExpiresAt, nil
}

// errNodeIntro is the answer to a registration of a new host without a
// valid introduction.
func errNodeIntro(host *structs.Host, why string) error {
	return structs.Errorf(structs.KindPermission,
		"host %s (%s) is not known to the cluster: its first registration needs a node introduction token (%s); an operator issues one with `cloudctl operator node-intro create -host %s` and the agent reads it from client { intro_token } or STRATUS_INTRO_TOKEN",
		host.Name, host.ID, why, host.Name)
}

// checkNodeIntro admits the registration of host: a host whose node
// secret the servers keep (checked by authenticateNode) needs nothing
// more; a new one a valid introduction for it. Only with ACLs on.
func (s *Server) checkNodeIntro(host *structs.Host, intro string) error {
	if !s.aclEnabled() {
		return nil
	}
	cur, err := s.fsm.State().HostByID(nil, host.ID)
	if err != nil {
		return err
	}
	if cur != nil && len(cur.SecretHash) > 0 {
		return nil
	}
	if intro == "" {
		return errNodeIntro(host, "none was given")
	}
	claims, err := s.VerifyToken(intro)
	if err != nil {
		return errNodeIntro(host, "the one given is invalid: "+structs.Message(err))
	}
	if !slices.Contains(claims.Methods, structs.NodeIntroMethod) {
		return errNodeIntro(host, "the token given is not an introduction")
	}
	if claims.UserName != "" && claims.UserName != host.Name {
		return errNodeIntro(host, "the one given introduces host "+claims.UserName+" only")
	}
	return nil
}
