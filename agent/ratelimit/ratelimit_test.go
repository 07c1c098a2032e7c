package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// clock is a manual clock for deterministic refills.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestBurstThenRefill(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l := New(Config{Rate: 2, Burst: 3, Now: c.now})
	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	ok, wait := l.Allow("a")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("over the burst: ok=%v wait=%v, want refused with 500ms", ok, wait)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another key shares a's bucket")
	}
	c.add(500 * time.Millisecond)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("no token after the refill interval")
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("refill gave more than one token")
	}
	c.add(time.Hour)
	for i := range 3 {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("refill beyond a long idle: request %d refused", i)
		}
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("bucket refilled beyond its burst")
	}
}

func TestKeysStayBounded(t *testing.T) {
	c := &clock{t: time.Unix(1000, 0)}
	l := New(Config{Rate: 1, Burst: 1, MaxKeys: 100, Now: c.now})
	for i := range 1000 {
		l.Allow(fmt.Sprint("k", i))
		c.add(time.Millisecond)
	}
	if n := l.Len(); n > 100 {
		t.Fatalf("%d buckets kept, want at most 100", n)
	}
	// Refilled buckets go first.
	c.add(time.Hour)
	l.Allow("fresh")
	if n := l.Len(); n != 1 {
		t.Fatalf("%d buckets after all refilled, want 1", n)
	}
}

func TestConcurrentUse(t *testing.T) {
	l := New(Config{Rate: 1e-9, Burst: 50})
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if ok, _ := l.Allow("shared"); ok {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 50 {
		t.Fatalf("%d requests allowed from a burst of 50", allowed)
	}
}
