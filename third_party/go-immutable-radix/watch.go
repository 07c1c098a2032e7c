package iradix

import "sync/atomic"

// watchCh is the mutation channel of a node or leaf, made only when
// someone asks to watch it. The upstream library gave every node and
// every leaf its own channel (96 bytes each) when it was created,
// although only the few nodes a blocking query reads are ever watched;
// that was more than half of a tree's memory. A channel is closed when
// its node is replaced; a node replaced before anyone watched it holds
// the shared closed channel, so a late watcher wakes at once.
type watchCh struct {
	p atomic.Pointer[chan struct{}]
}

// closedWatch is the channel of every node replaced before it was
// watched.
var closedWatch = func() *chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return &ch
}()

// get returns the channel, making it on first use.
func (w *watchCh) get() chan struct{} {
	for {
		if p := w.p.Load(); p != nil {
			return *p
		}
		ch := make(chan struct{})
		if w.p.CompareAndSwap(nil, &ch) {
			return ch
		}
	}
}

// close closes the channel, or marks the node replaced if nobody has
// watched it yet. Closing again does nothing, so a transaction may list
// a channel twice.
func (w *watchCh) close() {
	if p := w.p.Swap(closedWatch); p != nil && p != closedWatch {
		close(*p)
	}
}
