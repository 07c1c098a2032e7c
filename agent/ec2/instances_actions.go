package ec2

import (
	"encoding/base64"
	"encoding/xml"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// stateChange is one item of a Terminate/Start/StopInstances answer.
type stateChange struct {
	InstanceID    string        `xml:"instanceId"`
	CurrentState  instanceState `xml:"currentState"`
	PreviousState instanceState `xml:"previousState"`
}

type stateChangeResponse struct {
	XMLName xml.Name
	meta
	Items []stateChange `xml:"instancesSet>item"`
}

// terminateInstances answers TerminateInstances with Instance.Delete. An
// instance already gone answers terminated again, as EC2 does.
func terminateInstances(q *request) error {
	insts, err := q.namedInstances()
	if err != nil {
		return err
	}
	resp := &stateChangeResponse{XMLName: xml.Name{Local: "TerminateInstancesResponse"}}
	var ids []string
	for _, inst := range insts {
		prev := stateOf(inst)
		cur := stateShuttingDown
		if prev == stateTerminated {
			cur = stateTerminated
		} else {
			ids = append(ids, inst.ID)
		}
		resp.Items = append(resp.Items, stateChange{InstanceID: instanceID(inst.ID), CurrentState: cur, PreviousState: prev})
	}
	if len(ids) > 0 {
		args := &structs.InstanceDeleteRequest{InstanceIDs: ids, ProjectID: q.caller.ProjectID, UserID: q.caller.UserID}
		err := retry.DoFor(q.r.Context(), q.api.writeRetry, func(bool) error {
			args.Forwarded = false
			return q.call("Instance.Delete", args, &structs.GenericResponse{})
		})
		if err != nil {
			named := make([]string, len(ids))
			for i, id := range ids {
				named[i] = instanceID(id)
			}
			return lockedError(err, strings.Join(named, ", "))
		}
	}
	return q.reply(resp)
}

// namedInstances resolves InstanceId.n.
func (q *request) namedInstances() ([]*structs.Instance, error) {
	ids, err := q.instanceIDsParam()
	if err != nil {
		return nil, err
	}
	return q.resolveInstances(ids)
}

// startInstances answers StartInstances (Instance.Task start); a
// running instance is left as it is.
func startInstances(q *request) error {
	return q.powerChange("StartInstancesResponse", structs.OpStart, stateStopped, statePending, stateRunning)
}

// stopInstances answers StopInstances (Instance.Task stop); a stopped
// instance is left as it is. Force is accepted: Stratus's stop already
// powers off.
func stopInstances(q *request) error {
	return q.powerChange("StopInstancesResponse", structs.OpStop, stateRunning, stateStopping, stateStopped)
}

// powerChange runs op on every named instance that is in from, and
// answers each one's move to to (settled for those already there). An
// instance in any other state is IncorrectInstanceState, checked before
// anything is changed.
func (q *request) powerChange(name, op string, from, to, settled instanceState) error {
	insts, err := q.namedInstances()
	if err != nil {
		return err
	}
	for _, inst := range insts {
		if st := stateOf(inst); st != from && st != settled {
			return ec2Error(codeIncorrectInstanceState, "The instance '%s' is not in a state from which it can be %s.", instanceID(inst.ID), map[string]string{structs.OpStart: "started", structs.OpStop: "stopped"}[op])
		}
	}
	resp := &stateChangeResponse{XMLName: xml.Name{Local: name}}
	for _, inst := range insts {
		prev, cur := stateOf(inst), to
		if prev == settled {
			cur = settled
		} else if err := q.confirmBeforeStart(inst, op); err != nil {
			return err
		} else if err := q.task(inst.ID, op); err != nil {
			return lockedError(err, instanceID(inst.ID))
		}
		resp.Items = append(resp.Items, stateChange{InstanceID: instanceID(inst.ID), CurrentState: cur, PreviousState: prev})
	}
	return q.reply(resp)
}

// confirmBeforeStart confirms the resize of a stopped instance whose
// type changed (ModifyInstanceAttribute instanceType) before it is
// started: EC2 has no confirm step, and Nova starts no instance with a
// resize to confirm. The confirm is one entry, done when answered.
func (q *request) confirmBeforeStart(inst *structs.Instance, op string) error {
	if op != structs.OpStart || inst.VMState != structs.VMStateResized {
		return nil
	}
	return lockedError(q.task(inst.ID, structs.OpConfirmResize), instanceID(inst.ID))
}

// task runs one Instance.Task as the Compute API's server actions do.
func (q *request) task(id, op string) error {
	args := &structs.InstanceTaskRequest{InstanceID: id, Op: op, ProjectID: q.caller.ProjectID, UserID: q.caller.UserID,
		IdempotencyKey: retry.NewKey()}
	return retry.DoFor(q.r.Context(), q.api.writeRetry, func(bool) error {
		args.Forwarded = false
		return q.call("Instance.Task", args, &structs.InstanceTaskResponse{})
	})
}

// rebootInstances answers RebootInstances with a soft reboot of each
// running instance.
func rebootInstances(q *request) error {
	insts, err := q.namedInstances()
	if err != nil {
		return err
	}
	for _, inst := range insts {
		if stateOf(inst) != stateRunning {
			return ec2Error(codeIncorrectInstanceState, "The instance '%s' is not running.", instanceID(inst.ID))
		}
	}
	for _, inst := range insts {
		if err := q.task(inst.ID, structs.OpRebootSoft); err != nil {
			return err
		}
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "RebootInstancesResponse"}, Return: true})
}

// returnResponse is the answer of actions that only say they were done.
type returnResponse struct {
	XMLName xml.Name
	meta
	Return bool `xml:"return"`
}

// getConsoleOutput answers GetConsoleOutput with the instance's console
// log (base64, as EC2 sends it), read as os-getConsoleOutput reads it.
func getConsoleOutput(q *request) error {
	id, err := q.required("InstanceId")
	if err != nil {
		return err
	}
	insts, err := q.resolveInstances([]string{id})
	if err != nil {
		return err
	}
	if q.api.consoles == nil {
		return ec2Error(codeUnsupported, "Console output is not available on this agent.")
	}
	out, err := q.api.consoles.Output(q.r.Context(), insts[0].ID, 0)
	if err != nil {
		return err
	}
	return q.reply(&consoleOutputResponse{InstanceID: id, Timestamp: time.Now().UTC().Format(time.RFC3339),
		Output: base64.StdEncoding.EncodeToString([]byte(out))})
}

type consoleOutputResponse struct {
	XMLName xml.Name `xml:"GetConsoleOutputResponse"`
	meta
	InstanceID string `xml:"instanceId"`
	Timestamp  string `xml:"timestamp"`
	Output     string `xml:"output"`
}
