package server

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// stuckFuture is a raft.Future nobody answers, as raft leaves one that
// was still queued when it shut down.
type stuckFuture struct{ answer chan error }

func (f stuckFuture) Error() error { return <-f.answer }

func TestWaitFutureReturnsOnShutdown(t *testing.T) {
	t.Parallel()
	shutdown := make(chan struct{})
	close(shutdown)
	if err := waitFuture(stuckFuture{answer: make(chan error)}, shutdown); !errors.Is(err, raft.ErrRaftShutdown) {
		t.Fatalf("a future never answered after shutdown gave %v, want %v", err, raft.ErrRaftShutdown)
	}
}

func TestWaitFutureGivesTheFuturesOwnResult(t *testing.T) {
	t.Parallel()
	want := errors.New("refused")
	answer := make(chan error, 1)
	answer <- want
	if err := waitFuture(stuckFuture{answer: answer}, make(chan struct{})); !errors.Is(err, want) {
		t.Fatalf("got %v, want %v", err, want)
	}
}
