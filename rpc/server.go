package rpc

import (
	"crypto/tls"
	"errors"
	"fmt"
	"go/token"
	"io"
	"net"
	"net/rpc"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/yamux"
)

// The first byte of every TCP connection to a server says what follows.
const (
	// TypeRaft is followed by the raw Raft transport stream.
	TypeRaft byte = 0x01
	// TypeMultiplex is followed by a yamux session whose streams each
	// carry msgpack-RPC.
	TypeMultiplex byte = 0x02
	// TypeTLS is followed by a TLS handshake; inside TLS the client sends
	// another type byte.
	TypeTLS byte = 0x03
	// TypeStream is followed by a header frame naming a registered
	// stream handler; after the server's answer the rest of the
	// connection belongs to the handler (see stream.go).
	TypeStream byte = 0x04
)

const (
	// defaultHandshakeTimeout bounds how long a new connection may take to
	// send its type byte (and TLS handshake), so a silent client cannot pin
	// a goroutine and a file descriptor forever.
	defaultHandshakeTimeout = 10 * time.Second

	// maxAcceptBackoff caps the pause after a failed Accept (such as
	// EMFILE), which otherwise would spin.
	maxAcceptBackoff = time.Second
)

// ServerConfig configures a Server.
type ServerConfig struct {
	// Listener is the TCP listener shared by RPC and Raft. The server owns
	// it from now on and closes it on Shutdown.
	Listener net.Listener
	// TLS is the server-side TLS configuration; nil serves plaintext only.
	TLS *tls.Config
	// RequireTLS rejects connections that do not start with TypeTLS.
	RequireTLS bool
	// Logger receives debug logs about connections; nil discards them.
	Logger hclog.Logger
	// RaftPeerName, when set, admits an incoming Raft connection only
	// over TLS with a verified client certificate valid for this DNS name
	// (server.<region>.<domain>), so only servers join Raft. TLS must then
	// ask for client certificates (VerifyClientCertIfGiven or stricter).
	RaftPeerName string
	// RaftAdvertise is the address the RaftLayer reports to Raft. It
	// defaults to the listener's address, which is not advertisable when
	// bound to a wildcard address such as 0.0.0.0.
	RaftAdvertise net.Addr
}

// Server accepts connections on one listener and routes each by its first
// byte: yamux sessions are served with the registered net/rpc endpoints,
// Raft connections go to the RaftLayer.
type Server struct {
	listener         net.Listener
	tlsConfig        *tls.Config
	requireTLS       bool
	raftPeerName     string
	logger           hclog.Logger
	rpcServer        *rpc.Server
	raftLayer        *RaftLayer
	yamuxConfig      *yamux.Config
	handshakeTimeout time.Duration
	// streams are the stream handlers by name (RegisterStream).
	streams map[string]stream
	// authorize, when set, runs before every endpoint call (SetAuthorizer).
	authorize atomic.Pointer[Authorizer]
	// observer, when set, sees every call's session (SetSessionObserver).
	observer atomic.Pointer[SessionObserver]
	// callObserver, when set, sees every call's duration (SetCallObserver).
	callObserver atomic.Pointer[CallObserver]
	// methods are the registered "name.Method"s (Methods).
	methodsMu sync.Mutex
	methods   []string
	// streamNames are the registered streams' names (StreamMethods).
	streamNames []string

	mu         sync.Mutex
	shutdown   bool
	shutdownCh chan struct{}
	// active maps each accepted connection that still belongs to the
	// server to what Shutdown must close for it: the connection itself,
	// or the yamux session running over it (closing the session first
	// ends its streams cleanly).
	active map[net.Conn]io.Closer
	// wg counts the accept loop and connection handlers (not the
	// per-stream goroutines, which may sit in a long-running endpoint).
	wg sync.WaitGroup
}

// NewServer returns a server ready for Register and Serve.
func NewServer(cfg ServerConfig) *Server {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	raftAddr := cfg.RaftAdvertise
	if raftAddr == nil && cfg.Listener != nil {
		raftAddr = cfg.Listener.Addr()
	}
	if cfg.RequireTLS && cfg.TLS == nil {
		logger.Warn("RequireTLS is set without a TLS config: every connection will be rejected")
	}
	return &Server{
		listener:         cfg.Listener,
		tlsConfig:        cfg.TLS,
		requireTLS:       cfg.RequireTLS,
		raftPeerName:     cfg.RaftPeerName,
		logger:           logger,
		rpcServer:        rpc.NewServer(),
		raftLayer:        newRaftLayer(raftAddr),
		yamuxConfig:      newYamuxConfig(logger),
		handshakeTimeout: defaultHandshakeTimeout,
		shutdownCh:       make(chan struct{}),
		active:           make(map[net.Conn]io.Closer),
	}
}

