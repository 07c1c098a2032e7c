package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is a capped exponential backoff with jitter: Min, then
// doubling up to Max, each wait spread by ±Jitter (a fraction) so that
// clients that failed together do not retry together. The zero Jitter
// waits exactly. It is not safe for concurrent use.
type Backoff struct {
	Min, Max time.Duration
	Jitter   float64
	cur      time.Duration
}

// Next returns the next wait.
func (b *Backoff) Next() time.Duration {
	if b.cur == 0 {
		b.cur = b.Min
	} else {
		b.cur = min(2*b.cur, b.Max)
	}
	return Jitter(b.cur, b.Jitter)
}

// Reset starts the backoff over, after a success.
func (b *Backoff) Reset() { b.cur = 0 }

// Exponential is the n-th wait (1-based) of an exponential schedule
// without jitter: base after the first failure, doubling up to max. It
// is for loops that keep their schedule in replicated or restartable
// state and must compute the same wait again.
func Exponential(base, max time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

// Jitter returns d spread by ± fraction j of itself, at random.
func Jitter(d time.Duration, j float64) time.Duration {
	if d <= 0 || j <= 0 {
		return d
	}
	delta := time.Duration(float64(d) * j)
	if delta <= 0 {
		return d
	}
	return d - delta + rand.N(2*delta+1)
}

// Sleep waits d, or until done is closed; it reports whether it waited
// the whole time.
func Sleep(done <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	}
}

// SleepContext waits d, or until ctx ends; it reports whether it waited
// the whole time.
func SleepContext(ctx context.Context, d time.Duration) bool { return Sleep(ctx.Done(), d) }
