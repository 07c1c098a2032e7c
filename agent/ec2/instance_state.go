package ec2

import "github.com/stratus-cloud/stratus/structs"

// instanceState is EC2's state of an instance: its code and name.
type instanceState struct {
	Code int    `xml:"code"`
	Name string `xml:"name"`
}

// EC2's instance states, with their codes.
var (
	statePending      = instanceState{0, "pending"}
	stateRunning      = instanceState{16, "running"}
	stateShuttingDown = instanceState{32, "shutting-down"}
	stateTerminated   = instanceState{48, "terminated"}
	stateStopping     = instanceState{64, "stopping"}
	stateStopped      = instanceState{80, "stopped"}
)

// stateOf maps Nova's vm and task states to EC2's, as the ec2-api
// project does: a deletion in progress is shutting-down whatever the
// vm state, a power change in progress is stopping or pending, a
// building instance pending; every vm state that is not running and not
// gone (paused, suspended, shelved, rescued…) is stopped, since EC2 has
// no word for it. An instance in error is terminated: EC2 has no error
// state, and the SDKs' waiters treat terminated as final, as the
// instance is for any use.
func stateOf(inst *structs.Instance) instanceState {
	switch inst.TaskState {
	case structs.TaskDeleting, structs.TaskSoftDeleting:
		return stateShuttingDown
	case structs.TaskPoweringOff, structs.TaskShelving, structs.TaskShelvingOffloading, structs.TaskSuspending, structs.TaskPausing:
		return stateStopping
	case structs.TaskPoweringOn, structs.TaskResuming, structs.TaskUnpausing, structs.TaskRestoring:
		return statePending
	}
	switch inst.VMState {
	case structs.VMStateBuilding:
		return statePending
	case structs.VMStateResized:
		// A resize of a stopped instance (ModifyInstanceAttribute
		// instanceType) leaves it powered off until confirmed.
		if inst.PowerState == structs.PowerShutdown {
			return stateStopped
		}
		return stateRunning
	case structs.VMStateActive, structs.VMStateRescued:
		return stateRunning
	case structs.VMStateDeleted, structs.VMStateSoftDeleted, structs.VMStateError:
		return stateTerminated
	}
	return stateStopped
}
