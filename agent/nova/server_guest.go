package nova

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/agent/guest"
	"github.com/stratus-cloud/stratus/structs"
)

// Guests serves the calls Nova makes synchronously to the compute
// service of an instance or a host, which need the agent that runs it
// (agent/guest): changePassword and the hypervisor uptime.
type Guests interface {
	SetAdminPassword(ctx context.Context, instanceID, password string) error
	HostUptime(ctx context.Context, hostID string) (string, error)
}

// SetGuests gives the API its guest service; without one changePassword
// and the hypervisor uptime answer 501.
func (a *API) SetGuests(g Guests) { a.guests = g }

// Nova's policy rules of the guest actions.
const (
	adminPasswordRule = "os_compute_api:os-admin-password"
	crashDumpRule     = serverRule + "trigger_crash_dump"
)

// msgPasswordNotSupported is Nova's 501 of a password it cannot set.
const msgPasswordNotSupported = "Unable to set password on instance"

// crashDumpMinVersion is trigger_crash_dump's first microversion.
const crashDumpMinVersion = 17

// guestActions are changePassword and trigger_crash_dump; server_actions.go
// puts them in its table.
func guestActions() map[string]*serverActionSpec {
	return map[string]*serverActionSpec{
		"changePassword": {rule: adminPasswordRule, schema: func(int) *schema { return changePasswordSchema },
			do: actChangePassword},
		"trigger_crash_dump": {rule: crashDumpRule, schema: crashDumpSchema, check: crashDumpVersion,
			do: actTriggerCrashDump},
	}
}

// changePasswordSchema is Nova's change_password schema: any string, as
// Nova limits neither the length nor the characters of a password.
var changePasswordSchema = &schema{types: tObject, required: []string{"adminPass"}, props: map[string]*schema{
	"adminPass": {types: tString},
}}

// crashDumpSchema is Nova's trigger_crash_dump schema: the value is null.
func crashDumpSchema(mv int) *schema {
	if mv < crashDumpMinVersion {
		return nil
	}
	return &schema{types: tNull}
}

// crashDumpVersion refuses trigger_crash_dump before 2.17 as Nova
// refuses a method its microversion lacks: 404.
func crashDumpVersion(mv int, _ any) error {
	if mv < crashDumpMinVersion {
		return notFound(msgNotFound)
	}
	return nil
}

// actChangePassword sets the administrator's password in the guest,
// synchronously as Nova does: 202 once the guest has it. The password
// goes to the agent of the instance's host and nowhere else (never to
// the servers' replicated state).
func actChangePassword(q *request, inst *structs.Instance, arg any) (*reply, error) {
	password, _ := arg.(map[string]any)["adminPass"].(string)
	if inst.Locked && !q.isAdmin() {
		return nil, faultf(http.StatusConflict, "Instance %s is locked", inst.ID)
	}
	if err := guestState(inst, "changePassword"); err != nil {
		return nil, err
	}
	if q.api.guests == nil {
		return nil, faultf(http.StatusNotImplemented, "%s", msgPasswordNotSupported)
	}
	start := time.Now().UnixNano()
	err := q.api.guests.SetAdminPassword(q.r.Context(), inst.ID, password)
	if err != nil {
		err = guestFault(err, inst.ID)
	}
	q.recordGuestAction(inst, "changePassword", "compute_set_admin_password", start, err)
	if err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// recordGuestAction records a synchronous guest action in
// os-instance-actions under this request's id, with its outcome (Nova's
// message, which never holds the password). Failing to record it is
// logged: the action itself happened.
func (q *request) recordGuestAction(inst *structs.Instance, action, event string, start int64, failed error) {
	args := &structs.InstanceActionRecordRequest{InstanceID: inst.ID, RequestID: q.id, Action: action, Event: event,
		HostID: inst.HostID, StartTime: start, FinishTime: time.Now().UnixNano(),
		ProjectID: q.token.ProjectID, UserID: q.token.UserID, Admin: q.isAdmin()}
	if failed != nil {
		args.Error = failed.Error()
	}
	if err := q.call("Instance.RecordAction", args, &structs.GenericResponse{}); err != nil {
		q.api.logger.Warn("cannot record the instance action", "instance", inst.ID, "action", action, "error", err)
	}
}

// guestState is Nova's check_instance_state for set_admin_password: an
// ACTIVE instance with no task.
func guestState(inst *structs.Instance, action string) error {
	if inst.TaskState != "" || inst.Task != nil {
		state := inst.TaskState
		if state == "" {
			state = inst.Task.Kind
		}
		return faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in task_state %s", action, inst.ID, state)
	}
	if inst.VMState != structs.VMStateActive {
		return faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in vm_state %s", action, inst.ID, inst.VMState)
	}
	return nil
}

// guestFault words a guest call's failure as Nova does.
func guestFault(err error, id string) error {
	switch guest.ErrorType(err) {
	case guest.TypeNotSupported:
		return faultf(http.StatusNotImplemented, "%s", msgPasswordNotSupported)
	case guest.TypeFailed, guest.TypeNotReady, guest.TypeHostUnavailable:
		return faultf(http.StatusConflict, "%s", structs.Message(err))
	}
	if structs.KindOf(err) == structs.KindNotFound {
		return notFoundAs(err, "Instance %s could not be found.", id)
	}
	return err
}

// actTriggerCrashDump asks the instance's agent for a crash dump (an NMI
// into the guest); it is an instance action, trigger_crash_dump. As in
// Nova a host whose driver cannot do it is a 400.
func actTriggerCrashDump(q *request, inst *structs.Instance, _ any) (*reply, error) {
	_, err := q.runTask(inst, "trigger_crash_dump", structs.OpTriggerCrashDump, nil)
	if err != nil {
		if f, ok := err.(*fault); ok && f.status == http.StatusConflict && strings.Contains(f.msg, "does not support it") {
			return nil, badRequest("Triggering crash dump is not supported")
		}
		return nil, err
	}
	return acceptedReply(nil)
}

// hostUptime asks the agent of a host for uptime(1)'s line, waiting at
// most wait for it.
func (q *request) hostUptime(h *structs.Host, wait time.Duration) (string, error) {
	if q.api.guests == nil {
		return "", notSupported()
	}
	ctx, cancel := context.WithTimeout(q.r.Context(), wait)
	defer cancel()
	up, err := q.api.guests.HostUptime(ctx, h.ID)
	switch {
	case err == nil:
		return up, nil
	case guest.ErrorType(err) == guest.TypeNotSupported:
		return "", notSupported()
	case guest.ErrorType(err) == guest.TypeHostUnavailable:
		return "", badRequest("Compute service of %s is unavailable at this time.", h.Name)
	case structs.KindOf(err) == structs.KindNotFound:
		return "", notFound("Hypervisor with ID '%s' could not be found.", q.idString(h))
	}
	return "", err
}
