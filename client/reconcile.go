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

// msgStopped is why an action other than rescue, unrescue, rebuild or
// reboot is refused while the instance is desired stopped.
const msgStopped = "instance is stopped"

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
	case a.DesiredState == structs.AllocDesiredHeld:
		// A move's destination only reserves resources: nothing to build
		// or report until the servers make it running or stopped.
		return
	case r.c.instanceSuperseded(a.InstanceID, r):
		// A same-host resize's destination owns the instance until a
		// revert or confirm (resize.go): the source, stopped, keeps away.
		return
	case r.st.MigratedAway:
		r.stayAway()
		return
	}
	var info *virt.InstanceInfo
	booted, ok := false, true
	if r.pendingAction() == structs.ActionRebuild {
		if info, ok = r.rebuild(); !ok {
			return
		}
		booted = info != nil
	}
	if info == nil {
		if info, booted, ok = r.locate(); !ok {
			return
		}
	}
	r.converge(info.PowerState, booted)
}

// locate finds the instance, spawning it if it was never built, and
// says whether this pass booted it. ok is false when there is nothing
// more to do now: it vanished (reported), the driver failed (retried at
// the next power sync) or the client is shutting down.
func (r *runner) locate() (info *virt.InstanceInfo, booted, ok bool) {
	a := r.alloc
	ctx := r.c.ctx
	info, err := r.c.driver.GetInfo(ctx, a.InstanceID)
	if err != nil && !isNotFound(err) {
		if ctx.Err() == nil {
			r.logger.Warn("cannot read the instance's state", "error", err)
		}
		return nil, false, false
	}
	switch {
	case err != nil && r.st.MigrateSeq != 0:
		// A live migration was under way when the agent stopped, and
		// the instance has left: the migration went through.
		r.logger.Info("the instance left while the agent was down during its live migration")
		r.migratedAway(r.st.PowerState)
		return nil, false, false
	case err != nil && r.spawnedBefore():
		r.disappeared()
		return nil, false, false
	case err != nil:
		if info = r.spawn(); info == nil {
			return nil, false, false
		}
		return info, true, true
	case !r.st.Spawned:
		// It exists: never spawn it again, whoever created it (a live
		// migration creates it on its destination, for one). A
		// same-host resize's destination resizes it instead (resize.go).
		if r.inPlaceResize() {
			if !r.resizeInPlace() {
				return nil, false, false
			}
			if info, err = r.c.driver.GetInfo(ctx, a.InstanceID); err != nil {
				if ctx.Err() == nil {
					r.logger.Warn("cannot read the instance's state after resizing it", "error", err)
				}
				return nil, false, false
			}
		}
		// A move's spawn cut short by a restart after the driver built
		// the instance still owes it its volumes' exports (attaching is
		// idempotent: a live migration's guest has them already).
		if err := r.attachMovedExports(); err != nil {
			if ctx.Err() == nil {
				r.logger.Error("attaching the instance's volumes failed", "error", err)
				r.fail("attach volumes: " + err.Error())
			}
			return nil, false, false
		}
		st := r.st
		st.Spawned, st.InstanceID = true, a.InstanceID
		r.save(st)
		r.logger.Info("re-attached to an existing instance", "power_state", info.PowerState)
	}
	return info, false, true
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
	a := r.alloc
	ctx := r.c.ctx
	spec, err := r.spec()
	if err != nil {
		if ctx.Err() != nil {
			return nil // resolving the image was cut short: the next start resumes
		}
		r.fail(err.Error())
		return nil
	}
	// Recorded before the driver creates anything, so a restart finds
	// the instance id and asks the driver before building again.
	st := r.st
	st.InstanceID = a.InstanceID
	st.ClientState, st.ClientDescription, st.PowerState = structs.AllocClientSpawning, "", virt.PowerNoState
	r.save(st)
	r.report(structs.AllocClientSpawning, "", virt.PowerNoState)
	r.logger.Info("spawning instance", "vcpus", spec.VCPUs, "memory_mb", spec.MemoryMB, "image_id", spec.ImageID)

	info, err := r.spawnDriver(spec)
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
	if err := r.attachMovedExports(); err != nil {
		if ctx.Err() != nil {
			r.logger.Info("volume attach interrupted by shutdown; the next start resumes it", "error", err)
			return nil
		}
		r.logger.Error("attaching the instance's volumes failed", "error", err)
		r.fail("attach volumes: " + err.Error())
		return nil
	}
	st = r.st
	st.Spawned = true
	r.save(st)
	if len(spec.Disks) > 0 {
		r.dropStagedDisks()
	}
	if a.RestoreImageID != "" {
		// Running from the snapshot's copy (or, on a driver that keeps
		// no disks, from the image): the snapshot has served.
		r.dropRestoredImage(a.RestoreImageID)
	}
	r.logger.Info("instance spawned", "power_state", info.PowerState, "driver_ref", info.DriverRef)
	return info
}

