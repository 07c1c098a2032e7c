package console

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// TestDriverErrorInvalidStateIsNotReady checks every driver's wrong-state
// error (fake's and libvirt's wrapped, VMware's and Ironic's marked) is
// Nova's 409 InstanceNotReady with the driver's words.
func TestDriverErrorInvalidStateIsNotReady(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("fake: %w", virt.InvalidState("get a console of", virt.PowerShutdown)),
		fmt.Errorf("libvirt: %w", virt.InvalidState("get a console of", virt.PowerPaused)),
		virt.AsInvalidState(errors.New("vmware: suspend i-1: the VM is not running")),
	} {
		got := driverError(err, "i-1")
		var se *structs.Error
		if !errors.As(got, &se) || se.Kind != structs.KindConflict || !IsNotReady(got) {
			t.Errorf("driverError(%v) = %#v, want a conflict of type %s", err, got, TypeNotReady)
			continue
		}
		if want := "Instance i-1 is not ready: " + err.Error(); se.Msg != want {
			t.Errorf("message %q, want %q", se.Msg, want)
		}
	}
	if got := driverError(errors.New("boom"), "i-1"); IsNotReady(got) {
		t.Errorf("an unrelated error became %v", got)
	}
}
