package client

import (
	"github.com/stratus-cloud/stratus/internal/retry"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// reporter batches allocation reports: the latest per allocation wins,
// and everything queued is sent in one Alloc.UpdateFromClient per
// ReportInterval. A batch that fails is kept and retried with backoff, so
// a terminal report is never dropped; only reports about allocations the
// servers no longer know (KindNotFound) are.
type reporter struct {
	c *Client

	mu      sync.Mutex
	pending map[string]*structs.AllocClientUpdate
	// seq counts queued updates per allocation, so a failed batch is put
	// back only where nothing newer was queued meanwhile.
	seq    map[string]uint64
	notify chan struct{}
}

func newReporter(c *Client) *reporter {
	return &reporter{
		c:       c,
		pending: make(map[string]*structs.AllocClientUpdate),
		seq:     make(map[string]uint64),
		notify:  make(chan struct{}, 1),
	}
}

// queue adds a report, replacing any unsent one for the same allocation.
func (r *reporter) queue(u structs.AllocClientUpdate) {
	r.mu.Lock()
	r.pending[u.AllocID] = &u
	r.seq[u.AllocID]++
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// taken is a batch with the sequence numbers it was taken at.
type taken struct {
	updates []*structs.AllocClientUpdate
	seq     map[string]uint64
}

// take empties the queue into a batch sorted by allocation id.
func (r *reporter) take() taken {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := taken{seq: make(map[string]uint64, len(r.pending))}
	for id, u := range r.pending {
		t.updates = append(t.updates, u)
		t.seq[id] = r.seq[id]
	}
	clear(r.pending)
	slices.SortFunc(t.updates, func(a, b *structs.AllocClientUpdate) int { return strings.Compare(a.AllocID, b.AllocID) })
	return t
}

// putBack requeues unsent updates that nothing newer replaced.
func (r *reporter) putBack(t taken, unsent []*structs.AllocClientUpdate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, u := range unsent {
		if r.seq[u.AllocID] == t.seq[u.AllocID] {
			r.pending[u.AllocID] = u
		}
	}
}

// forget drops the sequence counters of delivered allocations that have
// nothing queued, so the map does not grow forever.
func (r *reporter) forget(t taken) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, s := range t.seq {
		if _, queued := r.pending[id]; !queued && r.seq[id] == s {
			delete(r.seq, id)
		}
	}
}

// pendingCount is how many allocations have an unsent report.
func (r *reporter) pendingCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// run sends batches until shutdown.
func (r *reporter) run() {
	c := r.c
	b := &retry.Backoff{Min: max(c.cfg.ReportInterval, c.backoffMin), Max: c.backoffMax, Jitter: 0.1}
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-r.notify:
		}
		// The batch window: reports queued meanwhile join this batch.
		if !c.sleep(c.cfg.ReportInterval) {
			return
		}
		for {
			t := r.take()
			if len(t.updates) == 0 {
				break
			}
			unsent, err := r.send(t.updates)
			if len(unsent) == 0 {
				r.forget(t)
				b.Reset()
				break
			}
			r.putBack(t, unsent)
			if c.ctx.Err() != nil {
				return
			}
			wait := b.Next()
			c.logger.Warn("sending allocation reports failed; retrying", "error", err, "reports", len(unsent), "retry_in", wait)
			if !c.sleep(wait) {
				return
			}
		}
	}
}

// send delivers updates in one call and returns those not delivered.
// When the servers answer KindNotFound (an allocation in the batch is
// gone), each is sent on its own and the unknown ones are dropped.
func (r *reporter) send(updates []*structs.AllocClientUpdate) ([]*structs.AllocClientUpdate, error) {
	err := r.sendBatch(updates)
	if err == nil {
		return nil, nil
	}
	if structs.KindOf(err) != structs.KindNotFound {
		return updates, err
	}
	if len(updates) == 1 {
		r.c.logger.Warn("dropping report about an allocation the servers do not know", "alloc_id", updates[0].AllocID, "error", err)
		return nil, nil
	}
	var unsent []*structs.AllocClientUpdate
	var lastErr error
	for i, u := range updates {
		rest, err := r.send([]*structs.AllocClientUpdate{u})
		if r.c.ctx.Err() != nil {
			return append(unsent, updates[i:]...), errShutdown
		}
		if err != nil {
			lastErr = err
		}
		unsent = append(unsent, rest...)
	}
	return unsent, lastErr
}

// sendBatch makes one Alloc.UpdateFromClient call.
func (r *reporter) sendBatch(updates []*structs.AllocClientUpdate) error {
	req := &structs.AllocUpdateRequest{
		HostID:       r.c.hostID,
		Updates:      updates,
		WriteRequest: r.c.writeRequest(),
	}
	var resp structs.GenericResponse
	start := time.Now()
	err := r.c.call("Alloc.UpdateFromClient", req, &resp)
	if err == nil {
		r.c.logger.Debug("allocation reports sent", "reports", len(updates), "took", time.Since(start))
	}
	return err
}
