// Package ratelimit is a token-bucket rate limiter keyed by a string: one
// bucket per client credential (a token, an S3 access key) or per client
// address. The agent's HTTP limits (agent/limits.go) use it to keep one
// client from starving the others.
//
// It must not know HTTP or who a key belongs to: callers choose the keys
// and answer refusals in their own API's format.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// DefaultMaxKeys bounds how many buckets a limiter keeps before it drops
// the ones that have refilled (and so hold no state worth keeping).
const DefaultMaxKeys = 65536

// Limiter hands out tokens from per-key buckets that refill at Rate
// tokens a second up to Burst. It is safe for concurrent use.
type Limiter struct {
	rate    float64
	burst   float64
	maxKeys int
	now     func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// Config configures a Limiter.
type Config struct {
	// Rate is the sustained number of requests a second per key; it must
	// be positive.
	Rate float64
	// Burst is how many requests a key may make at once; at least 1.
	Burst int
	// MaxKeys bounds the buckets kept (DefaultMaxKeys when 0). Past it,
	// full buckets are forgotten; if every bucket is in use, the oldest
	// half is.
	MaxKeys int
	// Now is the clock (time.Now when nil); tests set it.
	Now func() time.Time
}

// New returns a limiter; a non-positive rate or burst is clamped to the
// smallest working value.
func New(cfg Config) *Limiter {
	l := &Limiter{rate: cfg.Rate, burst: float64(cfg.Burst), maxKeys: cfg.MaxKeys, now: cfg.Now,
		buckets: map[string]*bucket{}}
	if l.rate <= 0 {
		l.rate = math.SmallestNonzeroFloat64
	}
	if l.burst < 1 {
		l.burst = 1
	}
	if l.maxKeys <= 0 {
		l.maxKeys = DefaultMaxKeys
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// Allow takes a token from key's bucket. When the bucket is empty it
// returns false and how long until a token is available again.
func (l *Limiter) Allow(key string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			l.sweepLocked(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	l.refill(b, now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
	return false, wait
}

// Len is the number of buckets kept.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

func (l *Limiter) refill(b *bucket, now time.Time) {
	if el := now.Sub(b.last); el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+el.Seconds()*l.rate)
		b.last = now
	}
}

// sweepLocked forgets buckets that have refilled; if none has, it forgets
// the least recently used half, so the map stays bounded whatever keys
// clients send.
func (l *Limiter) sweepLocked(now time.Time) {
	for k, b := range l.buckets {
		l.refill(b, now)
		if b.tokens >= l.burst {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.maxKeys {
		return
	}
	var total time.Duration
	for _, b := range l.buckets {
		total += now.Sub(b.last)
	}
	avg := total / time.Duration(len(l.buckets))
	for k, b := range l.buckets {
		if now.Sub(b.last) >= avg {
			delete(l.buckets, k)
		}
	}
}
