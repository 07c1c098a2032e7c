package retry

import (
	"testing"
	"time"
)

func TestBackoffDoublesToItsCapAndStartsOver(t *testing.T) {
	b := &Backoff{Min: 10 * time.Millisecond, Max: 50 * time.Millisecond}
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
	}
	want := []time.Duration{10, 20, 40, 50, 50}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits %v, want %v ms", got, want)
		}
	}
	b.Reset()
	if d := b.Next(); d != 10*time.Millisecond {
		t.Fatalf("after Reset: %v", d)
	}
}

func TestJitterStaysWithinItsSpread(t *testing.T) {
	b := &Backoff{Min: time.Second, Max: time.Second, Jitter: 0.1}
	seen := map[time.Duration]bool{}
	for range 200 {
		d := b.Next()
		if d < 900*time.Millisecond || d > 1100*time.Millisecond {
			t.Fatalf("wait %v outside ±10 %%", d)
		}
		seen[d] = true
	}
	if len(seen) < 10 {
		t.Fatalf("only %d distinct waits: no jitter", len(seen))
	}
	if Jitter(0, 0.5) != 0 || Jitter(time.Second, 0) != time.Second {
		t.Fatal("Jitter of nothing changed something")
	}
}

func TestExponential(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 2 * time.Second, 2: 4 * time.Second, 3: 8 * time.Second, 10: time.Minute} {
		if got := Exponential(2*time.Second, time.Minute, n); got != want {
			t.Errorf("Exponential(n=%d) = %v, want %v", n, got, want)
		}
	}
}

func TestSleepEndsEarlyWhenDone(t *testing.T) {
	done := make(chan struct{})
	close(done)
	if Sleep(done, time.Hour) {
		t.Fatal("Sleep waited although done was closed")
	}
	if !Sleep(make(chan struct{}), time.Millisecond) {
		t.Fatal("Sleep did not wait its time")
	}
}
