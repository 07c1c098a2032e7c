package server

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
)

// groupPass is one reconcile pass over a group: the diff of its members
// against its target, the members kept in their slots, and what the
// pass is waiting for or could not do, which its deployment reports.
type groupPass struct {
	r      *groupReconciler
	g      *structs.InstanceGroup
	t      *groupTarget
	d      *groupDiff
	policy structs.GroupUpdate
	// keepers are the members that stay in their slots (by slot).
	keepers map[int]*memberState
	// busy counts the slots not yet healthy, which the rolling update's
	// max_parallel includes.
	busy              int
	waiting, problems []string
}

func (p *groupPass) note(format string, args ...any) {
	p.problems = append(p.problems, fmt.Sprintf(format, args...))
}

// deleteExtra deletes members beyond the count, or of another name, and
// purges a member being deleted on a host that went down; it keeps the
// others in their slots.
func (p *groupPass) deleteExtra() {
	for _, m := range p.d.members {
		if (m.action == structs.PlanDestroy && !m.terminating) || (m.terminating && m.lost) {
			if err := p.r.delete(m.inst); err != nil {
				p.note("deleting %s: %v", m.inst.Name, err)
			}
		}
	}
	p.keepers = map[int]*memberState{}
	for _, m := range p.d.members {
		if m.slot > 0 && !m.terminating && m.action != structs.PlanDestroy {
			p.keepers[m.slot] = m
		}
	}
}

// replaceFailed deletes failed or lost members; their slot is created
// again once they are gone, after the slot's back-off.
func (p *groupPass) replaceFailed() {
	for n := 1; n <= p.g.Spec.Count; n++ {
		m := p.keepers[n]
		if m == nil || !(m.failed || m.lost) {
			continue
		}
		key := slotKey(p.g.Name, n)
		if !p.r.ready(p.r.slots, key) {
			continue
		}
		if err := p.r.delete(m.inst); err != nil {
			p.note("replacing %s: %v", m.inst.Name, err)
			continue
		}
		st := p.r.failed(p.r.slots, key, m.inst.Name+": "+m.reason)
		p.r.s.logger.Info("replacing instance group member", "group", p.g.Name, "member", m.inst.Name, "reason", m.reason, "failures", st.failures)
		delete(p.keepers, n)
		p.d.occupied[n] = true
	}
}

// createMissing creates the slots no member holds.
func (p *groupPass) createMissing() {
	for _, n := range p.d.missing {
		if p.d.occupied[n] || !p.r.ready(p.r.slots, slotKey(p.g.Name, n)) {
			continue
		}
		if err := p.r.create(p.g, p.t, n); err != nil {
			p.r.failed(p.r.slots, slotKey(p.g.Name, n), err.Error())
			p.note("creating %s: %v", structs.GroupMemberName(p.g.Name, n), err)
		}
	}
}

// healthy: a member is healthy once it matches the version and has been
// ACTIVE (or, with health_check "none", stable) for min_healthy_time.
func (p *groupPass) healthy(m *memberState) bool {
	r := p.r
	if m == nil {
		return false
	}
	if m.resize || m.rebuild || m.recreate || m.failed || m.lost || !m.inst.Stable() {
		delete(r.healthySince, m.inst.ID)
		return false
	}
	if p.policy.HealthCheck == structs.GroupHealthNone {
		return m.inst.VMState != structs.VMStateBuilding && m.inst.VMState != structs.VMStateError
	}
	if m.inst.Status() != "ACTIVE" {
		delete(r.healthySince, m.inst.ID)
		return false
	}
	since, ok := r.healthySince[m.inst.ID]
	if !ok {
		since = r.now
		r.healthySince[m.inst.ID] = since
	}
	return r.now.Sub(since) >= p.policy.MinHealthyTime
}

