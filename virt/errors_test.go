package virt_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
)

func TestInvalidState(t *testing.T) {
	err := fmt.Errorf("fake: %w", virt.InvalidState("pause", virt.PowerShutdown))
	if !errors.Is(err, virt.ErrInvalidState) {
		t.Errorf("%v is not ErrInvalidState", err)
	}
	want := "fake: instance is in the wrong power state for this operation: cannot pause an instance in state SHUTDOWN"
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

func TestAsInvalidStateKeepsMessageAndChain(t *testing.T) {
	cause := errors.New("HTTP 400")
	err := virt.AsInvalidState(fmt.Errorf("ironic: deploy: %w", cause))
	if !errors.Is(err, virt.ErrInvalidState) || !errors.Is(err, cause) {
		t.Errorf("%v: want both ErrInvalidState and its cause", err)
	}
	if err.Error() != "ironic: deploy: HTTP 400" {
		t.Errorf("message changed: %q", err)
	}
	if virt.AsInvalidState(nil) != nil {
		t.Error("AsInvalidState(nil) is not nil")
	}
}

func TestPowerStateName(t *testing.T) {
	for state, want := range map[int]string{
		virt.PowerNoState: "NOSTATE", virt.PowerRunning: "RUNNING", virt.PowerPaused: "PAUSED",
		virt.PowerShutdown: "SHUTDOWN", virt.PowerCrashed: "CRASHED", virt.PowerSuspend: "SUSPENDED", 9: "state(9)",
	} {
		if got := virt.PowerStateName(state); got != want {
			t.Errorf("PowerStateName(%d) = %q, want %q", state, got, want)
		}
	}
}
