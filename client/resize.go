package client

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// Same-host resize. A resize whose destination is the source's host
// gives that host a second allocation for the instance, with the new
// flavor, while the source's still manages it. Spawning would find the
// instance there and re-attach to it unchanged; instead the
// destination's runner resizes it in place (virt.Resizer: the libvirt
// driver grows the root and ephemeral disks, keeping what the guest
// wrote), and a revert resizes it back. Disks never shrink: the servers
// refuse a resize to a smaller root disk before anything starts, and a
// revert keeps the grown disks.

// flavorSize is the part of a flavor a driver's Resize changes, kept in
// the comparable allocState.
type flavorSize struct {
	VCPUs, MemoryMB, RootGB, EphemeralGB, SwapMB int
}

func sizeOf(f *structs.Flavor) flavorSize {
	if f == nil {
		return flavorSize{}
	}
	return flavorSize{f.VCPUs, f.MemoryMB, f.RootGB, f.EphemeralGB, f.SwapMB}
}

// inPlaceResize reports whether the runner's allocation is a same-host
// resize's destination: it carries a flavor of its own and another live
// runner of this host manages the instance (the source's), or it began
// resizing the instance before a restart (when the source's runner may
// not be running yet).
func (r *runner) inPlaceResize() bool {
	a := r.alloc
	return a.Flavor != nil && (r.st.ResizedFrom != flavorSize{} || r.c.instanceInUse(a.InstanceID, r))
}

// resizeInPlace gives the existing instance the allocation's flavor,
// recording the flavor it had first so that a revert can give it back.
// It returns false when there is nothing more to do now: the resize
// failed (the allocation is reported failed; the source's runner keeps
// the instance) or the client is shutting down (the next start resumes).
func (r *runner) resizeInPlace() bool {
	a, inst := r.alloc, r.inst
	ctx := r.c.ctx
	rz, err := optional[virt.Resizer](r.c.driver, r.c.driver.Capabilities().Resize, structs.HostCapabilityResize)
	if err != nil {
		r.fail(fmt.Sprintf("cannot resize the instance on its own host: %v", err))
		return false
	}
	if inst == nil {
		r.fail(fmt.Sprintf("allocation %s came without its instance", a.ID))
		return false
	}
	st := r.st
	if st.ResizedFrom == (flavorSize{}) {
		// Recorded before the driver changes anything; a restart in
		// between resizes again, which changes nothing more.
		st.ResizedFrom, st.InstanceID = sizeOf(inst.Flavor), a.InstanceID
		r.save(st)
	}
	r.logger.Info("resizing the instance in place", "vcpus", a.Flavor.VCPUs, "memory_mb", a.Flavor.MemoryMB, "root_gb", a.Flavor.RootGB)
	if err := rz.Resize(ctx, a.InstanceID, r.specFor(a.InstanceID, inst, a.Flavor)); err != nil {
		if ctx.Err() != nil {
			return false
		}
		r.logger.Error("in-place resize failed", "error", err)
		r.fail("resize failed: " + err.Error())
		return false
	}
	return true
}

// revertInPlace gives an instance this allocation resized in place its
// former CPUs, memory and swap back, before the allocation goes (a
// revert); its root and ephemeral disks keep their grown size and
// content. A failure is logged and the revert goes on: the source's
// allocation takes the instance back as it is. It returns false only
// when the client is shutting down.
func (r *runner) revertInPlace() bool {
	from := r.st.ResizedFrom
	if from == (flavorSize{}) {
		return true
	}
	a, inst := r.alloc, r.inst
	rz, ok := r.c.driver.(virt.Resizer)
	if !ok || inst == nil {
		return true // nothing was resized
	}
	cur := sizeOf(a.Flavor)
	f := &structs.Flavor{VCPUs: from.VCPUs, MemoryMB: from.MemoryMB, SwapMB: from.SwapMB,
		RootGB: max(from.RootGB, cur.RootGB), EphemeralGB: max(from.EphemeralGB, cur.EphemeralGB)}
	if inst.Resize != nil && inst.Resize.OldFlavor != nil {
		f.ExtraSpecs = inst.Resize.OldFlavor.ExtraSpecs
	}
	r.logger.Info("resizing the instance back in place", "vcpus", f.VCPUs, "memory_mb", f.MemoryMB)
	if err := rz.Resize(r.c.ctx, a.InstanceID, r.specFor(a.InstanceID, inst, f)); err != nil && !isNotFound(err) {
		if r.c.ctx.Err() != nil {
			return false
		}
		r.logger.Error("resizing back in place failed; the instance keeps the new flavor's size", "error", err)
	}
	st := r.st
	st.ResizedFrom = flavorSize{}
	r.save(st)
	return true
}

// instanceUsedBefore reports whether a live runner other than r manages
// instance id under an older allocation: for a same-host resize's
// destination going away, its source, which gets the instance back (a
// revert). A destination whose resize was confirmed has no older one
// left; it may have a newer one, the destination of the next resize.
func (c *Client) instanceUsedBefore(id string, r *runner) bool {
	r.mu.Lock()
	than := r.createIndex
	r.mu.Unlock()
	c.runnersMu.Lock()
	defer c.runnersMu.Unlock()
	for _, o := range c.runners {
		if o == r {
			continue
		}
		o.mu.Lock()
		older := o.live && o.instanceID == id && o.createIndex < than
		o.mu.Unlock()
		if older {
			return true
		}
	}
	return false
}

// instanceSuperseded reports whether a live runner other than r manages
// instance id under a newer allocation that is no longer held: the
// destination of a same-host resize, which owns the instance until a
// revert or confirm, so the source's runner, desired stopped, must not
// power off what the destination runs.
func (c *Client) instanceSuperseded(id string, r *runner) bool {
	r.mu.Lock()
	than := r.createIndex
	r.mu.Unlock()
	c.runnersMu.Lock()
	defer c.runnersMu.Unlock()
	for _, o := range c.runners {
		if o != r && o.supersedes(id, than) {
			return true
		}
	}
	return false
}

// supersedes reports whether the runner is live, released and manages
// instance id under an allocation created after index than.
func (r *runner) supersedes(id string, than uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live && !r.held && r.instanceID == id && r.createIndex > than
}
