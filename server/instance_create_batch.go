package server

import (
	"fmt"
	"sync"

	"github.com/stratus-cloud/stratus/structs"
)

const (
	// maxCreateBatch bounds how many creates one Raft entry carries.
	maxCreateBatch = 256
	// createFlushers is how many batches may be in Raft at once, so one
	// batch replicates while the next one fills.
	createFlushers = 2
)

// createBatcher coalesces the creates that reach the leader at the same
// time into one Raft entry (InstanceCreateBatchType), as the plan
// applier does for plans: there is no waiting window, a batch is simply
// whatever queued while the previous one was being committed. An idle
// server commits a lone create at once, in an ordinary InstanceCreate
// entry. Each create keeps its own evaluation and its own outcome.
type createBatcher struct {
	mu       sync.Mutex
	queue    []*pendingCreate
	flushers int
}

// pendingCreate is one create waiting for its batch to commit.
type pendingCreate struct {
	entry *structs.InstanceCreateEntry
	index uint64
	err   error
	done  chan struct{}
}

// submit commits e, alone or with others, and returns its Raft index.
func (b *createBatcher) submit(s *Server, e *structs.InstanceCreateEntry) (uint64, error) {
	p := &pendingCreate{entry: e, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, p)
	if b.flushers < createFlushers {
		b.flushers++
		go b.flush(s)
	}
	b.mu.Unlock()
	<-p.done
	return p.index, p.err
}

// flush commits queued creates until the queue is empty.
func (b *createBatcher) flush(s *Server) {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.queue = nil
			b.flushers--
			b.mu.Unlock()
			return
		}
		n := min(len(b.queue), maxCreateBatch)
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		s.commitCreates(batch)
		for _, p := range batch {
			close(p.done)
		}
	}
}

// commitCreates proposes a batch and records each create's outcome.
// raftApply never blocks past its timeout, and fails at once when Raft
// shuts down, so every waiting caller is answered.
func (s *Server) commitCreates(batch []*pendingCreate) {
	if len(batch) == 1 {
		batch[0].index, batch[0].err = s.apply(structs.InstanceCreateType, batch[0].entry)
		return
	}
	entry := &structs.InstanceCreateBatchEntry{Entries: make([]*structs.InstanceCreateEntry, len(batch))}
	for i, p := range batch {
		entry.Entries[i] = p.entry
	}
	fail := func(err error) {
		for _, p := range batch {
			p.err = fmt.Errorf("%s: %w", structs.InstanceCreateType, err)
		}
	}
	data, err := structs.EncodeEntry(structs.InstanceCreateBatchType, entry)
	if err != nil {
		fail(err)
		return
	}
	index, resp, err := s.raftApply(data)
	if err != nil {
		fail(err)
		return
	}
	errs, ok := resp.([]error)
	if !ok || len(errs) != len(batch) {
		fail(fmt.Errorf("unexpected answer %T from the state machine", resp))
		return
	}
	for i, p := range batch {
		p.index = index
		if errs[i] != nil {
			p.err = fmt.Errorf("%s: %w", structs.InstanceCreateType, errs[i])
		}
	}
}
