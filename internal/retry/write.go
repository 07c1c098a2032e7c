package retry

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"time"

	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// Budget is how long a write is retried before its last error is
// returned: several elections' worth on a loaded machine.
const Budget = 30 * time.Second

// writeBackoff is the pause between a write's attempts: from 50 ms up to
// 1 s, spread by half so that clients retrying together spread out.
func writeBackoff() *Backoff {
	return &Backoff{Min: 50 * time.Millisecond, Max: time.Second, Jitter: 0.5}
}

// Retryable reports whether err means the write did not reach a leader,
// or its outcome is unknown because of a leader change or a lost
// connection — never a refusal of the write itself. It reads only the
// error's kind (structs.KindNoLeader, structs.KindUnavailable, which
// cross RPC hops) and the RPC layer's transport classification.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	if rpc.IsConnError(err) {
		return true
	}
	switch structs.KindOf(err) {
	case structs.KindNoLeader, structs.KindUnavailable:
		return true
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
	b := writeBackoff()
	for attempt := 0; ; attempt++ {
		err := fn(attempt > 0)
		if !Retryable(err) {
			return err
		}
		wait := b.Next()
		if time.Now().Add(wait).After(deadline) {
			return err
		}
		if !SleepContext(ctx, wait) {
			return err
		}
	}
}

// NewKey returns a random idempotency key for a create whose client gave
// none; the agent keeps it across its own retries.
func NewKey() string {
	var b [16]byte
	_, _ = cryptorand.Read(b[:])
	return "stratus-" + hex.EncodeToString(b[:])
}
