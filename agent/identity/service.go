package identity

import (
	"bytes"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// RPC reaches the servers: the agent's in-process server or its pool.
type RPC interface {
	RPC(method string, args, reply any) error
}

// Config configures a Service.
type Config struct {
	// RPC reaches the servers. Required.
	RPC RPC
	// Logger defaults to a null logger.
	Logger hclog.Logger
	// Region is the catalog's region (default "RegionOne").
	Region string
	// TokenTTL is how long an issued token lives (default 1h, at most
	// structs.MaxTokenTTL).
	TokenTTL time.Duration
	// ExternalURL returns the base URL clients reach this agent at, such
	// as "http://127.0.0.1:8774", for the catalog and links. The default
	// derives it from the request's Host.
	ExternalURL func(r *http.Request) string
}

// Service serves the identity HTTP API and verifies tokens.
type Service struct {
	cfg    Config
	logger hclog.Logger
	rpc    RPC
	table  *route.Table[handler]

	mu sync.RWMutex
	// keys are the signing keys' public halves by id; newest is the
	// latest of them. Only the servers sign.
	keys   map[string]*structs.SigningKey
	newest *structs.SigningKey
	// revoked maps audit ids to their expiry (unix ns); events are the
	// revocation events. local holds what this agent revoked itself,
	// until the servers' list (maybe read from a lagging follower)
	// surely has it.
	revoked map[string]int64
	events  []*structs.RevokedToken
	local   map[string]int64
	// lastKeyFetch rate-limits synchronous key fetches for unknown kids.
	lastKeyFetch time.Time
	// verified caches checked signatures until the keys change.
	verified verifyCache

	startOnce, stopOnce sync.Once
	stopCh              chan struct{}
	wg                  sync.WaitGroup
}

// watchWait is how long a background blocking query waits on a server.
const watchWait = 5 * time.Minute

// New builds a Service; Start begins refreshing keys and revocations.
func New(cfg Config) (*Service, error) {
	if cfg.RPC == nil {
		return nil, fmt.Errorf("identity: an RPC caller is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Region == "" {
		cfg.Region = "RegionOne"
	}
	if cfg.TokenTTL == 0 {
		cfg.TokenTTL = time.Hour
	}
	if cfg.TokenTTL < 0 || cfg.TokenTTL > structs.MaxTokenTTL {
		return nil, fmt.Errorf("identity: token TTL %s is not between 0 and %s", cfg.TokenTTL, structs.MaxTokenTTL)
	}
	if cfg.ExternalURL == nil {
		cfg.ExternalURL = hostURL
	}
	s := &Service{
		cfg:     cfg,
		logger:  cfg.Logger.Named("identity"),
		rpc:     cfg.RPC,
		keys:    map[string]*structs.SigningKey{},
		revoked: map[string]int64{},
		local:   map[string]int64{},
		stopCh:  make(chan struct{}),
	}
	s.table = route.MustTable(s.routes())
	return s, nil
}

// hostURL is the default ExternalURL: the URL the client reached the
// agent at (a trusted proxy's or the public_url, httpx.ExternalBase).
func hostURL(r *http.Request) string {
	return httpx.ExternalBase(r)
}

// Start begins the background refresh of signing keys and revocations.
func (s *Service) Start() {
	s.startOnce.Do(func() {
		s.wg.Add(2)
		go s.watch(structs.IdentityKindSigningKeys, s.setKeys)
		go s.watch(structs.IdentityKindRevoked, s.setRevoked)
	})
}

// Stop ends the background refresh. A blocking query in flight is left
// to finish on its own; Stop does not wait for the servers.
func (s *Service) Stop() {
	s.stopOnce.Do(func() { close(s.stopCh) })
	s.wg.Wait()
}

// watch keeps one kind fresh with blocking queries until Stop.
func (s *Service) watch(kind string, set func(*structs.IdentityListResponse)) {
	defer s.wg.Done()
	var index uint64
	failures := 0
	for {
		start := time.Now()
		req := &structs.IdentityListRequest{Kind: kind, QueryOptions: structs.QueryOptions{
			MinQueryIndex: index, MaxQueryTime: watchWait, AllowStale: true}}
		resp, err := s.listAsync(req)
		select {
		case <-s.stopCh:
			return
		default:
		}
		wait := 50 * time.Millisecond
		switch {
		case err != nil:
			failures++
			wait = min(time.Duration(failures)*250*time.Millisecond, 5*time.Second)
			s.logger.Debug("refresh failed", "kind", kind, "error", err)
		case resp.Index != index:
			failures = 0
			set(resp)
			index = resp.Index
		default:
			failures = 0
			// Nothing changed; never spin on a server that answers at once.
			if time.Since(start) < time.Second {
				wait = time.Second
			}
		}
		select {
		case <-s.stopCh:
			return
		case <-time.After(wait):
		}
	}
}

// listAsync runs a list RPC in its own goroutine so Stop need not wait
// for a blocking query.
func (s *Service) listAsync(req *structs.IdentityListRequest) (*structs.IdentityListResponse, error) {
	type result struct {
		resp *structs.IdentityListResponse
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		var resp structs.IdentityListResponse
		err := s.rpc.RPC("Identity.List", req, &resp)
		ch <- result{&resp, err}
	}()
	select {
	case r := <-ch:
		return r.resp, r.err
	case <-s.stopCh:
		return nil, structs.Errorf(structs.KindUnavailable, "identity service stopped")
	}
}

func (s *Service) setKeys(resp *structs.IdentityListResponse) {
	keys := make(map[string]*structs.SigningKey, len(resp.SigningKeys))
	var newest *structs.SigningKey
	for _, k := range resp.SigningKeys {
		keys[k.ID] = k
		if newest == nil || k.CreatedAt > newest.CreatedAt || (k.CreatedAt == newest.CreatedAt && k.ID > newest.ID) {
			newest = k
		}
	}
	s.mu.Lock()
	if !sameKeys(s.keys, keys) {
		// Under s.mu, so that no signature checked with the old keys
		// is remembered against the new ones.
		s.verified.keysChanged()
	}
	s.keys, s.newest = keys, newest
	s.mu.Unlock()
}

// keysLoaded reports whether the signing keys were ever read from the
// servers (a cluster always has at least one).
func (s *Service) keysLoaded() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.keys) > 0
}

