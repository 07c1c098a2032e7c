package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/rpc"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

func TestRetryableMeansNoLeaderOrLostConnectionOnly(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{structs.ErrNoLeader, true},
		{structs.Errorf(structs.KindNoLeader, "raft apply: node is not the leader"), true},
		// The same errors after an RPC hop: their kind rides in the text.
		{rpc.ServerError("InstanceCreate: no leader: raft apply: leadership lost while committing log"), true},
		{rpc.ServerError("InstanceCreate: unavailable: raft apply: timed out enqueuing operation"), true},
		{rpc.ServerError("unavailable: server is shutting down"), true},
		{rpc.ServerError("unavailable: forward Instance.Create to the leader 10.0.0.1:8776: rpc: dial: connection refused"), true},
		{structs.Errorf(structs.KindUnavailable, "no server reachable: dial tcp: connection refused"), true},
		// A transport failure of this hop, classified by the RPC layer.
		{fmt.Errorf("call Instance.Create: %w", io.ErrUnexpectedEOF), true},
		// Text alone decides nothing: an error without a kind is not
		// retried, whatever it says (the servers give every transient
		// failure a kind before it leaves them).
		{rpc.ServerError("InstanceCreate: raft apply: timed out enqueuing operation"), false},
		{rpc.ServerError("connection reset by peer"), false},
		// Refusals are answers: never retried, whatever their text says.
		{structs.Errorf(structs.KindInvalid, "name must be 1-255 characters"), false},
		{structs.Errorf(structs.KindQuotaReached, "Quota exceeded for instances"), false},
		{structs.Errorf(structs.KindNotFound, "Instance x could not be found."), false},
		{structs.Errorf(structs.KindConflict, "node is not the leader"), false},
		{errors.New("something else broke"), false},
	} {
		if got := Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestDoRetriesUntilAnAnswerAndTellsWhetherItRetried(t *testing.T) {
	var calls []bool
	err := Do(context.Background(), func(retried bool) error {
		calls = append(calls, retried)
		if len(calls) < 3 {
			return structs.ErrNoLeader
		}
		return nil
	})
	if err != nil || len(calls) != 3 || calls[0] || !calls[1] || !calls[2] {
		t.Fatalf("err %v, calls %v", err, calls)
	}
	// A refusal ends at once.
	n := 0
	refused := structs.Errorf(structs.KindInvalid, "bad")
	if err := Do(context.Background(), func(bool) error { n++; return refused }); err != refused || n != 1 {
		t.Fatalf("refusal: %v after %d calls", err, n)
	}
}

func TestDoGivesUpAtItsBudgetOrWhenTheCallerLeaves(t *testing.T) {
	n := 0
	err := DoFor(context.Background(), 300*time.Millisecond, func(bool) error { n++; return structs.ErrNoLeader })
	if err != structs.ErrNoLeader || n < 2 {
		t.Fatalf("after the budget: %v, %d calls", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n = 0
	if err := Do(ctx, func(bool) error { n++; return structs.ErrNoLeader }); err != structs.ErrNoLeader || n != 1 {
		t.Fatalf("cancelled: %v, %d calls", err, n)
	}
}

func TestNewKeyIsAValidFreshKey(t *testing.T) {
	a, b := NewKey(), NewKey()
	if a == b || !strings.HasPrefix(a, "stratus-") {
		t.Fatalf("keys %q %q", a, b)
	}
	if err := structs.ValidateIdempotencyKey(a); err != nil {
		t.Fatal(err)
	}
}