// countBusy counts the slots not yet healthy and what each waits for,
// and forgets the back-offs of the healthy ones.
func (p *groupPass) countBusy() {
	for n := 1; n <= p.g.Spec.Count; n++ {
		m := p.keepers[n]
		switch {
		case m == nil:
			p.busy++
			p.waiting = append(p.waiting, structs.GroupMemberName(p.g.Name, n)+" to be created")
		case m.resize || m.rebuild || m.recreate:
			if !m.inst.Stable() {
				p.busy++
				p.waiting = append(p.waiting, m.inst.Name+" to finish "+taskLabel(m.inst))
			}
		case p.healthy(m):
			delete(p.r.slots, slotKey(p.g.Name, n))
			for _, key := range []string{m.inst.ID, m.inst.ID + "/confirm", m.inst.ID + "/metadata"} {
				delete(p.r.ops, key)
			}
		default:
			p.busy++
			p.waiting = append(p.waiting, m.inst.Name+" to be healthy")
		}
	}
}

// settleResizes keeps finished resizes, or goes back when the flavor is
// not the version's any more.
func (p *groupPass) settleResizes() {
	for n := 1; n <= p.g.Spec.Count; n++ {
		m := p.keepers[n]
		if m == nil || m.inst.VMState != structs.VMStateResized || m.inst.Task != nil || m.inst.TaskState != "" ||
			!p.r.ready(p.r.ops, m.inst.ID+"/confirm") {
			continue
		}
		op := structs.OpConfirmResize
		if m.resize {
			op = structs.OpRevertResize
		}
		if err := p.r.task(m.inst, op, nil); err != nil {
			p.r.failed(p.r.ops, m.inst.ID+"/confirm", err.Error())
			p.note("%s of %s: %v", op, m.inst.Name, err)
		}
	}
}

// applyMetadata applies metadata changes in place to every member at
// once.
func (p *groupPass) applyMetadata() {
	for n := 1; n <= p.g.Spec.Count; n++ {
		m := p.keepers[n]
		if m == nil || !m.metadata || !m.inst.Stable() || !contains(metadataStates, m.inst.VMState) || !p.r.ready(p.r.ops, m.inst.ID+"/metadata") {
			continue
		}
		if err := p.r.updateMetadata(m.inst, p.g.Spec.Metadata); err != nil {
			p.r.failed(p.r.ops, m.inst.ID+"/metadata", err.Error())
			p.note("updating the metadata of %s: %v", m.inst.Name, err)
		}
	}
}

// rollUpdates resizes, rebuilds or re-creates at most max_parallel
// members at a time, counting those not yet healthy.
func (p *groupPass) rollUpdates() {
	budget := p.policy.MaxParallel - p.busy
	if p.policy.MaxParallel == 0 {
		budget = p.g.Spec.Count
	}
	for n := 1; n <= p.g.Spec.Count && budget > 0; n++ {
		m := p.keepers[n]
		if m == nil || !(m.resize || m.rebuild || m.recreate) || !m.inst.Stable() || m.inst.VMState == structs.VMStateResized {
			continue
		}
		if !p.r.ready(p.r.ops, m.inst.ID) {
			continue
		}
		if m.recreate && !m.rebuild && !m.resize && m.inst.InstanceGroupVersion == p.g.Version {
			// Created from this very version yet different from it: deleting
			// it would only create its twin again.
			p.note("%s differs from version %d it was created from (%s); leaving it", m.inst.Name, p.g.Version, fieldNames(m.fields))
			continue
		}
		what, err := p.update(m)
		// An update that is retried failed before: its back-off grows
		// from the second attempt on.
		st := p.r.failed(p.r.ops, m.inst.ID, what+" of "+m.inst.Name)
		if err != nil {
			st.last = fmt.Sprintf("%s of %s: %v", what, m.inst.Name, err)
			p.note("%s", st.last)
			continue
		}
		p.r.s.logger.Info("updating instance group member", "group", p.g.Name, "member", m.inst.Name, "op", what, "version", p.g.Version)
		budget--
		p.busy++
		p.waiting = append(p.waiting, m.inst.Name+" to finish its "+what)
	}
}

// update starts a member's update and names it.
func (p *groupPass) update(m *memberState) (string, error) {
	switch {
	case m.recreate:
		return "re-create", p.r.delete(m.inst)
	case m.rebuild:
		return "rebuild", p.r.task(m.inst, structs.OpRebuild, func(req *structs.InstanceTaskRequest) {
			req.ImageID, req.ImageProperties = p.t.ImageID, p.t.ImageProperties
		})
	}
	return "resize", p.r.task(m.inst, structs.OpResize, func(req *structs.InstanceTaskRequest) { req.FlavorID = p.t.Flavor.ID })
}
