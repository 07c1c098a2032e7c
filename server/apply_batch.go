package server

import (
	"fmt"
	"sync"

	"github.com/stratus-cloud/stratus/structs"
)

const (
	// maxApplyBatch bounds how many requests one coalesced Raft entry
	// carries.
	maxApplyBatch = 256
	// applyFlushers is how many batches of one kind may be in Raft at
	// once, so one batch replicates while the next one fills.
	applyFlushers = 2
)

// applyBatcher coalesces writes of one kind that reach the leader at the
// same time into one Raft entry, as the plan applier does for plans:
// there is no waiting window, a batch is simply whatever queued while the
// previous one was being committed. An idle server commits a lone write
// at once, in the ordinary entry of its kind (single). Each write keeps
// its own outcome. K says which entries a batch makes.
type applyBatcher[E any, K batchKind[E]] struct {
	mu       sync.Mutex
	queue    []*pendingApply[E]
	flushers int
}

// batchKind is a kind of coalesced write: single is the message type of
// one write alone, batch builds the entry of several and names its type.
// Its methods use no fields: the zero value serves.
type batchKind[E any] interface {
	single() structs.MessageType
	batch(entries []E) (structs.MessageType, any)
}

// pendingApply is one write waiting for its batch to commit.
type pendingApply[E any] struct {
	entry E
	index uint64
	err   error
	done  chan struct{}
}

// submit commits e, alone or with others, and returns its Raft index.
func (b *applyBatcher[E, K]) submit(s *Server, e E) (uint64, error) {
	p := &pendingApply[E]{entry: e, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, p)
	if b.flushers < applyFlushers {
		b.flushers++
		go b.flush(s)
	}
	b.mu.Unlock()
	<-p.done
	return p.index, p.err
}

// flush commits queued writes until the queue is empty.
func (b *applyBatcher[E, K]) flush(s *Server) {
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.queue = nil
			b.flushers--
			b.mu.Unlock()
			return
		}
		n := min(len(b.queue), maxApplyBatch)
		batch := b.queue[:n:n]
		b.queue = b.queue[n:]
		b.mu.Unlock()
		b.commit(s, batch)
		for _, p := range batch {
			close(p.done)
		}
	}
}

// commit proposes a batch and records each write's outcome. raftApply
// never blocks past its timeout, and fails at once when Raft shuts down,
// so every waiting caller is answered.
func (b *applyBatcher[E, K]) commit(s *Server, batch []*pendingApply[E]) {
	var kind K
	if len(batch) == 1 {
		batch[0].index, batch[0].err = s.applyCompact(kind.single(), batch[0].entry)
		return
	}
	entries := make([]E, len(batch))
	for i, p := range batch {
		entries[i] = p.entry
	}
	t, body := kind.batch(entries)
	if !s.fsmLevelAllows(t) {
		// A server not upgraded yet would stop at the batched entry:
		// commit each write in the entry of its own kind instead.
		b.commitEach(s, batch)
		return
	}
	fail := func(err error) {
		for _, p := range batch {
			p.err = fmt.Errorf("%s: %w", kind.single(), err)
		}
	}
	data, err := encodeCompactEntry(t, body)
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
			p.err = fmt.Errorf("%s: %w", kind.single(), errs[i])
		}
	}
}

// commitEach commits each write of a batch in its own single entry, all
// proposed at once so that Raft still replicates them together. It is the
// batch's form while some server's FSM level predates the batched entry
// (version_gate.go).
func (b *applyBatcher[E, K]) commitEach(s *Server, batch []*pendingApply[E]) {
	var kind K
	var wg sync.WaitGroup
	for _, p := range batch {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.index, p.err = s.applyCompact(kind.single(), p.entry)
		}()
	}
	wg.Wait()
}