// spec is the driver's spec of the instance, with the allocation's
// flavor when it has one (a resize's destination spawns the new flavor)
// and the instance's otherwise.
func (r *runner) spec() (*virt.InstanceSpec, error) {
	a, inst := r.alloc, r.inst
	if inst == nil || (a.Flavor == nil && inst.Flavor == nil) {
		return nil, fmt.Errorf("allocation %s came without its instance or flavor", a.ID)
	}
	f := a.Flavor
	if f == nil {
		f = inst.Flavor
	}
	spec := r.specFor(a.InstanceID, inst, f)
	if root, files, _, ok := movedVolumes(a, inst, r.c.cfg.Ceph); ok {
		// The rest once spawned (volume_move.go).
		spec.Volumes = files
		if root != nil {
			spec.RootVolume = root
		}
	}
	spec.NICs = r.nics(a.InstanceID)
	path, err := r.c.imagePath(inst.ImageID)
	if err != nil {
		return nil, err
	}
	spec.ImagePath = path
	switch {
	case r.st.Spawned:
		// A rebuild starts from the image.
	case a.DiskSource != nil:
		// A move's destination on another host builds the instance on
		// its own disks, not fresh ones (diskmove.go).
		if spec.Disks, err = r.fetchDisks(a.DiskSource); err != nil {
			return nil, err
		}
	case a.RestoreImageID != "":
		// An unshelve restores the shelve's snapshot (unshelve.go).
		if spec.Disks, err = r.restoredDisks(a.RestoreImageID); err != nil {
			return nil, err
		}
	case a.EvacuateDisk != "":
		// An evacuation rebuilds on the disks left on shared storage
		// if they are there (evacuate.go).
		if spec.Disks, err = r.sharedDisks(a.EvacuateDisk, inst.ImageID); err != nil {
			return nil, err
		}
	}
	if inst.NeedsConfigDrive() {
		if spec.ConfigDrive, err = r.configDrive(inst); err != nil {
			return nil, err
		}
	}
	return spec, nil
}

// specFor is the driver's spec of an instance with flavor f.
func (r *runner) specFor(id string, inst *structs.Instance, f *structs.Flavor) *virt.InstanceSpec {
	ceph := r.c.cfg.Ceph
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
		UserData:        bytesOrNil(inst.UserData),
		RootVolume:      rootVolume(inst, ceph),
		Volumes:         dataVolumes(inst, ceph),
	}
}

// converge applies the desired power state and any pending action to an
// instance that exists, then reports. A guest that is off while desired
// running is powered on only for a desired change not yet acted upon: a
// guest that shut itself down is reported stopped, not restarted (as in
// Nova's _sync_power_states); a paused, suspended or rescued guest is
// left as it is. A guest running while desired stopped is always powered
// off, unless it runs a rescue image nobody asked to stop since.
func (r *runner) converge(power int, booted bool) {
	a := r.alloc
	fresh := a.AllocModifyIndex > r.st.HandledIndex
	p := &pass{power: power, booted: booted}
	var goOn bool
	switch a.DesiredState {
	case structs.AllocDesiredRunning:
		goOn = r.convergeRunning(p, fresh)
	case structs.AllocDesiredStopped:
		goOn = r.convergeStopped(p, fresh)
	default:
		r.logger.Warn("unknown desired state; leaving the instance alone", "desired", a.DesiredState)
		return
	}
	if !goOn || (p.acted && !r.refresh(p)) {
		return
	}
	// Paused and suspended guests still count as running (Nova keeps
	// vm_state active for them); PowerState carries the detail.
	clientState := structs.AllocClientRunning
	if poweredOff(p.power) {
		clientState = structs.AllocClientStopped
	}
	st := r.st
	desc := p.desc
	if !fresh && !p.acted && st.ClientState == clientState {
		desc = st.ClientDescription // nothing happened: keep the last word
	}
	if !fresh && !p.acted && (st.ClientState != clientState || st.PowerState != p.power) {
		r.logger.Warn("power state changed on the hypervisor", "power_state", p.power, "was", st.PowerState, "desired", a.DesiredState)
	}
	st.HandledIndex = max(st.HandledIndex, a.AllocModifyIndex)
	if p.done {
		st.ActionDoneSeq, st.ActionError = a.ActionSeq, p.actionErr
	}
	if p.rescued != nil {
		st.Rescued = *p.rescued
	}
	st.ClientState, st.ClientDescription, st.PowerState = clientState, desc, p.power
	r.save(st)
	r.report(clientState, desc, p.power)
}

