package client

import (
	"sync"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// runner moves one allocation's instance from its actual state to the
// desired one. It is one goroutine fed through a one-slot notify channel:
// updates coalesce and the latest wins. Every driver call about its
// instance is made from that goroutine, so they never overlap.
type runner struct {
	c       *Client
	allocID string
	logger  hclog.Logger
	notify  chan struct{}

	// mu guards the inbox and the fields other goroutines read.
	mu       sync.Mutex
	next     *structs.Allocation
	nextInst *structs.Instance
	gone     bool
	// instanceID and live tell instanceInUse and the orphan reaper what
	// the runner manages; live is false once the allocation is terminal.
	instanceID string
	live       bool
	// imageID is the instance's image, which the image cache keeps.
	imageID string
	// createIndex and held are the allocation's, for supersededBy.
	createIndex uint64
	held        bool
	// exportToken and desiredStopped are the allocation's, for
	// ExportDisks (diskmove.go).
	exportToken    string
	desiredStopped bool

	// The rest belongs to the runner goroutine.
	alloc    *structs.Allocation
	inst     *structs.Instance
	st       allocState // as persisted
	hasState bool       // st is in state.db
	last     structs.AllocClientUpdate
	deleted  bool // destroyed and reported deleted
	settled  bool // terminal and cleaned up
}

func newRunner(c *Client, allocID, instanceID string) *runner {
	r := &runner{
		c:          c,
		allocID:    allocID,
		logger:     c.logger.With("alloc_id", allocID, "instance_id", instanceID),
		notify:     make(chan struct{}, 1),
		instanceID: instanceID,
		live:       true,
	}
	st, ok, err := c.state.getAlloc(allocID)
	if err != nil {
		r.logger.Error("cannot read local state; starting afresh", "error", err)
	}
	if ok {
		r.st, r.hasState = st, true
		if st.InstanceID != "" && st.InstanceID != instanceID {
			r.logger.Warn("allocation's instance changed since it was recorded", "recorded_instance_id", st.InstanceID)
		}
	}
	return r
}

// update hands the runner the latest version of its allocation.
func (r *runner) update(alloc *structs.Allocation, inst *structs.Instance) {
	r.mu.Lock()
	r.next, r.nextInst = alloc, inst
	if alloc != nil {
		r.createIndex, r.held = alloc.CreateIndex, alloc.DesiredState == structs.AllocDesiredHeld
		r.exportToken, r.desiredStopped = alloc.DiskExportToken, alloc.DesiredState == structs.AllocDesiredStopped
	}
	if inst != nil {
		r.imageID = inst.ImageID
	}
	r.mu.Unlock()
	r.poke()
}

// vanish tells the runner its allocation is gone: destroy and stop.
func (r *runner) vanish() {
	r.mu.Lock()
	r.gone = true
	r.mu.Unlock()
	r.poke()
}

// poke wakes the runner to reconcile (the power sync uses it alone).
func (r *runner) poke() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// manages reports whether the runner is live and manages instance id.
func (r *runner) manages(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live && r.instanceID == id
}

// managedInstance returns the instance id the runner manages.
func (r *runner) managedInstance() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.instanceID
}

func (r *runner) setLive(live bool) {
	r.mu.Lock()
	r.live = live
	r.mu.Unlock()
}

// run is the runner goroutine.
func (r *runner) run() {
	ctx := r.c.ctx
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.notify:
		}
		// select picks at random among ready cases: a wake-up that races
		// with shutdown must not start driver work the agent is leaving.
		if ctx.Err() != nil {
			return
		}
		r.mu.Lock()
		next, inst, gone := r.next, r.nextInst, r.gone
		r.next, r.nextInst = nil, nil
		r.mu.Unlock()

		if gone {
			r.destroyVanished()
			return
		}
		if next != nil {
			if r.alloc == nil {
				r.first(next, inst)
			}
			r.alloc, r.inst = next, inst
		}
		if r.alloc != nil {
			r.reconcile()
		}
	}
}

// first initialises the runner from the first version of its allocation:
// what the servers last heard is the baseline for reports, and an action
// the servers saw done is never repeated even if local state was lost.
func (r *runner) first(a *structs.Allocation, inst *structs.Instance) {
	r.last = structs.AllocClientUpdate{
		AllocID:           a.ID,
		ClientState:       a.ClientState,
		ClientDescription: a.ClientDescription,
		PowerState:        a.PowerState,
		ActionDoneSeq:     a.ActionDoneSeq,
		ActionError:       a.ActionError,
	}
	if a.ActionDoneSeq > r.st.ActionDoneSeq {
		r.st.ActionDoneSeq, r.st.ActionError = a.ActionDoneSeq, a.ActionError
	}
	if r.st.InstanceID == "" {
		r.st.InstanceID = a.InstanceID
	}
	// Without a local record (a wiped data dir) the servers' word says
	// whether the guest runs a rescue image, so it is not powered off.
	if !r.hasState && inst != nil && inst.VMState == structs.VMStateRescued {
		r.st.Rescued = true
	}
}

// save persists st if it changed.
func (r *runner) save(st allocState) {
	if r.hasState && st == r.st {
		return
	}
	r.st = st
	if err := r.c.state.putAlloc(r.allocID, st); err != nil {
		r.logger.Error("cannot persist allocation state", "error", err)
		return
	}
	r.hasState = true
}

// forget removes the allocation from state.db.
func (r *runner) forget() {
	if err := r.c.state.deleteAlloc(r.allocID); err != nil {
		r.logger.Error("cannot forget allocation state", "error", err)
		return
	}
	r.hasState = false
}

// report queues a report unless it repeats the last one.
func (r *runner) report(clientState, desc string, power int) {
	u := structs.AllocClientUpdate{
		AllocID:           r.allocID,
		ClientState:       clientState,
		ClientDescription: desc,
		PowerState:        power,
		ActionDoneSeq:     r.st.ActionDoneSeq,
		ActionError:       r.st.ActionError,
	}
	if u == r.last {
		return
	}
	r.last = u
	r.logger.Debug("reporting", "client_state", clientState, "power_state", power, "description", desc)
	r.c.reporter.queue(u)
}

// destroyVanished destroys the instance of an allocation the servers no
// longer list, retrying until it works or the client shuts down (then
// the local record stays, and the next start cleans up), and forgets it.
// Nothing is reported: the allocation is gone. An instance that migrated
// away is not destroyed: if it is here again, it came back under another
// allocation, perhaps one the watcher has not handed over yet.
func (r *runner) destroyVanished() {
	r.setLive(false)
	id := r.managedInstance()
	if r.st.InstanceID != "" {
		id = r.st.InstanceID
	}
	// A runner that destroyed its instance and reported it deleted has
	// nothing left to destroy: the allocation vanished because of that
	// report.
	if id != "" && !r.deleted && !r.st.MigratedAway && !r.c.instanceInUse(id, r) {
		b := r.c.newBackoff()
		for {
			err := r.c.driver.Destroy(r.c.ctx, id)
			if err == nil || isNotFound(err) {
				break
			}
			if r.c.ctx.Err() != nil {
				return
			}
			wait := b.Next()
			r.logger.Warn("destroying the instance of a vanished allocation failed; retrying", "error", err, "retry_in", wait)
			if !r.c.sleep(wait) {
				return
			}
		}
		r.logger.Info("destroyed the instance of a vanished allocation")
	}
	r.forget()
}
