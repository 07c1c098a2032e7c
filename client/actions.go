package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// pass is what one converge pass did to the instance; converge applies it
// to the local state and reports it at the end.
type pass struct {
	power  int  // the instance's power state, re-read after acting
	booted bool // spawned or powered on during this pass
	acted  bool // a driver call changed the instance
	desc   string
	// done says the pending action was carried out or refused, and
	// actionErr why it failed ("" if it did not).
	done      bool
	actionErr string
	// rescued, when set, is the instance's new rescue status.
	rescued *bool
}

// fail records that action failed with msg.
func (p *pass) fail(action, msg string) {
	p.actionErr = msg
	p.desc = strings.ReplaceAll(action, "_", " ") + " failed: " + msg
}

// pendingAction returns the action the servers asked for and the agent
// has not carried out yet, or "".
func (r *runner) pendingAction() string {
	a := r.alloc
	if a.PendingAction == "" || a.ActionSeq <= r.st.ActionDoneSeq {
		return ""
	}
	return a.PendingAction
}

// unsupportedError is an action the driver cannot do. Its text is what
// the servers pass on to the user.
type unsupportedError struct{ driver, what string }

func (e *unsupportedError) Error() string { return e.driver + " driver does not support " + e.what }
func (e *unsupportedError) Unwrap() error { return virt.ErrNotSupported }

// optional returns d as the optional interface I if it implements it and
// claims the capability, else an error naming the capability what.
func optional[I any](d virt.Driver, on bool, what string) (I, error) {
	i, ok := d.(I)
	if !ok || !on {
		var zero I
		return zero, &unsupportedError{driver: d.Name(), what: what}
	}
	return i, nil
}

// runAction carries out action and records it done in p, with its error
// if it failed. It returns false when shutdown interrupted it: it is not
// recorded, and the next start carries it out again.
func (r *runner) runAction(p *pass, action string) bool {
	a := r.alloc
	r.logger.Info("carrying out action", "action", action, "action_arg", a.ActionArg, "action_seq", a.ActionSeq)
	err := r.driverAction(p, action)
	if err != nil && r.c.ctx.Err() != nil {
		return false
	}
	p.done = true
	if err != nil {
		r.logger.Error("action failed", "action", action, "action_seq", a.ActionSeq, "error", err)
		p.fail(action, err.Error())
	}
	return true
}

// driverAction makes the driver call of an action that leaves the
// instance here (every one but rebuild and live_migrate).
func (r *runner) driverAction(p *pass, action string) error {
	ctx, d, id := r.c.ctx, r.c.driver, r.alloc.InstanceID
	caps := d.Capabilities()
	switch action {
	case structs.ActionRebootSoft, structs.ActionRebootHard:
		if p.booted {
			r.logger.Info("reboot satisfied by the boot", "action_seq", r.alloc.ActionSeq)
			return nil
		}
		p.acted = true
		return d.Reboot(ctx, id, action == structs.ActionRebootHard)
	case structs.ActionPause, structs.ActionUnpause:
		pa, err := optional[virt.Pauser](d, caps.Pause, structs.HostCapabilityPause)
		if err != nil {
			return err
		}
		p.acted = true
		if action == structs.ActionPause {
			return pa.Pause(ctx, id)
		}
		return pa.Unpause(ctx, id)
	case structs.ActionSuspend, structs.ActionResume:
		su, err := optional[virt.Suspender](d, caps.Suspend, structs.HostCapabilitySuspend)
		if err != nil {
			return err
		}
		p.acted = true
		if action == structs.ActionSuspend {
			return su.Suspend(ctx, id)
		}
		return su.Resume(ctx, id)
	case structs.ActionRescue, structs.ActionUnrescue:
		rs, err := optional[virt.Rescuer](d, caps.Rescue, structs.HostCapabilityRescue)
		if err != nil {
			return err
		}
		p.acted = true
		rescue := action == structs.ActionRescue
		if rescue {
			var spec virt.RescueSpec
			if spec, err = r.rescueSpec(); err != nil {
				return err
			}
			err = rs.Rescue(ctx, id, spec)
		} else {
			err = rs.Unrescue(ctx, id)
		}
		if err == nil {
			p.rescued = &rescue
		}
		return err
	case structs.ActionSnapshot:
		return r.snapshot()
	case structs.ActionAttachVolume, structs.ActionDetachVolume:
		p.acted = true
		return r.volumeAction(action)
	case structs.ActionSwapVolume:
		p.acted = true
		return r.swapVolume()
	case structs.ActionTriggerCrashDump:
		cd, err := optional[virt.CrashDumper](d, caps.CrashDump, structs.HostCapabilityCrashDump)
		if err != nil {
			return err
		}
		p.acted = true
		return cd.TriggerCrashDump(ctx, id)
	}
	return fmt.Errorf("unknown action %q", action)
}

