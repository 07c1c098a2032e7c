package server

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/structs"
)

// evalBroker hands evaluations to scheduler workers. It lives in the
// leader's memory and is rebuilt from state on every leadership change.
// Delivery is at least once: an evaluation not acked within nackTimeout,
// or nacked, is delivered again, up to deliveryLimit times; then it is
// given to onFail. Two evaluations that name the same instance are never
// out at once, so one instance is never scheduled twice concurrently.
type evalBroker struct {
	nackTimeout   time.Duration
	deliveryLimit int
	onFail        func(ev *structs.Evaluation, reason string)

	mu      sync.Mutex
	enabled bool
	ready   []*structs.Evaluation
	known   map[string]bool // ready or unacked
	unack   map[string]*unackedEval
	// busy holds the instances of unacked evaluations.
	busy       map[string]bool
	deliveries map[string]int
	// wake is closed and replaced whenever the ready list may have a
	// deliverable evaluation.
	wake chan struct{}
}

type unackedEval struct {
	eval  *structs.Evaluation
	token string
	timer *time.Timer
}

func newEvalBroker(nackTimeout time.Duration, deliveryLimit int, onFail func(*structs.Evaluation, string)) *evalBroker {
	b := &evalBroker{nackTimeout: nackTimeout, deliveryLimit: deliveryLimit, onFail: onFail}
	b.reset()
	return b
}

func (b *evalBroker) reset() {
	for _, u := range b.unack {
		u.timer.Stop()
	}
	b.ready = nil
	b.known = map[string]bool{}
	b.unack = map[string]*unackedEval{}
	b.busy = map[string]bool{}
	b.deliveries = map[string]int{}
	if b.wake != nil {
		close(b.wake)
	}
	b.wake = make(chan struct{})
}

// SetEnabled turns the broker on when this server leads, and off (dropping
// everything: the next leader rebuilds it from state) when it stops.
func (b *evalBroker) SetEnabled(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enabled = on
	b.reset()
}

// Enqueue adds an evaluation unless it is already known.
func (b *evalBroker) Enqueue(ev *structs.Evaluation) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled || b.known[ev.ID] || ev.Terminal() {
		return
	}
	b.known[ev.ID] = true
	b.ready = append(b.ready, ev)
	b.signal()
}

func (b *evalBroker) signal() {
	close(b.wake)
	b.wake = make(chan struct{})
}

// Dequeue waits for a deliverable evaluation until ctx ends; it returns
// nil without error when ctx ends first.
func (b *evalBroker) Dequeue(ctx context.Context) (*structs.Evaluation, string, error) {
	for {
		b.mu.Lock()
		if !b.enabled {
			b.mu.Unlock()
			return nil, "", structs.ErrNoLeader
		}
		if ev, token := b.takeLocked(); ev != nil {
			b.mu.Unlock()
			return ev, token, nil
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, "", nil
		case <-wake:
		}
	}
}

// takeLocked removes the first evaluation whose instances are not busy.
func (b *evalBroker) takeLocked() (*structs.Evaluation, string) {
	for i, ev := range b.ready {
		if b.conflicts(ev) {
			continue
		}
		b.ready = append(b.ready[:i], b.ready[i+1:]...)
		token := uuid.NewString()
		for _, id := range ev.InstanceIDs {
			b.busy[id] = true
		}
		b.deliveries[ev.ID]++
		id := ev.ID
		u := &unackedEval{eval: ev, token: token}
		u.timer = time.AfterFunc(b.nackTimeout, func() { _ = b.Nack(id, token) })
		b.unack[ev.ID] = u
		return ev, token
	}
	return nil, ""
}

func (b *evalBroker) conflicts(ev *structs.Evaluation) bool {
	for _, id := range ev.InstanceIDs {
		if b.busy[id] {
			return true
		}
	}
	return false
}

// Outstanding reports whether token still holds the evaluation.
func (b *evalBroker) Outstanding(evalID, token string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.unack[evalID]
	return ok && u.token == token
}

// Ack completes a delivered evaluation.
func (b *evalBroker) Ack(evalID, token string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.releaseLocked(evalID, token); err != nil {
		return err
	}
	delete(b.known, evalID)
	delete(b.deliveries, evalID)
	b.signal()
	return nil
}

// Nack returns a delivered evaluation for redelivery, or fails it once it
// reached the delivery limit.
func (b *evalBroker) Nack(evalID, token string) error {
	b.mu.Lock()
	u, err := b.releaseLocked(evalID, token)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	if b.deliveries[evalID] >= b.deliveryLimit {
		delete(b.known, evalID)
		delete(b.deliveries, evalID)
		b.signal()
		b.mu.Unlock()
		if b.onFail != nil {
			b.onFail(u.eval, "scheduling failed after repeated attempts")
		}
		return nil
	}
	b.ready = append(b.ready, u.eval)
	b.signal()
	b.mu.Unlock()
	return nil
}

func (b *evalBroker) releaseLocked(evalID, token string) (*unackedEval, error) {
	u, ok := b.unack[evalID]
	if !ok || u.token != token {
		return nil, structs.Errorf(structs.KindConflict, "evaluation %s is not held by this token", evalID)
	}
	u.timer.Stop()
	delete(b.unack, evalID)
	for _, id := range u.eval.InstanceIDs {
		delete(b.busy, id)
	}
	return u, nil
}

// Stats counts ready and unacked evaluations, for tests and metrics.
func (b *evalBroker) Stats() (ready, unacked int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.ready), len(b.unack)
}
