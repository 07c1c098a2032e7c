package rpc

import (
	"sync"
	"testing"
	"time"
)

type observedCall struct {
	method string
	took   time.Duration
	failed bool
}

// TestCallObserver: every answered call, over the network and
// in-process, reaches the observer with its method, whether it failed,
// and a duration covering the endpoint's run; a method no endpoint has
// is reported as UnknownMethod, never by the name the client sent.
func TestCallObserver(t *testing.T) {
	var mu sync.Mutex
	var calls []observedCall
	srv := startServer(t, "", ServerConfig{}, func(s *Server) {
		s.SetCallObserver(func(method string, took time.Duration, failed bool) {
			mu.Lock()
			calls = append(calls, observedCall{method, took, failed})
			mu.Unlock()
		})
	})
	pool := newPool(t, PoolConfig{})
	addr := srv.Addr().String()
	var reply EchoReply
	if err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: "x"}, &reply); err != nil {
		t.Fatal(err)
	}
	if err := pool.RPC(addr, "Test.Fail", &EchoArgs{Msg: "boom"}, &reply); err == nil {
		t.Fatal("Test.Fail succeeded")
	}
	if err := pool.RPC(addr, "Test.NoSuchMethod-d41d8", &EchoArgs{}, &reply); err == nil {
		t.Fatal("an unknown method succeeded")
	}
	if err := srv.Call("Test.Echo", &EchoArgs{Msg: "in"}, &reply); err != nil {
		t.Fatal(err)
	}
	var held time.Duration
	done := make(chan error, 1)
	go func() { done <- pool.RPC(addr, "Test.Block", &EchoArgs{}, &reply) }()
	<-srv.endpoint.entered
	start := time.Now()
	close(srv.endpoint.release)
	held = time.Since(start)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []observedCall{{"Test.Echo", 0, false}, {"Test.Fail", 0, true}, {UnknownMethod, 0, true}, {"Test.Echo", 0, false}, {"Test.Block", 0, false}}
	if len(calls) != len(want) {
		t.Fatalf("observed %+v, want %d calls", calls, len(want))
	}
	for i, w := range want {
		if calls[i].method != w.method || calls[i].failed != w.failed {
			t.Errorf("call %d: %+v, want %s failed=%v", i, calls[i], w.method, w.failed)
		}
		if calls[i].took < 0 {
			t.Errorf("call %d took %s", i, calls[i].took)
		}
	}
	if b := calls[4]; b.took < held {
		t.Errorf("Test.Block took %s, less than the %s it was held", b.took, held)
	}
}
