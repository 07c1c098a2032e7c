// Package writeretry retries the agent's writes across leader elections:
// an error that means "no leader", "leadership lost", "connection to the
// server lost" or "timed out waiting for the leader" is retried with
// backoff for a bounded time, so that an election shows as latency.
// Only writes that are safe to send twice go through it: creates that
// carry an idempotency key, deletes, task submissions with their own
// ids. It must not know an endpoint or an API format.
package writeretry

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// Budget is how long a write is retried before its last error is
// returned: several elections' worth on a loaded machine.
const Budget = 30 * time.Second

// The backoff between attempts: doubling from the first to the cap, with
// jitter so that clients retrying together spread out.
const (
	firstBackoff = 50 * time.Millisecond
	maxBackoff   = time.Second
)

// transient are texts of errors that mean the write may not have been
// proposed, or its outcome is unknown, because the leader changed or
// could not be reached. They match errors that crossed an RPC hop as
// text, where only the message is left.
var transient = []string{
	"node is not the leader",
	"leadership lost while committing log",
	"leadership transfer in progress",
	"timed out enqueuing operation",
	"raft is already shutdown",
	"server is shutting down",
	"no server reachable",
	"no servers known in region",
	"connection reset by peer",
	"broken pipe",
	"connection refused",
	"session shutdown",
	"stream closed",
	"keepalive timeout",
	"unexpected EOF",
}

// Retryable reports whether err means the write did not reach a leader
// or its outcome is unknown because of a leader change or a lost
// connection — never a refusal of the write itself.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if rpc.IsConnError(err) {
		return true
	}
	switch structs.KindOf(err) {
	case structs.KindNoLeader:
		return true
	case structs.KindInvalid, structs.KindNotFound, structs.KindConflict, structs.KindPermission,
		structs.KindQuotaReached, structs.KindTooLarge, structs.KindUnauthenticated:
		return false
	}
	msg := err.Error()
	for _, t := range transient {
		if strings.Contains(msg, t) {
			return true
		}
	}
	return false
}

// Do calls fn until it returns nil or an error that is not Retryable,
// until Budget has passed since the first call, or until ctx ends; it
// returns fn's last error. retried tells fn whether an earlier attempt
// may have taken effect (so that, say, a delete's "not found" means
// success).
func Do(ctx context.Context, fn func(retried bool) error) error {
	return DoFor(ctx, Budget, fn)
}

// DoFor is Do with another budget.
func DoFor(ctx context.Context, budget time.Duration, fn func(retried bool) error) error {
	deadline := time.Now().Add(budget)
	backoff := firstBackoff
	for attempt := 0; ; attempt++ {
		err := fn(attempt > 0)
		if !Retryable(err) {
			return err
		}
		wait := backoff/2 + rand.N(backoff/2+1)
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// NewKey returns a random idempotency key for a create whose client gave
// none; the agent keeps it across its own retries.
func NewKey() string {
	var b [16]byte
	_, _ = cryptorand.Read(b[:])
	return "stratus-" + hex.EncodeToString(b[:])
}
