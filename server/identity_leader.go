package server

import (
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

// startIdentityLeaderDuties runs the identity leader duties until stopCh
// closes; establishLeadership calls it.
func (s *Server) startIdentityLeaderDuties(stopCh chan struct{}) {
	s.leaderWG.Add(1)
	go func() {
		defer s.leaderWG.Done()
		s.ensureSigningKey(stopCh)
	}()
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
