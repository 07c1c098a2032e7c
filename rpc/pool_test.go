package rpc

import (
	"errors"
	"net"
	"net/rpc"
	"sync"
	"testing"
	"time"
)

func TestPoolRecoversAfterServerRestart(t *testing.T) {
	first := startServer(t, "", ServerConfig{})
	addr := first.Addr().String()
	pool := newPool(t, PoolConfig{})

	var reply EchoReply
	if err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: "before"}, &reply); err != nil {
		t.Fatalf("first call: %v", err)
	}
	if err := first.Shutdown(); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}

	// With the server gone the call fails, as a connection error, whether
	// the pool still held the dead session or had to dial.
	err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: "during"}, &reply)
	if err == nil {
		t.Fatal("call to a shut-down server succeeded")
	}
	if !IsConnError(err) {
		t.Fatalf("IsConnError(%v) = false, want true", err)
	}
	var serverErr rpc.ServerError
	if errors.As(err, &serverErr) {
		t.Fatalf("transport failure reported as server error %q", serverErr)
	}

	// A new server on the same address: the pool redials by itself.
	startServer(t, addr, ServerConfig{})
	if err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: "after"}, &reply); err != nil {
		t.Fatalf("call after restart: %v", err)
	}
	if reply.Msg != "after" {
		t.Fatalf("reply = %+v", reply)
	}
}

func TestPoolDialFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	pool := newPool(t, PoolConfig{DialTimeout: time.Second})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var reply EchoReply
			err := pool.RPC(addr, "Test.Echo", &EchoArgs{}, &reply)
			var connErr *ConnError
			if !errors.As(err, &connErr) || !IsConnError(err) {
				t.Errorf("err = %v (%T), want *ConnError", err, err)
			}
		}()
	}
	wg.Wait()
	if got := pool.sessions(); got != 0 {
		t.Errorf("pool holds %d sessions after failed dials", got)
	}
}

func TestPoolShutdown(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	pool := NewConnPool(PoolConfig{Logger: testLogger()})
	var reply EchoReply
	if err := pool.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{}, &reply); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := pool.Shutdown(); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	}
	err := pool.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{}, &reply)
	if !errors.Is(err, ErrPoolShutdown) {
		t.Fatalf("RPC after Shutdown: %v", err)
	}
	if IsConnError(err) {
		t.Error("ErrPoolShutdown reported as a connection error")
	}
	// The server sees the session end.
	waitFor(t, "server to drop the pool's session", func() bool { return srv.activeConns() == 0 })
}

func TestPoolReapsIdleSessions(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	pool := newPool(t, PoolConfig{MaxIdle: 50 * time.Millisecond})
	var reply EchoReply
	if err := pool.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{}, &reply); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "idle session to be reaped", func() bool { return pool.sessions() == 0 })
	waitFor(t, "server to see the session end", func() bool { return srv.activeConns() == 0 })

	// And the next call simply dials again.
	if err := pool.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{Msg: "again"}, &reply); err != nil || reply.Msg != "again" {
		t.Fatalf("call after reap: %v, %+v", err, reply)
	}
}

func TestPoolKeepsBusySessions(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	t.Cleanup(func() { close(srv.endpoint.release) })
	pool := newPool(t, PoolConfig{MaxIdle: 20 * time.Millisecond})

	errCh := make(chan error, 1)
	go func() {
		var reply EchoReply
		errCh <- pool.RPC(srv.Addr().String(), "Test.Block", &EchoArgs{}, &reply)
	}()
	<-srv.endpoint.entered
	// Several reap intervals pass while the call is in flight; the
	// session must survive them. There is no event to wait for here, so
	// this is a bounded observation rather than synchronisation.
	deadline := time.Now().Add(150 * time.Millisecond)
	for time.Now().Before(deadline) {
		if pool.sessions() != 1 {
			t.Fatal("reaper closed a session with a call in flight")
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.endpoint.release <- struct{}{}
	if err := <-errCh; err != nil {
		t.Fatalf("blocked call: %v", err)
	}
}
