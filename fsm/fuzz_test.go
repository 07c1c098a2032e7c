package fsm

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// FuzzApply feeds arbitrary entries of every known message type (and of
// unknown ignorable ones) to a populated FSM: a malformed entry must be
// refused with an error, never panic, and leave the FSM usable. Unknown
// mandatory types are left out: stopping on them is deliberate (see
// ApplyEntry). The seeds are real entries over populate's objects,
// filled-in bodies of every type (fuzz_seeds_test.go) and minimal
// bodies of every type; run longer with
// go test -run '^$' -fuzz FuzzApply -fuzztime 5m ./fsm.
func FuzzApply(f *testing.F) {
	types := make([]structs.MessageType, 0, len(applyHandlers))
	for t := range applyHandlers {
		types = append(types, t)
	}
	slices.Sort(types)
	addEntrySeeds(f)
	for _, t := range types {
		f.Add(uint8(t), uint8(1), []byte{0x80})                  // an empty map
		f.Add(uint8(t), uint8(1), []byte{0xc0})                  // nil
		f.Add(uint8(t), uint8(9), []byte{0x81, 0xa1, 'X', 0x01}) // a future version
	}
	f.Add(uint8(structs.IgnoreUnknownTypeFlag|120), uint8(1), []byte{0x80})
	f.Fuzz(func(t *testing.T, typ, version uint8, body []byte) {
		mt := structs.MessageType(typ)
		if _, known := applyHandlers[mt&^structs.IgnoreUnknownTypeFlag]; !known && mt&structs.IgnoreUnknownTypeFlag == 0 {
			mt = types[int(typ)%len(types)]
		}
		fsm := populatedOnce.copy(t)
		data := append([]byte{byte(mt), version}, body...)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = fsm.ApplyEntry(100, data)
		}()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			stacks := make([]byte, 1<<20)
			t.Fatalf("entry type %d (%d bytes) not applied in 60 s:\n%s", mt, len(data), stacks[:runtime.Stack(stacks, true)])
		}
		// Whatever happened, the state can still be read and written.
		if _, err := fsm.State().Flavors(nil); err != nil {
			t.Fatalf("state unreadable after entry type %d: %v", mt, err)
		}
		if resp := apply(t, fsm, 101, structs.FlavorUpsertRequestType, &structs.FlavorUpsertRequest{Flavors: structs.DevFlavors()[:1]}); resp != nil {
			if err, ok := resp.(error); ok {
				t.Fatalf("state unwritable after entry type %d: %v", mt, err)
			}
		}
	})
}

// populatedFSM is a populated FSM built once; copy hands each fuzz
// execution its own FSM over an O(1) snapshot of it (memdb's radix trees
// are immutable), so an execution costs the entry, not a populate.
type populatedFSM struct {
	once sync.Once
	base *FSM
}

var populatedOnce populatedFSM

func (p *populatedFSM) copy(t *testing.T) *FSM {
	p.once.Do(func() {
		p.base = testFSM(t)
		populate(t, p.base.State())
	})
	if p.base == nil {
		t.Fatal("populating the base FSM failed in an earlier execution")
	}
	return &FSM{logger: p.base.logger, state: &StateStore{db: p.base.state.db.Snapshot(), abandonCh: make(chan struct{})}}
}