// newYamuxConfig routes yamux's own log lines into logger at debug level.
// yamux tags them "[ERR]", but they fire on every peer that goes away; the
// failures that matter reach callers as errors (ConnError) anyway.
func newYamuxConfig(logger hclog.Logger) *yamux.Config {
	cfg := yamux.DefaultConfig()
	cfg.LogOutput = nil
	cfg.Logger = logger.Named("yamux").StandardLogger(&hclog.StandardLoggerOptions{ForceLevel: hclog.Debug})
	return cfg
}

// Register publishes rcvr's suitable methods as "name.Method", net/rpc
// style: func (e *Endpoint) Method(args *Req, reply *Resp) error.
func (s *Server) Register(name string, rcvr any) error {
	if err := s.rpcServer.RegisterName(name, rcvr); err != nil {
		return err
	}
	s.methodsMu.Lock()
	defer s.methodsMu.Unlock()
	s.methods = append(s.methods, rpcMethods(name, rcvr)...)
	sort.Strings(s.methods)
	return nil
}

// Methods lists every registered "name.Method", sorted: what a caller
// can reach, for checks that each has a rule (see SetAuthorizer).
func (s *Server) Methods() []string {
	s.methodsMu.Lock()
	defer s.methodsMu.Unlock()
	return append([]string(nil), s.methods...)
}

// rpcMethods are the methods net/rpc publishes of rcvr: exported, with
// two arguments, a pointer reply of an exported (or builtin) type and
// an error result.
func rpcMethods(name string, rcvr any) []string {
	errType := reflect.TypeFor[error]()
	exportedOrBuiltin := func(t reflect.Type) bool {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		return t.PkgPath() == "" || token.IsExported(t.Name())
	}
	var out []string
	typ := reflect.TypeOf(rcvr)
	for i := range typ.NumMethod() {
		m := typ.Method(i)
		mt := m.Type
		if !m.IsExported() || mt.NumIn() != 3 || mt.NumOut() != 1 || mt.Out(0) != errType ||
			mt.In(2).Kind() != reflect.Pointer || !exportedOrBuiltin(mt.In(1)) || !exportedOrBuiltin(mt.In(2)) {
			continue
		}
		out = append(out, name+"."+m.Name)
	}
	return out
}

// Authorizer decides whether a call may run: method is "name.Method"
// and args the decoded arguments (a pointer to the endpoint's request
// type), which it may adjust (confine to the caller). An error refuses
// the call: the caller gets its text, as it would an endpoint's error.
// A non-nil ReplyFilter runs on the endpoint's reply before it is sent
// (to leave out what the caller may not read).
type Authorizer func(method string, args any) (ReplyFilter, error)

// ReplyFilter adjusts a successful reply (a pointer to the endpoint's
// reply type) before it is sent.
type ReplyFilter func(reply any)

// SetAuthorizer installs the check every call passes before its
// endpoint runs, over the network and in-process (Call) alike, and
// every stream's request before its handler runs (RegisterStream); nil
// removes it.
func (s *Server) SetAuthorizer(fn Authorizer) {
	if fn == nil {
		s.authorize.Store(nil)
		return
	}
	s.authorize.Store(&fn)
}

// authCodec runs the server's Authorizer on each request body once it
// is decoded. Its error makes net/rpc answer the request with that
// error (as an invalid request) without calling the endpoint; the body
// has been read, so the stream stays in step. Requests are read one at
// a time but answered concurrently, so reply filters are kept by
// sequence number.
type authCodec struct {
	rpc.ServerCodec
	srv    *Server
	method string
	seq    uint64
	// session is the yamux session the codec's stream belongs to; 0 for
	// an in-process call.
	session uint64

	mu      sync.Mutex
	filters map[uint64]ReplyFilter
	// starts are the calls read and not answered, for the CallObserver.
	starts map[uint64]callStart
}

func (c *authCodec) ReadRequestHeader(req *rpc.Request) error {
	err := c.ServerCodec.ReadRequestHeader(req)
	c.method, c.seq = req.ServiceMethod, req.Seq
	if err == nil {
		c.started(req)
	}
	return err
}

func (c *authCodec) ReadRequestBody(body any) error {
	if err := c.ServerCodec.ReadRequestBody(body); err != nil || body == nil {
		// A nil body is one net/rpc discards: no endpoint runs.
		if body == nil {
			c.unknown()
		}
		return err
	}
	fn := c.srv.authorize.Load()
	if fn == nil {
		c.observe(body)
		return nil
	}
	filter, err := (*fn)(c.method, body)
	if err != nil {
		return err
	}
	c.observe(body)
	if filter == nil {
		return nil
	}
	c.mu.Lock()
	if c.filters == nil {
		c.filters = map[uint64]ReplyFilter{}
	}
	c.filters[c.seq] = filter
	c.mu.Unlock()
	return nil
}

