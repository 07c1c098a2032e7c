package client

import (
	"fmt"
	"maps"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// powerOffTimeout is how long a guest gets to shut down cleanly.
const powerOffTimeout = 60 * time.Second

// msgDisappeared describes an instance that vanished behind our back.
const msgDisappeared = "instance disappeared from the hypervisor"

// reconcile moves the instance one step towards the desired state and
// reports where it ended up. It runs on every update of the allocation
// and on every power sync.
func (r *runner) reconcile() {
	a := r.alloc
	switch {
	case r.deleted:
		return
	case a.DesiredState == structs.AllocDesiredDeleted:
		r.delete()
		return
	case r.terminal():
		r.settle()
		return
	case a.InstanceID == "":
		r.fail(fmt.Sprintf("allocation %s has no instance", a.ID))
		return
	}
	ctx := r.c.ctx
	info, err := r.c.driver.GetInfo(ctx, a.InstanceID)
	if err != nil && !isNotFound(err) {
		if ctx.Err() == nil {
			r.logger.Warn("cannot read the instance's state", "error", err)
		}
		return
	}
	booted := false
	switch {
	case err != nil && r.spawnedBefore():
		r.disappeared()
		return
	case err != nil:
		if info = r.spawn(); info == nil {
			return
		}
		booted = true
	case !r.st.Spawned:
		// It exists: never spawn it again, whoever created it.
		st := r.st
		st.Spawned, st.InstanceID = true, a.InstanceID
		r.save(st)
		r.logger.Info("re-attached to an existing instance", "power_state", info.PowerState)
	}
	r.converge(info.PowerState, booted)
}

// terminal reports whether the allocation is failed or deleted, by our
// own report or by the servers' word.
func (r *runner) terminal() bool {
	for _, s := range []string{r.st.ClientState, r.alloc.ClientState} {
		if s == structs.AllocClientFailed || s == structs.AllocClientDeleted {
			return true
		}
	}
	return false
}

// spawnedBefore reports whether the instance existed once, so its
// absence means it disappeared rather than that it is still to be built.
func (r *runner) spawnedBefore() bool {
	if r.st.Spawned {
		return true
	}
	// Without a local record (a wiped data dir) the servers' word counts.
	s := r.alloc.ClientState
	return !r.hasState && (s == structs.AllocClientRunning || s == structs.AllocClientStopped)
}

// spawn builds the instance and returns its info, or nil if it failed
// (reported) or was interrupted by shutdown (resumed at the next start).
func (r *runner) spawn() *virt.InstanceInfo {
	a, inst := r.alloc, r.inst
	ctx := r.c.ctx
	if inst == nil || inst.Flavor == nil {
		r.fail(fmt.Sprintf("allocation %s came without its instance or flavor", a.ID))
		return nil
	}
	// Recorded before the driver creates anything, so a restart finds
	// the instance id and asks the driver before building again.
	st := r.st
	st.InstanceID = a.InstanceID
	st.ClientState, st.ClientDescription, st.PowerState = structs.AllocClientSpawning, "", virt.PowerNoState
	r.save(st)
	r.report(structs.AllocClientSpawning, "", virt.PowerNoState)
	r.logger.Info("spawning instance", "flavor", inst.Flavor.Name, "image_id", inst.ImageID)

	info, err := r.c.driver.Spawn(ctx, specFor(a.InstanceID, inst))
	if err != nil {
		if ctx.Err() != nil {
			r.logger.Info("spawn interrupted by shutdown; the next start resumes it", "error", err)
			return nil
		}
		r.logger.Error("spawn failed", "error", err)
		r.fail(err.Error())
		return nil
	}
	if info == nil {
		info = &virt.InstanceInfo{ID: a.InstanceID, PowerState: virt.PowerRunning}
	}
	st = r.st
	st.Spawned = true
	r.save(st)
	r.logger.Info("instance spawned", "power_state", info.PowerState, "driver_ref", info.DriverRef)
	return info
}

// specFor is the driver's spec of an instance, from its flavor.
func specFor(id string, inst *structs.Instance) *virt.InstanceSpec {
	f := inst.Flavor
	return &virt.InstanceSpec{
		ID:              id,
		Name:            inst.Name,
		VCPUs:           f.VCPUs,
		MemoryMB:        f.MemoryMB,
		RootGB:          f.RootGB,
		EphemeralGB:     f.EphemeralGB,
		SwapMB:          f.SwapMB,
		ImageID:         inst.ImageID,
		ImageProperties: maps.Clone(inst.ImageProperties),
		ExtraSpecs:      maps.Clone(f.ExtraSpecs),
		Metadata:        maps.Clone(inst.Metadata),
	}
}

// converge applies the desired power state and any pending reboot to an
// instance that exists, then reports. A guest that is off while desired
// running is powered on only for a desired change not yet acted upon: a
// guest that shut itself down is reported stopped, not restarted (as in
// Nova's _sync_power_states). A guest running while desired stopped is
// always powered off.
func (r *runner) converge(power int, booted bool) {
	a := r.alloc
	ctx := r.c.ctx
	id := a.InstanceID
	st := r.st
	fresh := a.AllocModifyIndex > st.HandledIndex
	rebootPending := (a.PendingAction == structs.ActionRebootSoft || a.PendingAction == structs.ActionRebootHard) &&
		a.ActionSeq > st.ActionDoneSeq
	desc := ""
	acted := false
	switch a.DesiredState {
	case structs.AllocDesiredRunning:
		if power != virt.PowerRunning && fresh && !booted {
			r.logger.Info("powering on", "power_state", power)
			acted = true
			if err := r.c.driver.PowerOn(ctx, id); err != nil {
				if ctx.Err() != nil {
					return
				}
				r.logger.Error("power on failed", "error", err)
				desc = "power on failed: " + err.Error()
			} else {
				booted = true
			}
		}
		if rebootPending {
			if booted {
				r.logger.Info("reboot satisfied by the boot", "action_seq", a.ActionSeq)
			} else {
				hard := a.PendingAction == structs.ActionRebootHard
				r.logger.Info("rebooting", "hard", hard, "action_seq", a.ActionSeq)
				acted = true
				if err := r.c.driver.Reboot(ctx, id, hard); err != nil {
					if ctx.Err() != nil {
						return
					}
					r.logger.Error("reboot failed", "hard", hard, "error", err)
					desc = "reboot failed: " + err.Error()
				}
			}
			st.ActionDoneSeq = a.ActionSeq
		}
	case structs.AllocDesiredStopped:
		if !poweredOff(power) {
			r.logger.Info("powering off", "power_state", power)
			acted = true
			if err := r.c.driver.PowerOff(ctx, id, powerOffTimeout); err != nil {
				if ctx.Err() != nil {
					return
				}
				r.logger.Error("power off failed", "error", err)
				desc = "power off failed: " + err.Error()
			}
		}
		if rebootPending {
			r.logger.Info("not rebooting a stopped instance", "action_seq", a.ActionSeq)
			st.ActionDoneSeq = a.ActionSeq
		}
	default:
		r.logger.Warn("unknown desired state; leaving the instance alone", "desired", a.DesiredState)
		return
	}
	if acted {
		info, err := r.c.driver.GetInfo(ctx, id)
		switch {
		case err == nil:
			power = info.PowerState
		case ctx.Err() != nil:
			return
		default:
			r.logger.Warn("cannot read the instance's state after acting on it", "error", err)
		}
	}
	// Paused and suspended guests still count as running (Nova keeps
	// vm_state active for them); PowerState carries the detail.
	clientState := structs.AllocClientRunning
	if poweredOff(power) {
		clientState = structs.AllocClientStopped
	}
	if !fresh && !acted && r.st.ClientState == clientState {
		desc = r.st.ClientDescription // nothing happened: keep the last word
	}
	if !fresh && !acted && (r.st.ClientState != clientState || r.st.PowerState != power) {
		r.logger.Warn("power state changed on the hypervisor", "power_state", power, "was", r.st.PowerState, "desired", a.DesiredState)
	}
	st.HandledIndex = max(st.HandledIndex, a.AllocModifyIndex)
	st.ClientState, st.ClientDescription, st.PowerState = clientState, desc, power
	r.save(st)
	r.report(clientState, desc, power)
}

// poweredOff reports whether a guest in this power state is not running
// at all (paused and suspended guests still hold their memory).
func poweredOff(power int) bool {
	return power == virt.PowerShutdown || power == virt.PowerCrashed || power == virt.PowerNoState
}

// disappeared handles an instance that once existed and is gone: failed
// if it should be running (the servers reschedule), stopped otherwise.
func (r *runner) disappeared() {
	a := r.alloc
	if a.DesiredState == structs.AllocDesiredRunning {
		r.logger.Error("instance disappeared from the hypervisor; reporting the allocation failed")
		r.fail(msgDisappeared)
		return
	}
	st := r.st
	if st.ClientDescription != msgDisappeared {
		r.logger.Warn("stopped instance disappeared from the hypervisor")
	}
	st.ClientState, st.ClientDescription, st.PowerState = structs.AllocClientStopped, msgDisappeared, virt.PowerNoState
	st.HandledIndex = max(st.HandledIndex, a.AllocModifyIndex)
	if a.ActionSeq > st.ActionDoneSeq {
		st.ActionDoneSeq = a.ActionSeq
	}
	r.save(st)
	r.report(structs.AllocClientStopped, msgDisappeared, virt.PowerNoState)
}

// fail records the allocation as failed with desc, then settles it.
func (r *runner) fail(desc string) {
	st := r.st
	st.ClientState, st.ClientDescription, st.PowerState = structs.AllocClientFailed, desc, virt.PowerNoState
	r.save(st)
	r.settle()
}

// settle deals with a terminal allocation: a terminal allocation consumes
// nothing, so its instance must not run here (as Nova destroys evacuated
// instances); and the servers must have heard it is terminal.
func (r *runner) settle() {
	r.setLive(false)
	if r.settled {
		return
	}
	a := r.alloc
	ctx := r.c.ctx
	st := r.st
	if st.ClientState != structs.AllocClientFailed && st.ClientState != structs.AllocClientDeleted {
		st.ClientState, st.ClientDescription, st.PowerState = a.ClientState, a.ClientDescription, virt.PowerNoState
	}
	r.save(st)
	if id := a.InstanceID; id != "" && !r.c.instanceInUse(id, r) {
		_, err := r.c.driver.GetInfo(ctx, id)
		if err == nil {
			r.logger.Warn("destroying the instance of a terminal allocation", "client_state", st.ClientState)
			err = r.c.driver.Destroy(ctx, id)
		}
		if err != nil && !isNotFound(err) {
			if ctx.Err() == nil {
				r.logger.Warn("cannot clean up the instance of a terminal allocation; retrying at the next power sync", "error", err)
			}
			return
		}
	}
	if r.last.ClientState != st.ClientState {
		r.report(st.ClientState, st.ClientDescription, virt.PowerNoState)
	}
	r.settled = true
}

// delete destroys the instance of an allocation desired deleted, reports
// it deleted and forgets it. A failed destroy is retried at the next
// power sync.
func (r *runner) delete() {
	r.setLive(false)
	a := r.alloc
	if a.ClientState == structs.AllocClientDeleted && !r.hasState {
		r.deleted = true // done before a restart
		return
	}
	ctx := r.c.ctx
	id := a.InstanceID
	if id != "" && !r.c.instanceInUse(id, r) {
		r.logger.Info("destroying instance")
		if err := r.c.driver.Destroy(ctx, id); err != nil && !isNotFound(err) {
			if ctx.Err() != nil {
				return
			}
			r.logger.Error("destroy failed; retrying at the next power sync", "error", err)
			return
		}
	}
	r.forget()
	r.st.ClientState, r.st.ClientDescription, r.st.PowerState = structs.AllocClientDeleted, "", virt.PowerNoState
	r.report(structs.AllocClientDeleted, "", virt.PowerNoState)
	r.deleted = true
	r.logger.Info("instance destroyed; allocation deleted")
}
