package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// handshakeTimeout bounds how long an xvpvnc client may take to send its
// CONNECT request.
const handshakeTimeout = 30 * time.Second

// ServeXVPVNC runs the plain TCP VNC proxy (Nova's xvpvncproxy role) on
// ln until Close: a client first sends an HTTP CONNECT request whose
// target carries the token ("CONNECT /console?token=T HTTP/1.1", then a
// blank line); on "HTTP/1.1 200 OK" the connection is the instance's VNC
// server's. A bad token is answered 403 and closed.
func (s *Service) ServeXVPVNC(ln net.Listener) {
	p := s.state()
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = ln.Close()
		return
	}
	p.lns = append(p.lns, ln)
	p.mu.Unlock()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if !isClosed(err) {
				s.logger.Warn("xvpvnc proxy stopped", "error", err)
			}
			return
		}
		if !p.track() {
			_ = conn.Close()
			return
		}
		go func() {
			defer p.wg.Done()
			s.serveXVPVNC(p.ctx, conn)
		}()
	}
}

// xvpToken reads the CONNECT request and returns its token.
func xvpToken(br *bufio.Reader) (string, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", fmt.Errorf("read CONNECT request: %w", err)
	}
	if req.Method != http.MethodConnect {
		return "", fmt.Errorf("expected a CONNECT request, got %s", req.Method)
	}
	if t := req.URL.Query().Get("token"); t != "" {
		return t, nil
	}
	// "CONNECT <token> HTTP/1.1": the target is the token itself.
	return strings.TrimPrefix(req.RequestURI, "/"), nil
}

func (s *Service) serveXVPVNC(ctx context.Context, conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(handshakeTimeout))
	br := bufio.NewReader(conn)
	token, err := xvpToken(br)
	if err != nil {
		_, _ = io.WriteString(conn, "HTTP/1.1 400 Bad Request\r\n\r\n")
		return
	}
	tok, err := s.authorize(token, structs.ConsoleTypeXVPVNC)
	if err != nil {
		s.logger.Info("xvpvnc connection refused", "remote", conn.RemoteAddr(), "error", err)
		_, _ = io.WriteString(conn, "HTTP/1.1 403 Forbidden\r\n\r\n")
		return
	}
	target, err := openTarget(ctx, tok.Target)
	if err != nil {
		_, _ = io.WriteString(conn, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer target.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 OK\r\n\r\n"); err != nil {
		return
	}
	_ = conn.SetDeadline(time.Time{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-ctx.Done()
		_ = conn.Close()
		_ = target.Close()
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		_, _ = io.Copy(conn, target)
	}()
	_, _ = io.Copy(target, br)
	cancel()
	<-done
}