// liveMigrate sends the instance to the host whose address is ActionArg.
// On success the instance has left: the allocation is recorded migrated
// away and reported with the action done, and it returns false so that
// converge stops. A failure is recorded in p like any action's, and the
// instance stays managed here.
func (r *runner) liveMigrate(p *pass) bool {
	a := r.alloc
	ctx, d := r.c.ctx, r.c.driver
	lm, err := optional[virt.LiveMigrator](d, d.Capabilities().LiveMigrate, structs.HostCapabilityLiveMigrate)
	if err == nil && a.ActionArg == "" {
		err = errors.New("no destination given")
	}
	var to virt.LiveMigrationTarget
	if err == nil {
		to, err = r.liveTarget() // liveprepare.go
	}
	if err == nil {
		// Recorded first: a restart that finds the instance gone then
		// knows it migrated rather than disappeared.
		st := r.st
		st.MigrateSeq = a.ActionSeq
		r.save(st)
		r.logger.Info("live-migrating", "destination", a.ActionArg, "action_seq", a.ActionSeq)
		if err = r.sendLive(lm, to); err == nil {
			r.migratedAway(p.power)
			return false
		}
		if ctx.Err() != nil {
			return false // the next start finds out where the instance is
		}
		st = r.st
		st.MigrateSeq = 0
		r.save(st)
	}
	r.logger.Error("live migration failed; the instance stays here", "destination", a.ActionArg, "error", err)
	p.done, p.acted = true, true // acted: re-read the power of a guest the attempt may have paused
	p.fail(structs.ActionLiveMigrate, err.Error())
	return true
}

// migratedAway records that the instance left for another host and
// reports the live migration done: running, with the power state the
// guest left in. From then on nothing happens here until the servers
// delete the allocation, which they do as they record this report.
func (r *runner) migratedAway(power int) {
	a := r.alloc
	r.setLive(false)
	st := r.st
	st.ActionDoneSeq, st.ActionError = max(st.ActionDoneSeq, st.MigrateSeq), ""
	st.MigratedAway, st.MigrateSeq, st.Rescued = true, 0, false
	st.HandledIndex = max(st.HandledIndex, a.AllocModifyIndex)
	st.ClientState, st.ClientDescription, st.PowerState = structs.AllocClientRunning, "", power
	r.save(st)
	r.logger.Info("instance migrated away; waiting for the servers to drop the allocation", "destination", a.ActionArg)
	r.report(st.ClientState, st.ClientDescription, st.PowerState)
}

// stayAway handles an allocation whose instance migrated away: its
// absence is expected, so nothing is spawned, powered or reported
// disappeared; only a report lost to a restart is sent again.
func (r *runner) stayAway() {
	r.setLive(false)
	r.report(r.st.ClientState, r.st.ClientDescription, r.st.PowerState)
}

// rebuild carries out a pending rebuild: it destroys the instance and
// spawns it again from the current spec (the servers changed the image
// before asking). Each step is persisted, so a restart resumes where it
// stopped, never destroys the new instance, and never reports the old
// one disappeared. It returns the new instance; nil with ok true when
// the rebuild was refused or failed before destroying anything (the old
// instance is then managed as before); ok false when there is nothing
// more to do now (failed and reported, to retry, or shutdown).
func (r *runner) rebuild() (info *virt.InstanceInfo, ok bool) {
	a := r.alloc
	ctx := r.c.ctx
	spec, err := r.spec()
	if err != nil {
		r.logger.Error("cannot rebuild", "error", err)
		r.endRebuild(err.Error(), r.st.Spawned)
		return nil, true
	}
	if r.st.RebuildSeq != a.ActionSeq {
		st := r.st
		st.RebuildSeq, st.RebuildDestroyed = a.ActionSeq, false
		r.save(st)
		r.logger.Info("rebuilding instance", "image_id", spec.ImageID, "action_seq", a.ActionSeq)
	}
	if !r.st.RebuildDestroyed {
		if err := r.c.driver.Destroy(ctx, a.InstanceID); err != nil && !isNotFound(err) {
			if ctx.Err() != nil {
				return nil, false
			}
			r.logger.Error("rebuild: destroying the old instance failed", "error", err)
			r.endRebuild(err.Error(), true)
			return nil, true
		}
		st := r.st
		st.RebuildDestroyed, st.Spawned, st.Rescued = true, false, false
		r.save(st)
	}
	// The old instance is gone: one found now is the new one.
	info, err = r.c.driver.GetInfo(ctx, a.InstanceID)
	switch {
	case err == nil:
		r.logger.Info("rebuild: the new instance was spawned before a restart")
	case !isNotFound(err):
		if ctx.Err() == nil {
			r.logger.Warn("rebuild: cannot read the instance's state; retrying at the next power sync", "error", err)
		}
		return nil, false
	default:
		if err := r.reimageBootVolume(spec); err != nil {
			if ctx.Err() != nil {
				return nil, false
			}
			r.logger.Error("rebuild: reimaging the boot volume failed", "error", err)
			r.endRebuild(err.Error(), false)
			r.fail("rebuild failed: " + err.Error())
			return nil, false
		}
		if info, err = r.spawnDriver(spec); err != nil {
			if ctx.Err() != nil {
				r.logger.Info("rebuild interrupted by shutdown; the next start resumes it", "error", err)
				return nil, false
			}
			r.logger.Error("rebuild: spawn failed", "error", err)
			r.endRebuild(err.Error(), false)
			r.fail("rebuild failed: " + err.Error())
			return nil, false
		}
		if info == nil {
			info = &virt.InstanceInfo{ID: a.InstanceID, PowerState: virt.PowerRunning}
		}
	}
	r.endRebuild("", true)
	r.logger.Info("instance rebuilt", "power_state", info.PowerState, "driver_ref", info.DriverRef)
	return info, true
}

// endRebuild records the rebuild done, with errText if it failed, and
// whether an instance exists for the allocation.
func (r *runner) endRebuild(errText string, spawned bool) {
	st := r.st
	st.ActionDoneSeq, st.ActionError = r.alloc.ActionSeq, errText
	st.RebuildSeq, st.RebuildDestroyed = 0, false
	st.Spawned = spawned
	r.save(st)
}
