package rpc

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

func TestRoundTrip(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	pool := newPool(t, PoolConfig{})

	args := &EchoArgs{Msg: "hello", N: 21, Meta: map[string]any{"rack": "r1", "nested": map[string]any{"k": "v"}}}
	var reply EchoReply
	if err := pool.RPC(srv.Addr().String(), "Test.Echo", args, &reply); err != nil {
		t.Fatalf("RPC: %v", err)
	}
	if reply.Msg != "hello" || reply.N != 42 {
		t.Fatalf("reply = %+v", reply)
	}
	if reply.Meta["rack"] != "r1" {
		t.Fatalf("meta rack = %#v", reply.Meta["rack"])
	}
	// structs.MsgpackHandle decodes free-form maps as map[string]any.
	if nested, ok := reply.Meta["nested"].(map[string]any); !ok || nested["k"] != "v" {
		t.Fatalf("meta nested = %#v", reply.Meta["nested"])
	}
}

func TestConcurrentCalls(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	pool := newPool(t, PoolConfig{})
	addr := srv.Addr().String()

	const workers, calls = 32, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*calls)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				n := w*1000 + i
				var reply EchoReply
				if err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: fmt.Sprint(n), N: n}, &reply); err != nil {
					errs <- err
					return
				}
				if reply.Msg != fmt.Sprint(n) || reply.N != 2*n {
					errs <- fmt.Errorf("call %d: reply %+v", n, reply)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Every call shared one session.
	if got := pool.sessions(); got != 1 {
		t.Errorf("pool sessions = %d, want 1", got)
	}
	if got := srv.activeConns(); got != 1 {
		t.Errorf("server connections = %d, want 1", got)
	}
}

func TestRemoteErrorPreserved(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	pool := newPool(t, PoolConfig{})
	addr := srv.Addr().String()

	var reply EchoReply
	err := pool.RPC(addr, "Test.Fail", &EchoArgs{Msg: "not found: flavor 9"}, &reply)
	if err == nil || err.Error() != "not found: flavor 9" {
		t.Fatalf("err = %v, want exactly %q", err, "not found: flavor 9")
	}
	if IsConnError(err) {
		t.Errorf("IsConnError(%v) = true for an endpoint error", err)
	}
	var serverErr rpc.ServerError
	if !errors.As(err, &serverErr) {
		t.Errorf("err is %T, want rpc.ServerError", err)
	}
	if k := structs.KindOf(err); k != structs.KindNotFound {
		t.Errorf("KindOf = %q, want %q", k, structs.KindNotFound)
	}

	err = pool.RPC(addr, "Test.NotFound", &EchoArgs{N: 9}, &reply)
	if err == nil || err.Error() != "not found: flavor 9" || structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("kinded error = %v (kind %q)", err, structs.KindOf(err))
	}

	err = pool.RPC(addr, "Test.Nope", &EchoArgs{}, &reply)
	if err == nil || !strings.Contains(err.Error(), "can't find method") || IsConnError(err) {
		t.Errorf("unknown method: err = %v, IsConnError = %v", err, IsConnError(err))
	}

	// Errors leave the stream in step: the session still serves calls.
	if err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: "ok"}, &reply); err != nil || reply.Msg != "ok" {
		t.Fatalf("call after errors: %v, %+v", err, reply)
	}
	if got := pool.sessions(); got != 1 {
		t.Errorf("pool sessions = %d, want 1", got)
	}
}

func TestReplyTypeMismatchIsNotConnError(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	pool := newPool(t, PoolConfig{})
	addr := srv.Addr().String()

	var wrong int
	err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: "x"}, &wrong)
	if err == nil {
		t.Fatal("decoding a struct into an int succeeded")
	}
	if IsConnError(err) {
		t.Errorf("IsConnError(%v) = true for a decode error", err)
	}
	var reply EchoReply
	if err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: "y"}, &reply); err != nil || reply.Msg != "y" {
		t.Fatalf("call after decode error: %v, %+v", err, reply)
	}
}

