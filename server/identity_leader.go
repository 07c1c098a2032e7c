package server

import (
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// credentialWait bounds how long a server's own call waits for the
// cluster's first signing key: several elections' worth on a loaded
// machine, as the agent's write retries.
const credentialWait = 30 * time.Second

// startIdentityLeaderDuties runs the identity leader duties;
// establishLeadership calls it. The signing key is created before it
// returns, so no leader duty started after it, nor any server's own call
// (awaitServerCredential), finds the state without one.
func (s *Server) startIdentityLeaderDuties(stopCh chan struct{}) {
	s.ensureSigningKey(stopCh)
}

// awaitServerCredential returns this server's credential for its own
// call of method, waiting while the cluster has no signing key yet
// (awaitSigningKey): right after the first election the leader creates
// one, and until then the call would be refused as unauthenticated. It
// does not wait for a call that needs no credential.
func (s *Server) awaitServerCredential(method string, args any) (string, error) {
	if rule, ok := rpcRules[method]; ok && (rule.users == policy.Public || rule.publicIf != nil && rule.publicIf(args)) {
		return s.serverCredential(), nil
	}
	for {
		if tok := s.serverCredential(); tok != "" {
			return tok, nil
		}
		if _, err := s.awaitSigningKey(method); err != nil {
			return "", err
		}
	}
}

// awaitSigningKey returns the newest signing key, waiting up to
// credentialWait (a blocking query on the signing keys) while the state
// has none. Without one in time it answers an error meaning "no leader",
// which callers retry.
func (s *Server) awaitSigningKey(method string) (*structs.SigningKey, error) {
	timeout := time.After(credentialWait)
	for {
		ws := memdb.NewWatchSet()
		state := s.fsm.State()
		ws.Add(state.AbandonCh())
		ws.Add(s.shutdownCh)
		keys, err := state.SigningKeys(ws)
		if err != nil {
			return nil, err
		}
		if key := newestSigningKey(keys); key != nil {
			return key, nil
		}
		if timedOut := ws.Watch(timeout); timedOut {
			return nil, structs.Errorf(structs.KindNoLeader,
				"%s: no token signing key yet: no leader has created one in %s", method, credentialWait)
		}
		select {
		case <-s.shutdownCh:
			return nil, structs.Errorf(structs.KindUnavailable, "%s: server is shutting down", method)
		default:
		}
	}
}

// ensureSigningKey commits a token signing key when the state has none,
// retrying until it succeeds or leadership ends. It is idempotent: with a
// key in the state it does nothing.
func (s *Server) ensureSigningKey(stopCh chan struct{}) {
	for {
		err := s.createSigningKeyIfNone()
		if err == nil {
			return
		}
		s.logger.Warn("create token signing key", "error", err)
		select {
		case <-stopCh:
			return
		case <-s.shutdownCh:
			return
		case <-time.After(time.Second):
		}
	}
}

// createSigningKeyIfNone commits an Ed25519 signing key unless the state
// holds one already; keys of the older HMAC format do not count.
func (s *Server) createSigningKeyIfNone() error {
	keys, err := s.fsm.State().SigningKeys(nil)
	if err != nil {
		return err
	}
	if newestSigningKey(keys) != nil {
		return nil
	}
	pub, priv, err := authtoken.GenerateKey()
	if err != nil {
		return err
	}
	key := &structs.SigningKey{ID: uuid.NewString(), Secret: priv, PublicKey: pub, CreatedAt: time.Now().UnixNano()}
	if _, err := s.apply(structs.SigningKeyUpsertType, &structs.SigningKeyEntry{Key: key}); err != nil {
		return err
	}
	s.logger.Info("created the token signing key", "id", key.ID)
	return nil
}
