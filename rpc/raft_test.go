package rpc

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// acceptOne accepts one connection from layer in the background.
func acceptOne(layer *RaftLayer) <-chan net.Conn {
	ch := make(chan net.Conn, 1)
	go func() {
		conn, err := layer.Accept()
		if err != nil {
			close(ch)
			return
		}
		ch <- conn
	}()
	return ch
}

// raftEcho checks bytes flow both ways between a dialed and an accepted
// Raft connection.
func raftEcho(t *testing.T, dialed net.Conn, accepted <-chan net.Conn) {
	t.Helper()
	if _, err := dialed.Write([]byte("append-entries")); err != nil {
		t.Fatalf("write: %v", err)
	}
	var conn net.Conn
	select {
	case c, ok := <-accepted:
		if !ok {
			t.Fatal("Accept failed")
		}
		conn = c
	case <-time.After(5 * time.Second):
		t.Fatal("raft connection never accepted")
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	dialed.SetDeadline(time.Now().Add(5 * time.Second))

	buf := make([]byte, len("append-entries"))
	if _, err := io.ReadFull(conn, buf); err != nil {
		t.Fatalf("server read: %v", err)
	}
	if string(buf) != "append-entries" {
		t.Fatalf("server read %q", buf)
	}
	if _, err := conn.Write([]byte("ok")); err != nil {
		t.Fatalf("server write: %v", err)
	}
	buf = make([]byte, 2)
	if _, err := io.ReadFull(dialed, buf); err != nil || string(buf) != "ok" {
		t.Fatalf("client read %q, %v", buf, err)
	}
}

func TestRaftLayerDialAccept(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	layer := srv.RaftLayer()
	if layer.Addr().String() != srv.Addr().String() {
		t.Errorf("raft layer addr = %s, want %s", layer.Addr(), srv.Addr())
	}

	accepted := acceptOne(layer)
	conn, err := layer.Dial(raft.ServerAddress(srv.Addr().String()), time.Second)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	raftEcho(t, conn, accepted)

	// RPC keeps working on the same port.
	pool := newPool(t, PoolConfig{})
	var reply EchoReply
	if err := pool.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{Msg: "m"}, &reply); err != nil {
		t.Fatalf("RPC next to raft: %v", err)
	}
}

func TestRaftLayerAdvertise(t *testing.T) {
	adv := &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 4647}
	srv := startServer(t, "", ServerConfig{RaftAdvertise: adv})
	if got := srv.RaftLayer().Addr(); got != adv {
		t.Errorf("raft layer addr = %v, want %v", got, adv)
	}
}

func TestRaftLayerDialFailureIsConnError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	layer := newRaftLayer(nil)
	_, err = layer.Dial(raft.ServerAddress(addr), time.Second)
	if err == nil || !IsConnError(err) {
		t.Fatalf("Dial to a closed port: err = %v, IsConnError = %v", err, IsConnError(err))
	}
}

func TestRaftLayerCloseUnblocksAccept(t *testing.T) {
	layer := newRaftLayer(nil)
	errCh := make(chan error, 1)
	go func() {
		_, err := layer.Accept()
		errCh <- err
	}()
	layer.Close()
	layer.Close() // idempotent
	if err := <-errCh; !errors.Is(err, ErrRaftLayerClosed) {
		t.Fatalf("Accept after Close: %v", err)
	}
}

// TestRaftTransport runs a real raft.NetworkTransport over two servers'
// layers, so the StreamLayer contract is checked by its actual user.
func TestRaftTransport(t *testing.T) {
	a := startServer(t, "", ServerConfig{})
	b := startServer(t, "", ServerConfig{})

	newTransport := func(s *testServer) *raft.NetworkTransport {
		tr := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream:  s.RaftLayer(),
			MaxPool: 2,
			Timeout: 2 * time.Second,
			Logger:  testLogger(),
		})
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	ta := newTransport(a)
	tb := newTransport(b)

	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case r := <-tb.Consumer():
				req := r.Command.(*raft.AppendEntriesRequest)
				r.Respond(&raft.AppendEntriesResponse{Term: req.Term, LastLog: uint64(len(req.Entries)), Success: true}, nil)
			}
		}
	}()

	req := &raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ID: []byte("a"), Addr: []byte(a.Addr().String())},
		Term:      7,
		Entries:   []*raft.Log{{Index: 1, Term: 7, Type: raft.LogCommand, Data: []byte("x")}},
	}
	var resp raft.AppendEntriesResponse
	if err := ta.AppendEntries("b", raft.ServerAddress(b.Addr().String()), req, &resp); err != nil {
		t.Fatalf("AppendEntries: %v", err)
	}
	if !resp.Success || resp.Term != 7 || resp.LastLog != 1 {
		t.Fatalf("response = %+v", resp)
	}
}