func TestInProcessCall(t *testing.T) {
	srv := NewServer(ServerConfig{Logger: testLogger()})
	if err := srv.Register("Test", newTestEndpoint()); err != nil {
		t.Fatal(err)
	}

	meta := map[string]any{"k": "v"}
	var reply EchoReply
	if err := srv.Call("Test.Echo", &EchoArgs{Msg: "in", N: 4, Meta: meta}, &reply); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if reply.Msg != "in" || reply.N != 8 {
		t.Fatalf("reply = %+v", reply)
	}
	// Nothing was encoded: the very same map came back.
	reply.Meta["added"] = true
	if meta["added"] != true {
		t.Error("in-process call copied the map; want pointers passed through")
	}

	err := srv.Call("Test.Fail", &EchoArgs{Msg: "not found: flavor 9"}, &reply)
	if err == nil || err.Error() != "not found: flavor 9" || IsConnError(err) {
		t.Errorf("Fail: err = %v, IsConnError = %v", err, IsConnError(err))
	}
	if structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("KindOf = %q", structs.KindOf(err))
	}

	if err := srv.Call("Test.Nope", &EchoArgs{}, &reply); err == nil || !strings.Contains(err.Error(), "can't find method") {
		t.Errorf("unknown method: err = %v", err)
	}
	if err := srv.Call("Test.Echo", "not args", &reply); err == nil {
		t.Error("wrong args type: no error")
	}
	if err := srv.Call("Test.Echo", &EchoArgs{}, nil); err == nil {
		t.Error("nil reply: no error")
	}

	// Args may also be passed by value.
	if err := srv.Call("Test.Echo", EchoArgs{Msg: "v"}, &reply); err != nil || reply.Msg != "v" {
		t.Errorf("args by value: %v, %+v", err, reply)
	}
}

// expectClosedByServer reads from conn and fails unless the server closes
// it well before the test's own read deadline.
func expectClosedByServer(t *testing.T, conn net.Conn) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := conn.Read(make([]byte, 1))
	if err == nil {
		t.Fatal("read succeeded; want the server to close the connection")
	}
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		t.Fatalf("server did not close the connection: %v", err)
	}
}

func TestUnknownFirstByteIsClosed(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	conn, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.Write([]byte{0x7f}); err != nil {
		t.Fatal(err)
	}
	expectClosedByServer(t, conn)
	waitFor(t, "server to forget the connection", func() bool { return srv.activeConns() == 0 })
}

func TestSilentClientIsDropped(t *testing.T) {
	srv := startServer(t, "", ServerConfig{}, func(s *Server) { s.handshakeTimeout = 100 * time.Millisecond })
	conn, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	expectClosedByServer(t, conn)
}

func TestInFlightCallFailsOnShutdown(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	t.Cleanup(func() { close(srv.endpoint.release) })
	pool := newPool(t, PoolConfig{})

	errCh := make(chan error, 1)
	go func() {
		var reply EchoReply
		errCh <- pool.RPC(srv.Addr().String(), "Test.Block", &EchoArgs{}, &reply)
	}()
	<-srv.endpoint.entered
	if err := srv.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	err := <-errCh
	if err == nil || !IsConnError(err) {
		t.Fatalf("in-flight call: err = %v, IsConnError = %v; want a connection error", err, IsConnError(err))
	}
}

func TestServerShutdownIdempotent(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	pool := newPool(t, PoolConfig{})
	var reply EchoReply
	if err := pool.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{}, &reply); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := srv.Shutdown(); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}
	<-srv.done // Serve returned
	if got := srv.activeConns(); got != 0 {
		t.Errorf("server still tracks %d connections", got)
	}
	if _, err := srv.RaftLayer().Accept(); !errors.Is(err, ErrRaftLayerClosed) {
		t.Errorf("raft Accept after shutdown: %v", err)
	}
	// Serve after Shutdown returns at once.
	srv.Serve()
}

func TestIsConnError(t *testing.T) {
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"server error", rpc.ServerError("no leader: no cluster leader"), false},
		{"wrapped server error", fmt.Errorf("forward: %w", rpc.ServerError("x")), false},
		{"server error mentioning EOF", rpc.ServerError("EOF"), false},
		{"EOF", io.EOF, true},
		{"wrapped EOF", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"op error", opErr, true},
		{"net closed", net.ErrClosed, true},
		{"rpc shutdown", rpc.ErrShutdown, true},
		{"conn error", &ConnError{Addr: "x", Op: "dial", Err: errors.New("y")}, true},
		{"cause chain", causeErr{io.EOF}, true},
		{"cause chain, not transport", causeErr{errors.New("bad type")}, false},
		{"pool shutdown", ErrPoolShutdown, false},
		{"structs error", structs.Errorf(structs.KindUnavailable, "x"), false},
	}
	for _, tc := range cases {
		if got := IsConnError(tc.err); got != tc.want {
			t.Errorf("%s: IsConnError(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

// causeErr mimics the msgpack codec's errors, which expose Cause, not Unwrap.
type causeErr struct{ err error }

func (e causeErr) Error() string { return "msgpack error: " + e.err.Error() }
func (e causeErr) Cause() error  { return e.err }
