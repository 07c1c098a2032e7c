package fake

import (
	"context"
	"fmt"
	"time"

	"github.com/stratus-cloud/stratus/virt"
)

// ops are the method names FailNext, FailAlways and Calls accept: every
// method that can fail. Name and Capabilities cannot, and the test hooks
// (Spec, SetPowerState, …) are neither counted nor failed.
var ops = map[string]bool{
	"HostInfo": true, "Spawn": true, "Destroy": true,
	"PowerOn": true, "PowerOff": true, "Reboot": true,
	"GetInfo": true, "ListInstances": true,
	"Pause": true, "Unpause": true, "Suspend": true, "Resume": true,
	"Rescue": true, "Unrescue": true,
	"Resize": true, "LiveMigrate": true, "Snapshot": true, "ExportDisks": true,
	"ConsoleOutput": true, "RemoteConsole": true, "ResizeVolume": true,
}

// checkOp panics on a name that is not a fake method, so a typo in a
// test ("Spwan") fails loudly instead of never injecting anything.
func checkOp(op string) {
	if !ops[op] {
		panic(fmt.Sprintf("fake: unknown operation %q", op))
	}
}

// FailNext makes the next call of op (a method name such as "Spawn",
// "PowerOff" or "Pause") return err, wrapped; a nil err means
// ErrInjected. Several FailNext calls queue up, one failure per call of
// op, ahead of any FailAlways. A failed operation changes nothing: a
// failed Spawn leaves no instance behind. FailNext panics on an unknown
// op name.
func (d *Driver) FailNext(op string, err error) {
	checkOp(op)
	if err == nil {
		err = ErrInjected
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failNext == nil {
		d.failNext = make(map[string][]error)
	}
	d.failNext[op] = append(d.failNext[op], err)
}

// FailAlways makes every call of op return err, wrapped, until
// ClearFailures; a nil err means ErrInjected. It panics on an unknown op
// name.
func (d *Driver) FailAlways(op string, err error) {
	checkOp(op)
	if err == nil {
		err = ErrInjected
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failAlways == nil {
		d.failAlways = make(map[string]error)
	}
	d.failAlways[op] = err
}

// ClearFailures drops every pending FailNext and FailAlways.
func (d *Driver) ClearFailures() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failNext = nil
	d.failAlways = nil
}

// Calls returns how many times op has been called, failed calls
// included. It panics on an unknown op name.
func (d *Driver) Calls(op string) int {
	checkOp(op)
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls[op]
}

// SetPowerState changes an instance's power state behind the control
// plane's back, as when a guest shuts itself down or crashes. state must
// be one of the virt.Power* constants. Moving a stopped instance to
// virt.PowerRunning counts as a boot in its console log. The change is
// sent to Events. The call is neither counted nor subject to injected
// failures.
func (d *Driver) SetPowerState(id string, state int) error {
	switch state {
	case virt.PowerNoState, virt.PowerRunning, virt.PowerPaused,
		virt.PowerShutdown, virt.PowerCrashed, virt.PowerSuspend:
	default:
		return fmt.Errorf("fake SetPowerState %q: unknown power state %d", id, state)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.instances[id]
	if !ok {
		return wrap("SetPowerState", id, virt.ErrNotFound)
	}
	in.setPower(state)
	if err := d.saveLocked(); err != nil {
		return err
	}
	select {
	case d.events <- virt.InstanceEvent{ID: id, PowerState: state}:
	default: // a full channel drops the hint; the power sync still sees it
	}
	return nil
}

// eventBuffer is how many unread events Events holds before dropping.
const eventBuffer = 256

// Events returns the channel on which SetPowerState reports each change
// it makes behind the control plane's back, as a real hypervisor reports
// a guest that shut itself down; the fake's own operations send nothing.
// An event that finds the channel full is dropped. The channel is never
// closed.
func (d *Driver) Events() <-chan virt.InstanceEvent { return d.events }

// begin starts a call of op: it counts it, fails at once if ctx has
// ended, takes a pending injected failure, then waits latency. It
// returns the injected failure or the context's error, if any.
func (d *Driver) begin(ctx context.Context, op string, latency time.Duration) error {
	d.mu.Lock()
	d.calls[op]++
	if err := ctx.Err(); err != nil {
		d.mu.Unlock()
		return err
	}
	var injected error
	if q := d.failNext[op]; len(q) > 0 {
		injected = q[0]
		if len(q) == 1 {
			delete(d.failNext, op)
		} else {
			d.failNext[op] = q[1:]
		}
	} else if err, ok := d.failAlways[op]; ok {
		injected = err
	}
	d.mu.Unlock()
	if err := sleep(ctx, latency); err != nil {
		return err
	}
	return injected
}

// sleep waits for dur or until ctx ends; zero costs nothing.
func sleep(ctx context.Context, dur time.Duration) error {
	if dur <= 0 {
		return nil
	}
	timer := time.NewTimer(dur)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
