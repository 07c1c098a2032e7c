package rpc

import (
	"crypto/tls"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// RaftLayer is the raft.StreamLayer of a Server. Incoming connections that
// start with TypeRaft are handed to it by the server's listener, so Raft
// shares the RPC port; outgoing ones are dialed with TypeRaft (inside TLS
// when a client TLS config is set).
type RaftLayer struct {
	addr net.Addr

	// connCh is unbuffered: a connection is handed over only when Raft is
	// there to take it, and otherwise stays with its handler goroutine,
	// which closes it if the layer closes first.
	connCh    chan net.Conn
	closeCh   chan struct{}
	closeOnce sync.Once

	mu        sync.RWMutex
	clientTLS *tls.Config
}

var _ raft.StreamLayer = (*RaftLayer)(nil)

func newRaftLayer(addr net.Addr) *RaftLayer {
	return &RaftLayer{
		addr:    addr,
		connCh:  make(chan net.Conn),
		closeCh: make(chan struct{}),
	}
}

// handoff gives an incoming Raft connection to Accept. It fails once the
// layer is closed; the caller then still owns conn.
func (l *RaftLayer) handoff(conn net.Conn) error {
	select {
	case l.connCh <- conn:
		return nil
	case <-l.closeCh:
		return ErrRaftLayerClosed
	}
}

// Accept waits for the next incoming Raft connection.
func (l *RaftLayer) Accept() (net.Conn, error) {
	select {
	case conn := <-l.connCh:
		return conn, nil
	case <-l.closeCh:
		return nil, ErrRaftLayerClosed
	}
}

// Close stops Accept. Connections already accepted belong to Raft and are
// left alone. Close is idempotent.
func (l *RaftLayer) Close() error {
	l.closeOnce.Do(func() { close(l.closeCh) })
	return nil
}

// Addr is the address Raft advertises for this server.
func (l *RaftLayer) Addr() net.Addr { return l.addr }

// Dial opens a Raft connection to another server's RPC port.
func (l *RaftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	l.mu.RLock()
	tlsCfg := l.clientTLS
	l.mu.RUnlock()
	conn, err := dialConn(string(address), TypeRaft, tlsCfg, timeout)
	if err != nil {
		return nil, &ConnError{Addr: string(address), Op: "raft dial", Err: err}
	}
	return conn, nil
}

func (l *RaftLayer) setClientTLS(cfg *tls.Config) {
	l.mu.Lock()
	l.clientTLS = cfg
	l.mu.Unlock()
}
