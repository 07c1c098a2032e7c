package rpc

import (
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAuthorizerRunsBeforeEveryCall checks the hook sees each call's
// method and decoded args, over the wire and in-process, that its error
// reaches the caller with its kind while the endpoint does not run,
// that its reply filter runs on the reply, and that the connection
// stays usable after a refusal.
func TestAuthorizerRunsBeforeEveryCall(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	pool := newPool(t, PoolConfig{})
	addr := srv.Addr().String()

	var seen atomic.Int32
	srv.SetAuthorizer(func(method string, args any) (ReplyFilter, error) {
		seen.Add(1)
		a, ok := args.(*EchoArgs)
		if method != "Test.Echo" || !ok {
			return nil, structs.Errorf(structs.KindInternal, "unexpected call %s %T", method, args)
		}
		if a.Msg == "deny" {
			return nil, structs.Errorf(structs.KindUnauthenticated, "no credential")
		}
		a.N++ // an authorizer may adjust the args
		return func(reply any) { reply.(*EchoReply).Msg += " (filtered)" }, nil
	})

	for _, call := range []struct {
		name string
		do   func(args *EchoArgs, reply *EchoReply) error
	}{
		{"remote", func(a *EchoArgs, r *EchoReply) error { return pool.RPC(addr, "Test.Echo", a, r) }},
		{"in-process", func(a *EchoArgs, r *EchoReply) error { return srv.Call("Test.Echo", a, r) }},
	} {
		var reply EchoReply
		err := call.do(&EchoArgs{Msg: "deny", N: 1}, &reply)
		if structs.KindOf(err) != structs.KindUnauthenticated || reply.N != 0 {
			t.Fatalf("%s: refused call: err %v, reply %+v", call.name, err, reply)
		}
		if err := call.do(&EchoArgs{Msg: "ok", N: 1}, &reply); err != nil || reply.N != 4 || reply.Msg != "ok (filtered)" {
			t.Fatalf("%s: allowed call after a refusal: err %v, reply %+v", call.name, err, reply)
		}
	}
	if seen.Load() != 4 {
		t.Fatalf("authorizer ran %d times, want 4", seen.Load())
	}

	srv.SetAuthorizer(nil)
	var reply EchoReply
	if err := pool.RPC(addr, "Test.Echo", &EchoArgs{Msg: "deny", N: 1}, &reply); err != nil || reply.N != 2 {
		t.Fatalf("without an authorizer: err %v, reply %+v", err, reply)
	}
}

// TestMethodsListsWhatNetRPCServes checks Methods names exactly the
// methods net/rpc publishes of the test endpoint.
func TestMethodsListsWhatNetRPCServes(t *testing.T) {
	srv := startServer(t, "", ServerConfig{})
	want := []string{"Test.Block", "Test.Echo", "Test.Fail", "Test.NotFound"}
	if got := srv.Methods(); !slices.Equal(got, want) {
		t.Fatalf("Methods() = %v, want %v", got, want)
	}
}