func (c *authCodec) WriteResponse(resp *rpc.Response, body any) error {
	c.mu.Lock()
	filter := c.filters[resp.Seq]
	delete(c.filters, resp.Seq)
	c.mu.Unlock()
	if filter != nil && resp.Error == "" && body != nil {
		filter(body)
	}
	c.finished(resp)
	return c.ServerCodec.WriteResponse(resp, body)
}

// observe tells the session observer, if any, about an authorized call
// that arrived over a session.
func (c *authCodec) observe(body any) {
	if c.session == 0 {
		return
	}
	if o := c.srv.sessionObserver(); o != nil {
		o.ObserveCall(c.session, c.method, body)
	}
}

// withAuth wraps a server codec in the authorizer's check; session is
// the id of the yamux session it serves a stream of (0: in-process).
func (s *Server) withAuth(c rpc.ServerCodec, session uint64) rpc.ServerCodec {
	return &authCodec{ServerCodec: c, srv: s, session: session}
}

// Call invokes a registered endpoint in-process, without encoding: the
// endpoint receives a shallow copy of *args and its reply is copied into
// *reply. Errors are rpc.ServerError values, as over the wire. Call keeps
// working after Shutdown, which only stops network traffic.
func (s *Server) Call(method string, args, reply any) error {
	c := &inmemCodec{method: method, args: args, reply: reply}
	err := s.rpcServer.ServeRequest(s.withAuth(c, 0))
	if c.err != nil {
		return c.err
	}
	return err
}

// Addr is the listener's address.
func (s *Server) Addr() net.Addr {
	if s.listener == nil {
		return nil
	}
	return s.listener.Addr()
}

// RaftLayer returns the server's Raft stream layer.
func (s *Server) RaftLayer() *RaftLayer { return s.raftLayer }

// SetRaftClientTLS sets the TLS configuration RaftLayer.Dial uses; nil
// dials plaintext.
func (s *Server) SetRaftClientTLS(cfg *tls.Config) { s.raftLayer.setClientTLS(cfg) }

// Serve accepts connections until Shutdown (or until the listener is closed
// by someone else). Each connection is handled on its own goroutine.
func (s *Server) Serve() {
	if s.listener == nil || !s.addWorker() {
		return
	}
	defer s.wg.Done()

	var backoff time.Duration
	for {
		conn, err := s.listener.Accept()
		if err != nil {
			if s.isShutdown() || errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), maxAcceptBackoff)
			s.logger.Debug("accept failed", "error", err, "retry_in", backoff)
			timer := time.NewTimer(backoff)
			select {
			case <-timer.C:
			case <-s.shutdownCh:
				timer.Stop()
				return
			}
			continue
		}
		backoff = 0
		if !s.track(conn) {
			conn.Close()
			return
		}
		go s.handleConn(conn)
	}
}

// Shutdown closes the listener, every yamux session, every connection still
// being classified, and the Raft layer, then waits for the accept loop and
// connection handlers to return. Endpoint calls already running are not
// waited for; their replies are dropped. Shutdown is idempotent.
func (s *Server) Shutdown() error {
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		return nil
	}
	s.shutdown = true
	close(s.shutdownCh)
	closers := make([]io.Closer, 0, len(s.active))
	for _, c := range s.active {
		closers = append(closers, c)
	}
	s.mu.Unlock()

	var err error
	if s.listener != nil {
		if cerr := s.listener.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = fmt.Errorf("rpc: close listener: %w", cerr)
		}
	}
	for _, c := range closers {
		c.Close()
	}
	s.raftLayer.Close()
	s.wg.Wait()
	return err
}

func (s *Server) isShutdown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shutdown
}

// addWorker counts a goroutine Shutdown must wait for, unless shutdown has
// begun. Doing both under mu keeps wg.Add from racing wg.Wait.
func (s *Server) addWorker() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return false
	}
	s.wg.Add(1)
	return true
}

// track registers a new connection and its handler goroutine.
func (s *Server) track(conn net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return false
	}
	s.active[conn] = conn
	s.wg.Add(1)
	return true
}

// setCloser makes Shutdown close c instead of raw. It fails once shutdown
// has begun, because Shutdown has then already taken its list of closers.
func (s *Server) setCloser(raw net.Conn, c io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return false
	}
	s.active[raw] = c
	return true
}

