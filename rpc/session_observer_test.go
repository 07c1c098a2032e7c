package rpc

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

// recordingObserver records what a SessionObserver is told.
type recordingObserver struct {
	mu     sync.Mutex
	calls  map[uint64][]string // session → "method msg"
	closed []uint64
}

func (o *recordingObserver) ObserveCall(session uint64, method string, args any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.calls == nil {
		o.calls = map[uint64][]string{}
	}
	o.calls[session] = append(o.calls[session], method+" "+args.(*EchoArgs).Msg)
}

func (o *recordingObserver) SessionClosed(session uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = append(o.closed, session)
}

// sessions returns the sessions that carried calls, and those closed.
func (o *recordingObserver) sessions() (called map[uint64][]string, closed []uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	called = map[uint64][]string{}
	for id, c := range o.calls {
		called[id] = slices.Clone(c)
	}
	return called, slices.Clone(o.closed)
}

// TestSessionObserverSeesCallsAndClose checks that the observer hears
// each authorized network call with its session's id, one id per
// client session, nothing of refused or in-process calls, and the
// session's end when the client goes away.
func TestSessionObserverSeesCallsAndClose(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	obs := &recordingObserver{}
	srv.SetSessionObserver(obs)
	srv.SetAuthorizer(func(method string, args any) (ReplyFilter, error) {
		if args.(*EchoArgs).Msg == "refused" {
			return nil, errors.New("permission denied")
		}
		return nil, nil
	})
	a, b := newPool(t, PoolConfig{}), newPool(t, PoolConfig{})
	addr := srv.Addr().String()
	for _, call := range []struct {
		pool *ConnPool
		msg  string
	}{{a, "a1"}, {a, "a2"}, {b, "b1"}, {a, "refused"}} {
		err := call.pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: call.msg}, &EchoReply{})
		if (err != nil) != (call.msg == "refused") {
			t.Fatalf("call %s: %v", call.msg, err)
		}
	}
	if err := srv.Call("Test.Echo", &EchoArgs{Msg: "in-process"}, &EchoReply{}); err != nil {
		t.Fatal(err)
	}
	called, closed := obs.sessions()
	if len(called) != 2 || len(closed) != 0 {
		t.Fatalf("sessions with calls %v, closed %v; want 2 sessions, none closed", called, closed)
	}
	var sessionA uint64
	for id, calls := range called {
		switch {
		case slices.Equal(calls, []string{"Test.Echo a1", "Test.Echo a2"}):
			sessionA = id
		case slices.Equal(calls, []string{"Test.Echo b1"}):
		default:
			t.Fatalf("session %d carried %v", id, calls)
		}
	}
	if err := a.Shutdown(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "session a closed", func() bool {
		_, closed := obs.sessions()
		return slices.Equal(closed, []uint64{sessionA})
	})
}
