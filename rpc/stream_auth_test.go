package rpc

import (
	"errors"
	"net"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// streamAnswer is the first answer frame of the test stream; a refusal
// decodes into it as into every stream's first answer.
type streamAnswer struct {
	Prefix string
	Error  string
}

// TestAuthorizerRunsBeforeEveryStream checks the stream hook: the
// Authorizer sees the stream's name and its decoded request before the
// handler runs; a refusal reaches the client as the first answer
// frame's Error (with its kind) and the handler never runs; an allowed
// stream gets the request as the Authorizer adjusted it.
func TestAuthorizerRunsBeforeEveryStream(t *testing.T) {
	var handled atomic.Int32
	srv := startServer(t, "", ServerConfig{}, func(s *Server) {
		err := s.RegisterStream("Test.Answer", newEchoRequest, func(conn net.Conn, args any) {
			handled.Add(1)
			_ = WriteFrame(conn, &streamAnswer{Prefix: args.(*echoRequest).Prefix})
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	var seen atomic.Int32
	srv.SetAuthorizer(func(method string, args any) (ReplyFilter, error) {
		seen.Add(1)
		req, ok := args.(*echoRequest)
		if method != "Test.Answer" || !ok {
			return nil, structs.Errorf(structs.KindInternal, "unexpected stream %s %T", method, args)
		}
		if req.Prefix == "deny" {
			return nil, structs.Errorf(structs.KindUnauthenticated, "no credential")
		}
		req.Prefix += " (checked)"
		return nil, nil
	})
	pool := newPool(t, PoolConfig{})
	open := func(prefix string) streamAnswer {
		t.Helper()
		conn, err := pool.Stream(srv.Addr().String(), "Test.Answer")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if err := WriteFrame(conn, &echoRequest{Prefix: prefix}); err != nil {
			t.Fatal(err)
		}
		var ans streamAnswer
		if err := ReadFrame(conn, &ans); err != nil {
			t.Fatal(err)
		}
		return ans
	}
	ans := open("deny")
	if structs.KindOf(errors.New(ans.Error)) != structs.KindUnauthenticated || handled.Load() != 0 {
		t.Fatalf("refused stream: answer %+v, handler ran %d times", ans, handled.Load())
	}
	if ans := open("ok"); ans.Error != "" || ans.Prefix != "ok (checked)" || handled.Load() != 1 {
		t.Fatalf("allowed stream: answer %+v, handler ran %d times", ans, handled.Load())
	}
	if seen.Load() != 2 {
		t.Fatalf("authorizer ran %d times, want 2", seen.Load())
	}
	if got := srv.StreamMethods(); !slices.Equal(got, []string{"Test.Answer"}) {
		t.Fatalf("StreamMethods() = %v", got)
	}
}