func (s *Server) untrack(raw net.Conn) {
	s.mu.Lock()
	delete(s.active, raw)
	s.mu.Unlock()
}

// handleConn serves one accepted connection until it ends or is handed to
// Raft.
func (s *Server) handleConn(raw net.Conn) {
	defer s.wg.Done()
	handedOff := s.route(raw, raw, false)
	s.untrack(raw)
	if !handedOff {
		raw.Close()
	}
}

// route reads conn's type byte and serves it accordingly. conn is raw, or
// the TLS connection over raw. It reports whether the connection was handed
// to Raft, in which case it must stay open.
func (s *Server) route(raw, conn net.Conn, overTLS bool) (handedOff bool) {
	remote := raw.RemoteAddr()
	typ, err := s.readType(conn)
	if err != nil {
		s.logger.Debug("failed to read connection type", "remote", remote, "error", err)
		return false
	}
	if s.requireTLS && !overTLS && typ != TypeTLS {
		s.logger.Debug("rejecting plaintext connection: TLS is required", "remote", remote, "type", typ)
		return false
	}

	switch typ {
	case TypeTLS:
		if overTLS {
			s.logger.Debug("rejecting TLS nested in TLS", "remote", remote)
			return false
		}
		if s.tlsConfig == nil {
			s.logger.Debug("rejecting TLS connection: TLS is not configured", "remote", remote)
			return false
		}
		tlsConn := tls.Server(conn, s.tlsConfig)
		if err := s.handshake(tlsConn); err != nil {
			s.logger.Debug("TLS handshake failed", "remote", remote, "error", err)
			return false
		}
		return s.route(raw, tlsConn, true)

	case TypeRaft:
		if err := s.checkRaftPeer(conn); err != nil {
			s.logger.Warn("refusing raft connection", "remote", remote, "error", err)
			return false
		}
		if err := s.raftLayer.handoff(conn); err != nil {
			s.logger.Debug("dropping raft connection", "remote", remote, "error", err)
			return false
		}
		return true

	case TypeMultiplex:
		s.serveSession(raw, conn)
		return false

	case TypeStream:
		s.serveStream(conn)
		return false

	default:
		s.logger.Debug("closing connection with unknown type byte", "remote", remote, "type", typ)
		return false
	}
}

// checkRaftPeer enforces RaftPeerName: the connection must be TLS and
// its (already chain-verified) client certificate must name a server.
func (s *Server) checkRaftPeer(conn net.Conn) error {
	if s.raftPeerName == "" {
		return nil
	}
	tlsConn, ok := conn.(*tls.Conn)
	if !ok {
		return errors.New("raft needs TLS with a server certificate")
	}
	certs := tlsConn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return errors.New("raft peer presented no certificate")
	}
	if err := certs[0].VerifyHostname(s.raftPeerName); err != nil {
		return fmt.Errorf("raft peer certificate is not a server certificate: %w", err)
	}
	return nil
}

// readType reads the one type byte, within the handshake timeout.
func (s *Server) readType(conn net.Conn) (byte, error) {
	if err := conn.SetReadDeadline(time.Now().Add(s.handshakeTimeout)); err != nil {
		return 0, err
	}
	var buf [1]byte
	if _, err := io.ReadFull(conn, buf[:]); err != nil {
		return 0, err
	}
	// Clear the deadline: Raft and yamux manage their own timeouts.
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		return 0, err
	}
	return buf[0], nil
}

func (s *Server) handshake(conn *tls.Conn) error {
	if err := conn.SetDeadline(time.Now().Add(s.handshakeTimeout)); err != nil {
		return err
	}
	if err := conn.Handshake(); err != nil {
		return err
	}
	return conn.SetDeadline(time.Time{})
}

// serveSession runs a yamux session over conn, serving each stream it
// accepts with net/rpc on its own goroutine, until the session ends.
func (s *Server) serveSession(raw, conn net.Conn) {
	remote := raw.RemoteAddr()
	session, err := yamux.Server(newFrameConn(conn), s.yamuxConfig)
	if err != nil {
		s.logger.Debug("failed to start yamux session", "remote", remote, "error", err)
		return
	}
	defer session.Close()
	if !s.setCloser(raw, session) {
		return
	}
	id := sessionIDs.Add(1)
	defer func() {
		if o := s.sessionObserver(); o != nil {
			o.SessionClosed(id)
		}
	}()
	for {
		stream, err := session.AcceptStream()
		if err != nil {
			s.logger.Debug("yamux session ended", "remote", remote, "error", err)
			return
		}
		go s.rpcServer.ServeCodec(s.withAuth(newCodec(stream), id))
	}
}
