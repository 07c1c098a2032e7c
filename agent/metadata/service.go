package metadata

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client/instancedata"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// DefaultPort is the metadata service's port, Nova's metadata_listen_port.
const DefaultPort = 8775

// DefaultCacheTTL is how long an instance's metadata is reused before it
// is read again (Nova's metadata_cache_expiration).
const DefaultCacheTTL = 15 * time.Second

// Config configures the service.
type Config struct {
	// Call reaches the servers. Required.
	Call instancedata.CallFunc
	// HostIDs lists the ids of the hosts this agent runs; a request by
	// source address is answered only for instances on one of them.
	// When nil, the hosts are those whose GossipMember is Member.
	HostIDs func() []string
	// Member is the agent's gossip member name (its node name).
	Member string
	// SharedSecret verifies proxied requests (Nova's
	// metadata_proxy_shared_secret); empty ignores the proxy headers.
	SharedSecret string
	// CacheTTL overrides DefaultCacheTTL; negative disables the cache.
	CacheTTL time.Duration
	Logger   hclog.Logger
}

// Service answers metadata requests. It is an http.Handler.
type Service struct {
	cfg    Config
	logger hclog.Logger
	ttl    time.Duration

	mu sync.Mutex
	// byIP maps a fixed IP to the instances on this agent's hosts that
	// hold it, refreshed at most every ipRefresh.
	byIP    map[string][]string
	hosts   []string
	ipsRead time.Time
	cache   map[string]cached

	httpServer *http.Server
	// table is the compiled routes (routes.go).
	table *route.Table[handler]
}

type cached struct {
	data *instancedata.InstanceData
	at   time.Time
}

// ipRefresh bounds how often an unknown source address makes the service
// read the hosts' ports again.
const ipRefresh = time.Second

// New builds the service.
func New(cfg Config) *Service {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	ttl := cfg.CacheTTL
	if ttl == 0 {
		ttl = DefaultCacheTTL
	}
	s := &Service{cfg: cfg, logger: logger, ttl: ttl, cache: map[string]cached{}}
	s.table = route.MustTable(s.routes())
	if s.cfg.HostIDs == nil {
		s.cfg.HostIDs = s.memberHosts
	}
	return s
}

// memberHosts lists the hosts whose gossip member is this agent's.
func (s *Service) memberHosts() []string {
	if s.cfg.Member == "" {
		return nil
	}
	var out structs.HostListResponse
	if err := s.cfg.Call("Host.List", &structs.HostListRequest{}, &out); err != nil {
		s.logger.Warn("cannot list this agent's hosts", "error", err)
		return nil
	}
	var ids []string
	for _, h := range out.Hosts {
		if h.GossipMember == s.cfg.Member {
			ids = append(ids, h.ID)
		}
	}
	return ids
}

// Serve answers requests on ln until Shutdown.
func (s *Service) Serve(ln net.Listener) error {
	s.mu.Lock()
	s.httpServer = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	srv := s.httpServer
	s.mu.Unlock()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("metadata service: %w", err)
	}
	return nil
}

// Shutdown stops Serve, waiting for requests in flight up to ctx.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.httpServer
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Shutdown(ctx)
}

// httpError is a refusal with its status.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func errStatus(status int, msg string) error { return &httpError{status: status, msg: msg} }

var errNotFound = errStatus(http.StatusNotFound, "The resource could not be found.")

// password answers GET (the encrypted password, "" for none) and POST
// (set it, once) of /openstack/<version>/password, as Nova's
// password.handle_password.
func (s *Service) password(w http.ResponseWriter, r *http.Request, d *instancedata.InstanceData) error {
	// Read fresh, not from the cache: an operator may just have cleared
	// it through os-server-password.
	var got structs.SingleInstanceResponse
	if err := s.cfg.Call("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: d.Instance.ID}, &got); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return errNotFound
		}
		return fmt.Errorf("read instance %s: %w", d.Instance.ID, err)
	}
	if got.Instance == nil {
		return errNotFound
	}
	if r.Method != http.MethodPost {
		writeText(w, got.Instance.Password(), "text/plain")
		return nil
	}
	if got.Instance.Password() != "" {
		return errStatus(http.StatusConflict, "There was a conflict when trying to complete your request.")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, structs.MaxPasswordSize+1))
	if err != nil {
		return errStatus(http.StatusBadRequest, "Could not read the request body.")
	}
	if r.ContentLength > structs.MaxPasswordSize || len(body) > structs.MaxPasswordSize {
		return errStatus(http.StatusBadRequest, "Request is too large.")
	}
	var out structs.GenericResponse
	err = s.cfg.Call("Instance.SetPassword", &structs.InstancePasswordRequest{InstanceID: d.Instance.ID, Password: string(body)}, &out)
	s.forget(d.Instance.ID)
	switch structs.KindOf(err) {
	case "":
	case structs.KindConflict:
		return errStatus(http.StatusConflict, "There was a conflict when trying to complete your request.")
	case structs.KindNotFound:
		return errNotFound
	default:
		if err != nil {
			return fmt.Errorf("store password of instance %s: %w", d.Instance.ID, err)
		}
	}
	writeText(w, "", "text/plain")
	return nil
}

// writeText writes a 200 answer.
func writeText(w http.ResponseWriter, body, ctype string) {
	w.Header().Set("Content-Type", ctype+"; charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}

// writeError writes a refusal as webob's plain-text error page does.
func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, "%d %s\n\n%s\n\n", status, http.StatusText(status), msg)
}
