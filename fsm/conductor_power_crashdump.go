package fsm

import "github.com/stratus-cloud/stratus/structs"

// evTriggerCrashDump is Nova's event of a trigger_crash_dump action.
const evTriggerCrashDump = "compute_trigger_crash_dump"

// crashDumpOp is Nova's trigger_crash_dump: a one-off action of the
// instance's agent (an NMI into the guest) on an ACTIVE instance whose
// host's driver can do it. It sets no task_state, as in Nova; the
// instance stays ACTIVE.
var crashDumpOp = powerOp{from: []string{vmActive}, action: structs.ActionTriggerCrashDump,
	event: evTriggerCrashDump, capability: structs.HostCapabilityCrashDump}

func init() {
	powerOps[structs.OpTriggerCrashDump] = crashDumpOp
	// conductor_power.go registers every power op in its init; when it ran
	// first, this one is left to register here.
	if _, ran := opHandlers[structs.OpStart]; ran {
		registerOp(structs.OpTriggerCrashDump, func(t *taskTxn, inst *structs.Instance, e *structs.InstanceTaskEntry) error {
			return t.startPower(inst, e, crashDumpOp)
		})
	}
}