// sameKeys reports whether two key sets hold the same public keys under
// the same ids.
func sameKeys(a, b map[string]*structs.SigningKey) bool {
	if len(a) != len(b) {
		return false
	}
	for id, k := range a {
		o, ok := b[id]
		if !ok || !bytes.Equal(k.PublicKey, o.PublicKey) {
			return false
		}
	}
	return true
}

func (s *Service) setRevoked(resp *structs.IdentityListResponse) {
	revoked := map[string]int64{}
	var events []*structs.RevokedToken
	for _, r := range resp.Revoked {
		if r.IsEvent() {
			events = append(events, r)
		} else {
			revoked[r.AuditID] = r.ExpiresAt
		}
	}
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked, s.events = revoked, events
	for id, exp := range s.local {
		if _, ok := revoked[id]; ok || exp < now {
			delete(s.local, id)
		}
	}
}

// fetchKeys reads the signing keys now, for a token signed with a key
// not seen yet, or the first token before the background query answered.
// It runs at most once a second.
func (s *Service) fetchKeys() {
	s.mu.Lock()
	if time.Since(s.lastKeyFetch) < time.Second {
		s.mu.Unlock()
		return
	}
	s.lastKeyFetch = time.Now()
	s.mu.Unlock()
	var resp structs.IdentityListResponse
	if err := s.rpc.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindSigningKeys}, &resp); err != nil {
		s.logger.Debug("fetch signing keys", "error", err)
		return
	}
	s.setKeys(&resp)
}

// key returns a signing key by id (the newest for ""), fetching the keys
// when it is not known.
func (s *Service) key(id string) *structs.SigningKey {
	get := func() *structs.SigningKey {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if id == "" {
			return s.newest
		}
		return s.keys[id]
	}
	if k := get(); k != nil {
		return k
	}
	s.fetchKeys()
	return get()
}

// markRevoked makes this agent refuse a token at once, before the
// servers' list comes back with it.
func (s *Service) markRevoked(auditID string, expiresAt time.Time) {
	s.mu.Lock()
	s.local[auditID] = expiresAt.UnixNano()
	s.mu.Unlock()
}

// isRevoked checks a token against revocations and revocation events.
func (s *Service) isRevoked(t *Token) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, ok := s.revoked[t.AuditID]; ok {
		return true
	}
	if _, ok := s.local[t.AuditID]; ok {
		return true
	}
	c := t.claims()
	for _, ev := range s.events {
		if ev.Revokes(c) {
			return true
		}
	}
	return false
}
