package iradix

import (
	"sync"
	"testing"
)

// TestWatchChRacesWithClose: whoever gets a node's channel, before,
// during or after the node is replaced, sees it closed once close
// returns, and close never closes a channel twice.
func TestWatchChRacesWithClose(t *testing.T) {
	for round := 0; round < 2000; round++ {
		var w watchCh
		var wg sync.WaitGroup
		got := make(chan chan struct{}, 8)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got <- w.get()
			}()
		}
		w.close()
		wg.Wait()
		close(got)
		for ch := range got {
			select {
			case <-ch:
			default:
				t.Fatalf("round %d: a watcher's channel is still open after close", round)
			}
		}
		select {
		case <-w.get():
		default:
			t.Fatalf("round %d: a late watcher's channel is open", round)
		}
	}
}

// TestUnwatchedNodesHoldNoChannel: a tree nobody watched made no
// channel, and a watched key's channel closes when its leaf changes.
func TestUnwatchedNodesHoldNoChannel(t *testing.T) {
	r := New()
	for _, k := range []string{"a", "ab", "abc", "b"} {
		r, _, _ = r.Insert([]byte(k), k)
	}
	var count func(n *Node) int
	count = func(n *Node) int {
		c := 0
		if n.mutateCh.p.Load() != nil {
			c++
		}
		if n.leaf != nil && n.leaf.mutateCh.p.Load() != nil {
			c++
		}
		for _, e := range n.edges {
			c += count(e.node)
		}
		return c
	}
	if c := count(r.Root()); c != 0 {
		t.Fatalf("%d channels made in an unwatched tree", c)
	}
	ch, _, ok := r.Root().GetWatch([]byte("ab"))
	if !ok || count(r.Root()) != 1 {
		t.Fatalf("watching one key made %d channels", count(r.Root()))
	}
	txn := r.Txn()
	txn.TrackMutate(true)
	txn.Insert([]byte("ab"), "new")
	txn.Commit()
	select {
	case <-ch:
	default:
		t.Fatal("the watched leaf changed without closing its channel")
	}
}
