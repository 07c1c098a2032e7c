package robustness

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// echoServer answers every connection with what it reads, until closed.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { _ = c.Close() }()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// held records, per direction, how long the link held each chunk.
type held struct {
	mu    sync.Mutex
	holds []time.Duration
}

func (h *held) record(received, release time.Time, done <-chan struct{}) {
	h.mu.Lock()
	h.holds = append(h.holds, release.Sub(received))
	h.mu.Unlock()
	sleepUntil(received, release, done)
}

func (h *held) snapshot() []time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Duration(nil), h.holds...)
}

// TestDelayLinkHoldsAndKeepsOrder: with a delay set, every chunk a link
// relays is held for the base delay plus at most the jitter, and the
// bytes of a connection come out intact and in order both ways (jitter
// never reorders them); with none set nothing is held. The latency seen
// is logged, not asserted: the machine's load is not the link's.
func TestDelayLinkHoldsAndKeepsOrder(t *testing.T) {
	t.Parallel()
	l, err := newDelayLink("a", "s", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	var h held
	l.wait = h.record
	spec := &delaySpec{base: 40 * time.Millisecond, jitter: 30 * time.Millisecond}

	roundTrips := func(n int) (time.Duration, []byte) {
		c, err := net.Dial("tcp", l.addr())
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Close() }()
		var sent, got bytes.Buffer
		start := time.Now()
		for i := 0; i < n; i++ {
			msg := []byte(fmt.Sprintf("message %04d|", i))
			sent.Write(msg)
			if _, err := c.Write(msg); err != nil {
				t.Fatal(err)
			}
		}
		buf := make([]byte, sent.Len())
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatal(err)
		}
		got.Write(buf)
		if !bytes.Equal(got.Bytes(), sent.Bytes()) {
			t.Fatalf("relayed bytes differ from those sent:\n got %q\nwant %q", got.Bytes(), sent.Bytes())
		}
		return time.Since(start), got.Bytes()
	}

	l.up.Store(spec)
	l.down.Store(spec)
	took, _ := roundTrips(200)
	holds := h.snapshot()
	if len(holds) < 2 {
		t.Fatalf("the link held %d chunks, want both directions", len(holds))
	}
	for _, d := range holds {
		if d < spec.base || d > spec.base+spec.jitter {
			t.Errorf("a chunk was held %s, want %s", d, spec)
		}
	}
	t.Logf("delayed: 200 messages echoed in %s over %d chunks (held %s each way)", took, len(holds), spec)

	l.up.Store(nil)
	l.down.Store(nil)
	before := len(h.snapshot())
	took, _ = roundTrips(50)
	for _, d := range h.snapshot()[before:] {
		if d != 0 {
			t.Errorf("a chunk was held %s with no delay set", d)
		}
	}
	t.Logf("undelayed: 50 messages echoed in %s", took)
}

// TestDelayNetDelaysOneServersTraffic: a delay on a server sets the
// directions it sends and receives on every link it is an end of, and
// no other link's.
func TestDelayNetDelaysOneServersTraffic(t *testing.T) {
	t.Parallel()
	target := echoServer(t)
	d := &delayNet{}
	for _, p := range [][2]string{{"s1", "s2"}, {"s2", "s1"}, {"s2", "s3"}, {"c1", "s1"}, {"c1", "s3"}} {
		l, err := newDelayLink(p[0], p[1], target)
		if err != nil {
			t.Fatal(err)
		}
		d.links = append(d.links, l)
	}
	t.Cleanup(d.close)
	send, recv := &delaySpec{base: time.Second}, &delaySpec{base: 2 * time.Second}
	d.delay("s1", send, recv)
	for _, l := range d.links {
		up, down := l.up.Load(), l.down.Load()
		var wantUp, wantDown *delaySpec
		switch "s1" {
		case l.from:
			wantUp, wantDown = send, recv
		case l.to:
			wantUp, wantDown = recv, send
		}
		if up != wantUp || down != wantDown {
			t.Errorf("link %s→%s delays %s up, %s down; want %s, %s", l.from, l.to, up, down, wantUp, wantDown)
		}
	}
	d.clear()
	for _, l := range d.links {
		if l.up.Load() != nil || l.down.Load() != nil {
			t.Errorf("link %s→%s still delays after clear", l.from, l.to)
		}
	}
}
