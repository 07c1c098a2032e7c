package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

func dequeueNow(t *testing.T, b *evalBroker) (*structs.Evaluation, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	ev, token, err := b.Dequeue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ev, token
}

func pendingEval(id string, instances ...string) *structs.Evaluation {
	return &structs.Evaluation{ID: id, InstanceIDs: instances, Status: structs.EvalStatusPending}
}

func TestBrokerAckNackAndDeliveryLimit(t *testing.T) {
	var mu sync.Mutex
	var failed []string
	b := newEvalBroker(time.Minute, 2, func(ev *structs.Evaluation, reason string) {
		mu.Lock()
		failed = append(failed, ev.ID)
		mu.Unlock()
	})
	if _, _, err := b.Dequeue(context.Background()); structs.KindOf(err) != structs.KindNoLeader {
		t.Fatalf("disabled broker: %v", err)
	}
	b.SetEnabled(true)
	b.Enqueue(pendingEval("e1", "i1"))
	b.Enqueue(pendingEval("e1", "i1")) // duplicates are ignored
	b.Enqueue(&structs.Evaluation{ID: "done", Status: structs.EvalStatusComplete})
	ev, token := dequeueNow(t, b)
	if ev == nil || ev.ID != "e1" {
		t.Fatalf("dequeued %+v", ev)
	}
	if ev2, _ := dequeueNow(t, b); ev2 != nil {
		t.Fatalf("second delivery while unacked: %+v", ev2)
	}
	if err := b.Ack("e1", "wrong-token"); err == nil {
		t.Fatal("ack with a wrong token accepted")
	}
	// Nack: delivered again; a second nack reaches the limit of 2.
	if err := b.Nack("e1", token); err != nil {
		t.Fatal(err)
	}
	ev, token = dequeueNow(t, b)
	if ev == nil || ev.ID != "e1" {
		t.Fatalf("redelivery %+v", ev)
	}
	if b.Outstanding("e1", "stale") || !b.Outstanding("e1", token) {
		t.Fatal("outstanding token check")
	}
	if err := b.Nack("e1", token); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(failed) != 1 || failed[0] != "e1" {
		t.Fatalf("failed = %v", failed)
	}
	mu.Unlock()
	if ready, unacked := b.Stats(); ready != 0 || unacked != 0 {
		t.Fatalf("after failure: ready %d unacked %d", ready, unacked)
	}

	// Ack completes.
	b.Enqueue(pendingEval("e2", "i2"))
	ev, token = dequeueNow(t, b)
	if err := b.Ack(ev.ID, token); err != nil {
		t.Fatal(err)
	}
	if ready, unacked := b.Stats(); ready != 0 || unacked != 0 {
		t.Fatalf("after ack: ready %d unacked %d", ready, unacked)
	}
}

func TestBrokerNackTimeoutRedelivers(t *testing.T) {
	b := newEvalBroker(50*time.Millisecond, 3, nil)
	b.SetEnabled(true)
	b.Enqueue(pendingEval("e1", "i1"))
	first, _ := dequeueNow(t, b)
	if first == nil {
		t.Fatal("nothing delivered")
	}
	// The worker never acks: after the nack timeout it is delivered again.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	again, _, err := b.Dequeue(ctx)
	if err != nil || again == nil || again.ID != "e1" {
		t.Fatalf("redelivery after timeout: %+v %v", again, err)
	}
}

func TestBrokerSerialisesPerInstance(t *testing.T) {
	b := newEvalBroker(time.Minute, 3, nil)
	b.SetEnabled(true)
	b.Enqueue(pendingEval("create", "i1", "i2"))
	b.Enqueue(pendingEval("reschedule-i2", "i2"))
	b.Enqueue(pendingEval("other", "i3"))
	ev, token := dequeueNow(t, b)
	if ev.ID != "create" {
		t.Fatalf("first %s", ev.ID)
	}
	// i2 is busy, so the next deliverable one is "other".
	ev2, _ := dequeueNow(t, b)
	if ev2 == nil || ev2.ID != "other" {
		t.Fatalf("second %+v", ev2)
	}
	if ev3, _ := dequeueNow(t, b); ev3 != nil {
		t.Fatalf("an eval for a busy instance was delivered: %s", ev3.ID)
	}
	// A blocked dequeue wakes when the instance is released.
	got := make(chan *structs.Evaluation, 1)
	go func() {
		ev, _, _ := b.Dequeue(context.Background())
		got <- ev
	}()
	if err := b.Ack("create", token); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-got:
		if ev == nil || ev.ID != "reschedule-i2" {
			t.Fatalf("woke with %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("dequeue did not wake when the instance was released")
	}
	// Losing leadership drops everything; a blocked dequeue returns.
	b.SetEnabled(false)
	if _, _, err := b.Dequeue(context.Background()); structs.KindOf(err) != structs.KindNoLeader {
		t.Fatalf("after disable: %v", err)
	}
}
