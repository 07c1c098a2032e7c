package console

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/stratus-cloud/stratus/structs"
)

// dialTimeout bounds connecting to a console's target.
const dialTimeout = 10 * time.Second

// proxyState tracks the open proxied connections so Close ends them.
type proxyState struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	lns    []net.Listener
	closed bool
}

func (s *Service) state() *proxyState {
	s.once.Do(func() {
		s.proxy = &proxyState{}
		s.proxy.ctx, s.proxy.cancel = context.WithCancel(context.Background())
	})
	return s.proxy
}

// track registers a proxied session; false when the service is closed.
func (p *proxyState) track() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.wg.Add(1)
	return true
}

// Close stops the xvpvnc listener and ends every proxied session.
func (s *Service) Close() error {
	p := s.state()
	p.mu.Lock()
	p.closed = true
	lns := p.lns
	p.mu.Unlock()
	for _, ln := range lns {
		_ = ln.Close()
	}
	p.cancel()
	p.wg.Wait()
	return nil
}

// Handler serves the websocket proxies: VNCPath (noVNC, RFB over binary
// websocket messages) and SerialPath (the serial console's bytes). Both
// take the one-time token as ?token=.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+VNCPath, func(w http.ResponseWriter, r *http.Request) {
		s.serveWebsocket(w, r, structs.ConsoleTypeNoVNC)
	})
	mux.HandleFunc("GET "+SerialPath, func(w http.ResponseWriter, r *http.Request) {
		s.serveWebsocket(w, r, structs.ConsoleTypeSerial)
	})
	return mux
}

// authorize consumes a token for a console type and checks that this
// agent hosts its console.
func (s *Service) authorize(token, consoleType string) (*structs.ConsoleAuthToken, error) {
	if token == "" {
		return nil, structs.Errorf(structs.KindPermission, "a console token is required (?token=)")
	}
	var out structs.ConsoleTokenResponse
	if err := s.cfg.RPC.RPC("Console.Consume", &structs.ConsoleConsumeRequest{Token: token, ConsoleType: consoleType}, &out); err != nil {
		if structs.KindOf(err) == structs.KindNotFound {
			return nil, structs.Errorf(structs.KindPermission, "console token is invalid or has expired")
		}
		return nil, err
	}
	if out.Token == nil || s.cfg.Local(out.Token.HostID) == nil {
		return nil, structs.Errorf(structs.KindPermission, "console token is for a console another agent serves")
	}
	return out.Token, nil
}

// openTarget connects to where a console listens: a TCP address, or a
// local character device (a pty) or unix socket by path.
func openTarget(ctx context.Context, target string) (io.ReadWriteCloser, error) {
	if len(target) > 0 && target[0] == '/' {
		st, err := os.Stat(target)
		if err != nil {
			return nil, err
		}
		if st.Mode()&os.ModeSocket != 0 {
			var d net.Dialer
			return d.DialContext(ctx, "unix", target)
		}
		return os.OpenFile(target, os.O_RDWR|syscall.O_NOCTTY, 0)
	}
	d := net.Dialer{Timeout: dialTimeout}
	return d.DialContext(ctx, "tcp", target)
}

func (s *Service) serveWebsocket(w http.ResponseWriter, r *http.Request, consoleType string) {
	p := s.state()
	if !isUpgrade(r) {
		// Not a websocket: refused with a status, as before any handshake.
		if _, err := s.authorize(r.URL.Query().Get("token"), consoleType); err != nil {
			writeErr(w, err)
			return
		}
		http.Error(w, "a console is a websocket", http.StatusUpgradeRequired)
		return
	}
	// As Nova's websockify proxy, the handshake comes first and the token
	// is checked on the open websocket: a bad, used or expired token (or a
	// console that cannot be reached) closes the connection without a
	// byte, which is what clients such as tempest look for.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"binary"}})
	if err != nil {
		s.logger.Debug("console websocket handshake failed", "error", err)
		return
	}
	tok, err := s.authorize(r.URL.Query().Get("token"), consoleType)
	if err != nil {
		s.logger.Info("console connection refused", "type", consoleType, "remote", r.RemoteAddr, "error", err)
		_ = c.CloseNow()
		return
	}
	target, err := openTarget(r.Context(), tok.Target)
	if err != nil {
		s.logger.Warn("console target unreachable", "instance", tok.InstanceID, "target", tok.Target, "error", err)
		_ = c.CloseNow()
		return
	}
	defer target.Close()
	if !p.track() {
		_ = c.Close(websocket.StatusGoingAway, "agent is shutting down")
		return
	}
	defer p.wg.Done()
	c.SetReadLimit(1 << 20)
	s.logger.Info("console connected", "type", consoleType, "instance", tok.InstanceID, "remote", r.RemoteAddr)
	ctx, cancel := context.WithCancel(p.ctx)
	defer cancel()
	// Whichever side ends first ends both.
	go func() {
		<-ctx.Done()
		_ = target.Close()
		_ = c.CloseNow()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		buf := make([]byte, 32<<10)
		for {
			n, err := target.Read(buf)
			if n > 0 {
				if werr := c.Write(ctx, websocket.MessageBinary, buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		// Both text and binary messages carry bytes for the console (a
		// serial terminal may send keys as text).
		_, data, err := c.Read(ctx)
		if err != nil {
			break
		}
		if _, err := target.Write(data); err != nil {
			break
		}
	}
	cancel()
	<-done
	_ = c.Close(websocket.StatusNormalClosure, "")
	s.logger.Info("console disconnected", "type", consoleType, "instance", tok.InstanceID)
}

// isUpgrade reports whether r asks for a websocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// isClosed reports whether err is the end of a connection, not a fault.
func isClosed(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF)
}
