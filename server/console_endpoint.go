package server

import (
	"crypto/rand"
	"encoding/base64"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// consoleTokenPurgeInterval is how often the leader purges expired
// console tokens.
const consoleTokenPurgeInterval = time.Minute

// Console is the endpoint for console authorization tokens (Nova's
// consoleauth): the agent hosting an instance asks for a token when a
// user asks for a console, and its proxy consumes the token when the
// user connects.
type Console struct{ srv *Server }

// Authorize creates a token for a console of an instance on the calling
// agent's host. The token is random, chosen here, and only its hash is
// stored; the reply carries it once.
func (e *Console) Authorize(args *structs.ConsoleAuthorizeRequest, reply *structs.ConsoleAuthorizeResponse) error {
	if done, err := e.srv.forward("Console.Authorize", args, args, reply); done {
		return err
	}
	ttl := args.TTL
	if ttl <= 0 {
		ttl = structs.ConsoleTokenTTL
	}
	if ttl > structs.ConsoleTokenMaxTTL {
		return structs.Errorf(structs.KindInvalid, "console token ttl %s is over the maximum %s", ttl, structs.ConsoleTokenMaxTTL)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := time.Now()
	tok := &structs.ConsoleAuthToken{
		TokenHash:   structs.HashConsoleToken(token),
		InstanceID:  args.InstanceID,
		ConsoleType: args.ConsoleType,
		HostID:      args.HostID,
		Target:      args.Target,
		CreatedAt:   now.UnixNano(),
		ExpiresAt:   now.Add(ttl).UnixNano(),
	}
	if err := tok.Validate(); err != nil {
		return err
	}
	index, err := e.srv.apply(structs.ConsoleTokenCreateType, &structs.ConsoleTokenCreateEntry{Token: tok})
	if err != nil {
		return err
	}
	reply.Token, reply.ExpiresAt, reply.Index = token, tok.ExpiresAt, index
	return nil
}

// Consume checks a token and uses it up in one Raft entry, so that of
// two connections with one token only one gets through. The token's
// type and host must match the caller's.
func (e *Console) Consume(args *structs.ConsoleConsumeRequest, reply *structs.ConsoleTokenResponse) error {
	if done, err := e.srv.forward("Console.Consume", args, args, reply); done {
		return err
	}
	if args.Token == "" {
		return structs.Errorf(structs.KindNotFound, "console token is invalid or has expired")
	}
	entry := &structs.ConsoleTokenConsumeEntry{TokenHash: structs.HashConsoleToken(args.Token),
		ConsoleType: args.ConsoleType, HostID: args.HostID, Now: time.Now().UnixNano()}
	buf, err := structs.EncodeEntry(structs.ConsoleTokenConsumeType, entry)
	if err != nil {
		return err
	}
	index, resp, err := e.srv.raftApply(buf)
	if err != nil {
		return err
	}
	tok, ok := resp.(*structs.ConsoleAuthToken)
	if !ok {
		return structs.Errorf(structs.KindInternal, "console token consume answered %T", resp)
	}
	reply.Token, reply.Index = tok, index
	return nil
}

// Get reads a valid token without using it (os-console-auth-tokens).
func (e *Console) Get(args *structs.ConsoleTokenRequest, reply *structs.ConsoleTokenResponse) error {
	if done, err := e.srv.forward("Console.Get", args, args, reply); done {
		return err
	}
	hash := structs.HashConsoleToken(args.Token)
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		tok, err := state.ConsoleToken(ws, hash)
		reply.Token = tok
		return tok, state.Index(fsm.TableConsoleTokens), err
	})
	if err != nil {
		return err
	}
	if args.Token == "" || reply.Token == nil || reply.Token.Expired(time.Now().UnixNano()) {
		reply.Token = nil
		return structs.Errorf(structs.KindNotFound, "console token is invalid or has expired")
	}
	return nil
}

// startConsoleTokenPurge runs the leader's purge of expired console
// tokens until stopCh closes; establishLeadership calls it.
func (s *Server) startConsoleTokenPurge(stopCh chan struct{}) {
	s.runPeriodicAsLeader(stopCh, consoleTokenPurgeInterval, func(time.Time) {
		if err := s.purgeConsoleTokens(); err != nil {
			s.logger.Warn("purge console tokens", "error", err)
		}
	})
}

// purgeConsoleTokens proposes a purge when some token is stale, so an
// idle cluster writes nothing.
func (s *Server) purgeConsoleTokens() error {
	state := s.fsm.State()
	toks, err := state.ConsoleTokens(nil)
	if err != nil || len(toks) == 0 {
		return err
	}
	now := time.Now().UnixNano()
	stale := false
	for _, t := range toks {
		inst, err := state.InstanceByID(nil, t.InstanceID)
		if err != nil {
			return err
		}
		if t.Expired(now) || inst == nil || inst.HostID != t.HostID {
			stale = true
			break
		}
	}
	if !stale {
		return nil
	}
	_, err = s.apply(structs.ConsoleTokenConsumeType, &structs.ConsoleTokenConsumeEntry{Purge: true, Now: now})
	return err
}