// convergeRunning powers on a powered-off guest for a fresh desired
// change, then carries out the pending action. It returns false when
// converge must stop: shutdown, or the instance migrated away.
func (r *runner) convergeRunning(p *pass, fresh bool) bool {
	ctx := r.c.ctx
	action := r.pendingAction()
	// A rescue boots the guest itself.
	if poweredOff(p.power) && fresh && !p.booted && action != structs.ActionRescue {
		r.logger.Info("powering on", "power_state", p.power)
		p.acted = true
		if err := r.c.driver.PowerOn(ctx, r.alloc.InstanceID); err != nil {
			if ctx.Err() != nil {
				return false
			}
			r.logger.Error("power on failed", "error", err)
			p.desc = "power on failed: " + err.Error()
		} else {
			p.booted = true
		}
	}
	switch action {
	case "":
		return true
	case structs.ActionLiveMigrate:
		// The report after it carries the power the guest left in.
		if p.acted && !r.refresh(p) {
			return false
		}
		return r.liveMigrate(p)
	}
	return r.runAction(p, action)
}

// convergeStopped carries out the actions a stopped instance takes, then
// powers off a guest that is not off (paused and suspended ones too). A
// rescued guest stays up when its rescue came with this desired state or
// nothing new was asked since; a fresh stop ends the rescue first. It
// returns false on shutdown.
func (r *runner) convergeStopped(p *pass, fresh bool) bool {
	ctx := r.c.ctx
	switch action := r.pendingAction(); action {
	case "":
	case structs.ActionRescue, structs.ActionUnrescue:
		// Nova rescues SHUTOFF instances: the rescue boots the guest,
		// which then stays up until it is unrescued.
		if !r.runAction(p, action) || (p.acted && !r.refresh(p)) {
			return false
		}
	case structs.ActionRebootSoft, structs.ActionRebootHard:
		r.logger.Info("not rebooting a stopped instance", "action_seq", r.alloc.ActionSeq)
		p.done = true
	case structs.ActionSnapshot, structs.ActionAttachVolume, structs.ActionDetachVolume:
		if !r.runAction(p, action) {
			return false
		}
	default:
		r.logger.Warn("refusing an action on a stopped instance", "action", action, "action_seq", r.alloc.ActionSeq)
		p.done = true
		p.fail(action, msgStopped)
	}
	rescued := r.st.Rescued
	if p.rescued != nil {
		rescued = *p.rescued
	}
	if poweredOff(p.power) || (rescued && (!fresh || p.rescued != nil)) {
		return true
	}
	if rescued && !r.endRescue(p) {
		return false
	}
	r.logger.Info("powering off", "power_state", p.power)
	p.acted = true
	if err := r.c.driver.PowerOff(ctx, r.alloc.InstanceID, powerOffTimeout); err != nil {
		if ctx.Err() != nil {
			return false
		}
		r.logger.Error("power off failed", "error", err)
		p.desc = "power off failed: " + err.Error()
	}
	return true
}

// endRescue unrescues a guest that a fresh stop finds rescued: the
// servers take a stopped instance as out of rescue, so its next start
// must boot its own disk. A failure is logged and the stop goes on. It
// returns false on shutdown.
func (r *runner) endRescue(p *pass) bool {
	r.logger.Info("ending the rescue of an instance desired stopped")
	if err := r.driverAction(p, structs.ActionUnrescue); err != nil {
		if r.c.ctx.Err() != nil {
			return false
		}
		r.logger.Warn("cannot end the rescue; powering off the rescued guest", "error", err)
	}
	return true
}

// refresh reads the instance's power state into p after acting on it;
// it returns false when the client is shutting down.
func (r *runner) refresh(p *pass) bool {
	info, err := r.c.driver.GetInfo(r.c.ctx, r.alloc.InstanceID)
	switch {
	case err == nil:
		p.power = info.PowerState
	case r.c.ctx.Err() != nil:
		return false
	default:
		r.logger.Warn("cannot read the instance's state after acting on it", "error", err)
	}
	return true
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
	st.Rescued = false
	if action := r.pendingAction(); action != "" {
		st.ActionDoneSeq, st.ActionError = a.ActionSeq, msgDisappeared
		if action == structs.ActionRebootSoft || action == structs.ActionRebootHard {
			st.ActionError = "" // a stopped instance's reboot is moot, as in converge
		}
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
	// A same-host resize's destination stays live, owning the instance,
	// until it has handed it back (revertInPlace).
	if r.st.ResizedFrom == (flavorSize{}) {
		r.setLive(false)
	}
	a := r.alloc
	if a.ClientState == structs.AllocClientDeleted && !r.hasState {
		r.deleted = true // done before a restart
		return
	}
	ctx := r.c.ctx
	id := a.InstanceID
	// An instance that migrated away is not destroyed: if it is here, it
	// came back under another allocation (see destroyVanished). One a
	// same-host resize's destination resized in place goes back to the
	// source's allocation with its former flavor.
	if id != "" && r.c.instanceUsedBefore(id, r) && !r.revertInPlace() {
		return
	}
	r.setLive(false)
	if a.DiskSource != nil || a.RestoreImageID != "" {
		r.dropStagedDisks()
	}
	if id != "" && !r.st.MigratedAway && !r.c.instanceInUse(id, r) {
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
