package virt

import (
	"errors"
	"fmt"
)

// Errors drivers return; callers test them with errors.Is. They are the
// whole error contract between a driver and its callers: nothing outside
// virt/ tests a driver's own error values.
var (
	// ErrNotFound means the driver has no such instance.
	ErrNotFound = errors.New("instance not found on this host")
	// ErrNotSupported means the backend cannot do the operation.
	ErrNotSupported = errors.New("operation not supported by this driver")
	// ErrInvalidState means the instance's power (or, for bare metal,
	// provision) state does not allow the operation: pausing a stopped
	// instance, soft-rebooting it, deploying a node that is not free, …
	// Nova answers these with 409 Conflict.
	ErrInvalidState = errors.New("instance is in the wrong power state for this operation")
	// ErrDiskShrink means a Resize asked for a root or ephemeral disk
	// smaller than the instance's: disks only grow, as in Nova ("Unable
	// to resize disk down").
	ErrDiskShrink = errors.New("unable to resize disk down")
	// ErrVolumeNotAttached means DetachVolume found no volume of that id
	// on the instance: a detach repeated after it succeeded.
	ErrVolumeNotAttached = errors.New("no volume of that id is attached to the instance")
)

// InvalidState is ErrInvalidState naming the operation (a verb: "pause")
// and the power state (a Power* constant) that refused it. Drivers add
// their name in front ("fake: …").
func InvalidState(op string, state int) error {
	return fmt.Errorf("%w: cannot %s an instance in state %s", ErrInvalidState, op, PowerStateName(state))
}

// AsInvalidState marks err, whose words already say why the backend
// refused (a backend's own message), as an ErrInvalidState too: its
// message and its chain stay as they are. A nil err stays nil.
func AsInvalidState(err error) error {
	if err == nil {
		return nil
	}
	return &invalidState{err: err}
}

// invalidState is an error that is ErrInvalidState without saying so.
type invalidState struct{ err error }

func (e *invalidState) Error() string   { return e.err.Error() }
func (e *invalidState) Unwrap() []error { return []error{e.err, ErrInvalidState} }
