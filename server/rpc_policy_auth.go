package server

import (
	"crypto/ed25519"
	"crypto/subtle"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// serverTokenMethod is the authentication method of a server
// credential. Identity.IssueToken only signs "password" and "token", so
// no user can hold a token with it.
const serverTokenMethod = "stratus-server"

const (
	// serverTokenTTL is how long a server credential lasts; a new one is
	// signed when less than serverTokenRenew is left.
	serverTokenTTL   = time.Hour
	serverTokenRenew = 10 * time.Minute
	// verifiedTokenTTL bounds how long a verified token is reused without
	// verifying its signature again; a change of the signing keys or the
	// revocations, or a restored snapshot, drops it at once.
	verifiedTokenTTL = 30 * time.Second
	// maxCachedTokens bounds the cache (cleared when full).
	maxCachedTokens = 4096
)

// credentialKind is what an RPC's AuthToken turned out to be.
type credentialKind int

const (
	credNone credentialKind = iota
	credUser
	credNode
	credServer
)

// rpcCredential is the verified caller of one RPC.
type rpcCredential struct {
	kind credentialKind
	// claims and subject are a user token's.
	claims  *structs.TokenClaims
	subject *policy.Subject
	// secret is a node secret; hosts are the registered hosts whose
	// secret it is (resolved on demand by nodeHosts).
	secret string
}

// rpcAuth is the state of the RPC hook: the server's own credential and
// the tokens it verified lately.
type rpcAuth struct {
	mu sync.Mutex
	// own is the server credential and when it expires.
	own        string
	ownExpires time.Time
	ownKeyID   string
	// verified caches VerifyToken's answers by token.
	verified map[string]*verifiedToken
	// indexes are the signing keys' and revocations' indexes last read.
	indexes authIndexes
}

// authIndexes are the signing keys' and revocations' table indexes of a
// state, valid until changed is closed: it closes on the next change of
// any table's index, so that the cache of verified tokens does not read
// both indexes (two read transactions) for every RPC, only once for
// every entry applied.
type authIndexes struct {
	state         *fsm.StateStore
	keys, revoked uint64
	changed       <-chan struct{}
}

// verifiedToken is a cached verification: valid while the state, its
// signing keys and revocations are those it was checked against.
type verifiedToken struct {
	claims  *structs.TokenClaims
	state   *fsm.StateStore
	keys    uint64
	revoked uint64
	until   time.Time
}

// installRPCAuth makes the RPC server run authorizeRPC before every
// endpoint call.
func (s *Server) installRPCAuth() {
	s.rpcAuth = &rpcAuth{verified: map[string]*verifiedToken{}}
	s.rpcServer.SetAuthorizer(s.authorizeRPC)
}

// aclEnabled reports whether this server enforces the RPC rules.
func (s *Server) aclEnabled() bool { return s.config.ACLEnabled }

// authorizeRPC applies method's rule to a call (the rpc.Authorizer). It
// runs on every server a call reaches, forwarded or not: Forwarded is
// never trusted.
func (s *Server) authorizeRPC(method string, args any) (rpc.ReplyFilter, error) {
	if !s.aclEnabled() {
		return nil, nil
	}
	rule, ok := rpcRules[method]
	if !ok {
		rule = ruleServers
	}
	if rule.users == policy.Public || rule.publicIf != nil && rule.publicIf(args) {
		return nil, nil
	}
	cred, err := s.credentialOf(authTokenOf(args))
	if err != nil {
		return nil, err
	}
	switch cred.kind {
	case credServer:
		return nil, nil
	case credNode:
		return s.authorizeNode(method, rule, cred, args)
	case credUser:
		return nil, s.authorizeUser(method, rule, cred, args)
	}
	return nil, structs.Errorf(structs.KindUnauthenticated, "%s needs a credential: a token from the identity service", method)
}

// authorizeUser applies a rule to a verified user token.
func (s *Server) authorizeUser(method string, rule rpcRule, cred *rpcCredential, args any) error {
	subj := cred.subject
	if !rule.s3 && slices.Contains(cred.claims.Methods, structs.S3TokenMethod) {
		return structs.Errorf(structs.KindPermission, "%s: an S3 request's token reaches only the S3 store", method)
	}
	if rule.unrestricted && cred.claims.AppCredRestricted {
		return structs.Errorf(structs.KindPermission,
			"%s: a restricted application credential's token may not manage application credentials", method)
	}
	if subj.IsAdmin() && subj.ProjectID != "" && rule.users != policy.Unset {
		return nil
	}
	switch {
	case rule.users == policy.Unset:
		return structs.Errorf(structs.KindPermission, "%s is not open to user tokens", method)
	case rule.self:
		// The check below decides, scoped or not.
	case !rule.users.Allows(subj):
		if subj.ProjectID == "" {
			return structs.Errorf(structs.KindPermission, "%s needs a project-scoped token", method)
		}
		return structs.Errorf(structs.KindPermission, "%s needs the %s role", method, rule.users)
	}
	if err := bindCaller(method, rule, subj, args); err != nil {
		return err
	}
	if rule.ownInstances {
		if err := s.checkOwnInstances(subj, args); err != nil {
			return err
		}
	}
	if rule.userCheck != nil {
		return rule.userCheck(s, cred, args)
	}
	if rule.self {
		return structs.Errorf(structs.KindPermission, "%s needs the admin role", method)
	}
	return nil
}

// authorizeNode applies a rule to a node secret.
func (s *Server) authorizeNode(method string, rule rpcRule, cred *rpcCredential, args any) (rpc.ReplyFilter, error) {
	switch rule.node {
	case nodeEndpoint:
		// The endpoint checks the secret against the hosts it names.
		return nil, nil
	case nodeOwn:
		hosts, err := s.nodeHosts(cred.secret)
		if err != nil {
			return nil, err
		}
		if len(hosts) == 0 {
			return nil, structs.Errorf(structs.KindUnauthenticated, "the node secret is not that of a registered host")
		}
		if rule.nodeCheck != nil {
			if err := rule.nodeCheck(s, hosts, args); err != nil {
				return nil, err
			}
		}
		if rule.nodeFilter != nil {
			return rule.nodeFilter(hosts), nil
		}
		return nil, nil
	}
	if hosts, err := s.nodeHosts(cred.secret); err != nil || len(hosts) == 0 {
		return nil, structs.Errorf(structs.KindUnauthenticated, "%s: the credential is no token, nor the node secret of a registered host", method)
	}
	return nil, structs.Errorf(structs.KindPermission, "%s is not open to node secrets", method)
}

// credentialOf classifies and verifies a credential: "" is none, a
// "v2." token a user's or a server's, anything else a node secret.
func (s *Server) credentialOf(raw string) (*rpcCredential, error) {
	switch {
	case raw == "":
		return &rpcCredential{kind: credNone}, nil
	case strings.HasPrefix(raw, authtoken.Prefix):
		claims, err := s.verifyTokenCached(raw)
		if err != nil {
			return nil, structs.Errorf(structs.KindUnauthenticated, "%s", structs.Message(err))
		}
		if slices.Contains(claims.Methods, serverTokenMethod) {
			return &rpcCredential{kind: credServer, claims: claims}, nil
		}
		if slices.Contains(claims.Methods, structs.NodeIntroMethod) {
			return nil, structs.Errorf(structs.KindUnauthenticated, "a node introduction token is no credential: it only introduces a new host to Host.Register")
		}
		return &rpcCredential{kind: credUser, claims: claims, subject: &policy.Subject{
			UserID: claims.UserID, ProjectID: claims.ProjectID, Roles: claims.Roles}}, nil
	case len(raw) < structs.MinNodeSecretLen:
		return nil, structs.Errorf(structs.KindUnauthenticated, "the credential is neither a token nor a node secret")
	}
	return &rpcCredential{kind: credNode, secret: raw}, nil
}

// verifyTokenCached is VerifyToken, reusing a recent answer while the
// signing keys and revocations it was checked against are unchanged.
func (s *Server) verifyTokenCached(raw string) (*structs.TokenClaims, error) {
	state := s.fsm.State()
	keys, revoked := s.authIndexes(state)
	now := time.Now()
	a := s.rpcAuth
	a.mu.Lock()
	v := a.verified[raw]
	a.mu.Unlock()
	if v != nil && v.state == state && v.keys == keys && v.revoked == revoked && now.Before(v.until) {
		return v.claims, nil
	}
	claims, err := s.VerifyToken(raw)
	if err != nil {
		return nil, err
	}
	until := now.Add(verifiedTokenTTL)
	if claims.ExpiresAt.Before(until) {
		until = claims.ExpiresAt
	}
	a.mu.Lock()
	if len(a.verified) >= maxCachedTokens {
		clear(a.verified)
	}
	a.verified[raw] = &verifiedToken{claims: claims, state: state, keys: keys, revoked: revoked, until: until}
	a.mu.Unlock()
	return claims, nil
}

// authIndexes returns state's signing keys' and revocations' table
// indexes, read again only once an index of state changed since the
// last read.
func (s *Server) authIndexes(state *fsm.StateStore) (keys, revoked uint64) {
	a := s.rpcAuth
	a.mu.Lock()
	m := a.indexes
	a.mu.Unlock()
	if m.state == state && m.changed != nil {
		select {
		case <-m.changed:
		default:
			return m.keys, m.revoked
		}
	}
	// The watch first: a change after it (even one the reads below
	// already see) closes it, so the values kept are never older than
	// what it guards.
	m = authIndexes{state: state, changed: state.IndexWatch()}
	m.keys, m.revoked = state.Index(fsm.TableSigningKeys), state.Index(fsm.TableRevokedTokens)
	a.mu.Lock()
	a.indexes = m
	a.mu.Unlock()
	return m.keys, m.revoked
}

// nodeHosts returns the registered hosts whose node secret is secret.
func (s *Server) nodeHosts(secret string) (map[string]bool, error) {
	hosts, err := s.fsm.State().Hosts(nil)
	if err != nil {
		return nil, err
	}
	hash := structs.HashNodeSecret(secret)
	out := map[string]bool{}
	for _, h := range hosts {
		if len(h.SecretHash) > 0 && subtle.ConstantTimeCompare(h.SecretHash, hash) == 1 {
			out[h.ID] = true
		}
	}
	return out, nil
}

// serverCredential is this server's own credential: a token it signs
// with the cluster's newest signing key, renewed before it expires or
// when its key is gone. "" while no signing key exists yet (the leader
// creates one when elected).
func (s *Server) serverCredential() string {
	a := s.rpcAuth
	if a == nil || s.fsm == nil {
		return ""
	}
	keys, err := s.fsm.State().SigningKeys(nil)
	if err != nil {
		return ""
	}
	key := newestSigningKey(keys)
	if key == nil {
		return ""
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.own != "" && a.ownKeyID == key.ID && now.Add(serverTokenRenew).Before(a.ownExpires) {
		return a.own
	}
	claims := &structs.TokenClaims{UserID: "server:" + s.config.NodeID, UserName: s.config.NodeName,
		Methods: []string{serverTokenMethod}, IssuedAt: now.UTC(), ExpiresAt: now.Add(serverTokenTTL).UTC(),
		AuditID: authtoken.NewAuditID()}
	tok, err := authtoken.Sign(key.ID, ed25519.PrivateKey(key.Secret), claims)
	if err != nil {
		s.logger.Warn("cannot sign the server's RPC credential", "error", err)
		return ""
	}
	a.own, a.ownExpires, a.ownKeyID = tok, claims.ExpiresAt, key.ID
	return tok
}

// Credential is this server's own credential (see serverCredential),
// for the streams an agent embedded in the server opens on its own
// behalf; "" with ACLs off or while no signing key exists.
func (s *Server) Credential() string {
	if !s.aclEnabled() {
		return ""
	}
	return s.serverCredential()
}

// authTokenOf reads the credential a request carries (every request
// that embeds QueryOptions or WriteRequest, and the stream openers, is
// structs.Credentialed), "" when it carries none.
func authTokenOf(args any) string {
	if cr, ok := args.(structs.Credentialed); ok {
		return cr.AuthTokenValue()
	}
	return ""
}

// setAuthToken sets a request's credential when it carries none.
func setAuthToken(args any, token string) {
	if cr, ok := args.(structs.Credentialed); ok && cr.AuthTokenValue() == "" {
		cr.SetAuthToken(token)
	}
}
