package nova

import (
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// serverActionRoutes are the routes of server actions and of what they
// leave behind: instance actions (os-instance-actions) and migrations
// (os-migrations, /servers/{id}/migrations).
func (a *API) serverActionRoutes() []route.Route[handler] {
	routes := []route.Route[handler]{
		{Pattern: "POST /servers/{id}/action", Access: reader, Policy: serverRule + "action", Handle: a.serverAction},
	}
	routes = append(routes, a.instanceActionRoutes()...)
	return append(routes, a.migrationRoutes()...)
}

// Nova's policy rule prefixes of the server actions.
const (
	pauseRule    = "os_compute_api:os-pause-server:"
	suspendRule  = "os_compute_api:os-suspend-server:"
	lockRule     = "os_compute_api:os-lock-server:"
	migrateRule  = "os_compute_api:os-migrate-server:"
	shelveRule   = "os_compute_api:os-shelve:"
	deferredRule = "os_compute_api:os-deferred-delete:"
)

// serverActionSpec is one action of POST /servers/{id}/action.
type serverActionSpec struct {
	// rule is Nova's policy rule, named when the caller may not act.
	rule string
	// admin makes the action admin-only (Nova's default policy).
	admin bool
	// schema validates the action's value at the request's
	// microversion; nil (or a nil result) accepts any value, as Nova
	// accepts anything for the actions that take no arguments.
	schema func(mv int) *schema
	// check validates what a schema cannot say (nil for nothing).
	check func(mv int, v any) error
	// do carries the action out once the caller passed the policy.
	do func(q *request, inst *structs.Instance, arg any) (*reply, error)
}

// serverActions are the actions Stratus performs, by name.
var serverActions map[string]*serverActionSpec

func init() {
	serverActions = map[string]*serverActionSpec{
		"reboot":   {rule: serverRule + "reboot", schema: func(int) *schema { return rebootSchema }, do: actReboot},
		"os-start": {rule: serverRule + "start", do: taskAction("start", structs.OpStart)},
		"os-stop":  {rule: serverRule + "stop", do: taskAction("stop", structs.OpStop)},
		"pause":    {rule: pauseRule + "pause", do: taskAction("pause", structs.OpPause)},
		"unpause":  {rule: pauseRule + "unpause", do: taskAction("unpause", structs.OpUnpause)},
		"suspend":  {rule: suspendRule + "suspend", do: taskAction("suspend", structs.OpSuspend)},
		"resume":   {rule: suspendRule + "resume", do: taskAction("resume", structs.OpResume)},
		"lock":     {rule: lockRule + "lock", schema: lockSchema, do: actLockServer},
		"unlock":   {rule: lockRule + "unlock", do: actUnlockServer},
		"rescue":   {rule: "os_compute_api:os-rescue", schema: func(int) *schema { return rescueSchema }, do: actRescue},
		"unrescue": {rule: "os_compute_api:os-unrescue", do: taskAction("unrescue", structs.OpUnrescue)},
		"rebuild":  {rule: serverRule + "rebuild", schema: rebuildSchema, do: actRebuild},
		"resize":   {rule: serverRule + "resize", schema: func(int) *schema { return resizeSchema }, do: actResize},
		"confirmResize": {rule: serverRule + "confirm_resize", do: func(q *request, inst *structs.Instance, _ any) (*reply, error) {
			return q.finishResize(inst, "confirmResize", structs.OpConfirmResize, http.StatusNoContent)
		}},
		"revertResize": {rule: serverRule + "revert_resize", do: func(q *request, inst *structs.Instance, _ any) (*reply, error) {
			return q.finishResize(inst, "revertResize", structs.OpRevertResize, http.StatusAccepted)
		}},
		// migrate checks its own policy: naming a host is its own rule.
		"migrate":        {rule: migrateRule + "migrate", schema: migrateSchema, do: actMigrate},
		"os-migrateLive": {rule: migrateRule + "migrate_live", admin: true, schema: liveMigrateSchema, do: actLiveMigrate},
		"evacuate":       {rule: "os_compute_api:os-evacuate", admin: true, schema: evacuateSchema, do: actEvacuate},
		"shelve":         {rule: shelveRule + "shelve", do: taskAction("shelve", structs.OpShelve)},
		"shelveOffload":  {rule: shelveRule + "shelve_offload", admin: true, do: taskAction("shelveOffload", structs.OpShelveOffload)},
		"unshelve":       {rule: shelveRule + "unshelve", schema: unshelveSchema, check: checkUnshelve, do: actUnshelve},
		"forceDelete":    {rule: deferredRule + "force", do: actForceDelete},
		"restore":        {rule: deferredRule + "restore", do: taskAction("restore", structs.OpRestore)},
		// Networking (floating_ips.go, security_groups.go).
		"addFloatingIp": {rule: floatingRule + ":add", schema: func(int) *schema { return addFloatingSchema },
			do: untilVersion(43, actAddFloatingIP)},
		"removeFloatingIp": {rule: floatingRule + ":remove", schema: func(int) *schema { return removeFloatingSchema },
			do: untilVersion(43, actRemoveFloatingIP)},
		"addSecurityGroup": {rule: groupRule + ":add", schema: func(int) *schema { return groupActionSchema },
			do: actSecurityGroup(true)},
		"removeSecurityGroup": {rule: groupRule + ":remove", schema: func(int) *schema { return groupActionSchema },
			do: actSecurityGroup(false)},
	}
}

func init() {
	// Consoles (consoles.go).
	for name, spec := range consoleActions() {
		serverActions[name] = spec
	}
	// Admin actions (server_admin_actions.go).
	for name, spec := range adminActions() {
		serverActions[name] = spec
	}
	// Multinic: addFixedIp, removeFixedIp (fixed_ips.go).
	for name, spec := range multinicActions() {
		serverActions[name] = spec
	}
	// changePassword and trigger_crash_dump (server_guest.go).
	for name, spec := range guestActions() {
		serverActions[name] = spec
	}
}

// knownActions are Nova's other server actions, which Stratus does not
// support yet: they answer Nova's "not supported" 501, while an unknown
// action is "There is no such action".
var knownActions = []string{"resetNetwork", "injectNetworkInfo", "os-resetNetwork"}

// anyBody accepts any JSON object; handlers validate their own parts.
var anyBody = &schema{types: tObject, open: true}

// serverAction answers POST /servers/{id}/action: a body of exactly one
// action. As in Nova the body is validated first, then the server is
// looked up (another project's is a 404), then the policy applies; the
// servers decide the rest (state rules and locks: 409).
func (a *API) serverAction(q *request) (*reply, error) {
	body, err := decodeBody(q, anyBody)
	if err != nil {
		return nil, err
	}
	if len(body) != 1 {
		return nil, badRequest("Malformed request body")
	}
	var name string
	for k := range body {
		name = k
	}
	spec, ok := serverActions[name]
	if !ok {
		if containsString(knownActions, name) {
			if _, err := q.getServer(q.param("id")); err != nil {
				return nil, err
			}
			return nil, notSupported()
		}
		return nil, badRequest("There is no such action: %s", name)
	}
	if spec.schema != nil {
		if s := spec.schema(q.mv); s != nil {
			if err := s.validate(body[name], []string{name}); err != nil {
				return nil, err
			}
		}
	}
	if spec.check != nil {
		if err := spec.check(q.mv, body[name]); err != nil {
			return nil, err
		}
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if !q.isMember() || (spec.admin && !q.isAdmin()) {
		return nil, policyFault(spec.rule)
	}
	return spec.do(q, inst, body[name])
}

// runTask asks the servers for an operation on inst on the caller's
// behalf, naming the instance action after this request's id. action is
// Nova's name of it, which a refusal's message uses.
func (q *request) runTask(inst *structs.Instance, action, op string, fill func(*structs.InstanceTaskRequest)) (*structs.InstanceTaskResponse, error) {
	out, err := q.submitTask(inst, op, fill)
	if err != nil {
		return nil, taskFault(err, inst.ID, action, op)
	}
	return out, nil
}

// submitTask is runTask without the wording of its refusals: the
// servers' error as it came.
func (q *request) submitTask(inst *structs.Instance, op string, fill func(*structs.InstanceTaskRequest)) (*structs.InstanceTaskResponse, error) {
	args := &structs.InstanceTaskRequest{InstanceID: inst.ID, Op: op, ProjectID: q.token.ProjectID,
		UserID: q.token.UserID, Admin: q.isAdmin(), RequestID: q.id}
	if fill != nil {
		fill(args)
	}
	// The idempotency key (the client's Idempotency-Key header, a
	// Stratus extension, or one of the agent's) makes retries safe: a
	// task that started before an election lost its answer is answered,
	// not refused as a conflict with itself.
	if args.IdempotencyKey = q.r.Header.Get("Idempotency-Key"); args.IdempotencyKey == "" {
		args.IdempotencyKey = retry.NewKey()
	} else if err := structs.ValidateIdempotencyKey(args.IdempotencyKey); err != nil {
		return nil, badRequest("%s", structs.Message(err))
	}
	var out structs.InstanceTaskResponse
	err := retry.DoFor(q.r.Context(), q.api.writeRetry, func(bool) error {
		out, args.Forwarded = structs.InstanceTaskResponse{}, false
		return q.call("Instance.Task", args, &out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// taskFault words a refused operation as Nova does: the instance not
// found, and state conflicts naming Nova's action ("Cannot
// 'os-migrateLive' instance …") rather than the servers' operation.
func taskFault(err error, id, action, op string) error {
	switch structs.KindOf(err) {
	case structs.KindNotFound:
		return notFoundAs(err, "Instance %s could not be found.", id)
	case structs.KindConflict:
		msg := structs.Message(err)
		if op != action {
			msg = strings.Replace(msg, "'"+op+"'", "'"+action+"'", 1)
		}
		return faultf(http.StatusConflict, "%s", msg)
	}
	return err
}

// taskAction is an action that is one operation and answers 202.
func taskAction(action, op string) func(*request, *structs.Instance, any) (*reply, error) {
	return func(q *request, inst *structs.Instance, _ any) (*reply, error) {
		if _, err := q.runTask(inst, action, op, nil); err != nil {
			return nil, err
		}
		return acceptedReply(nil)
	}
}

var rebootSchema = &schema{types: tObject, required: []string{"type"}, props: map[string]*schema{
	"type": {types: tString, enum: []string{"HARD", "Hard", "hard", "SOFT", "Soft", "soft"}},
}}

func actReboot(q *request, inst *structs.Instance, arg any) (*reply, error) {
	op := structs.OpRebootSoft
	if strings.EqualFold(arg.(map[string]any)["type"].(string), "HARD") {
		op = structs.OpRebootHard
	}
	return taskAction("reboot", op)(q, inst, arg)
}

// lockSchema is the lock action from 2.73, which takes a reason; before
// it the value is not looked at.
func lockSchema(mv int) *schema {
	if mv < 73 {
		return nil
	}
	return &schema{types: tObject | tNull, props: map[string]*schema{
		"locked_reason": {types: tString, minLen: 1, maxLen: 255},
	}}
}

// actLockServer locks a server. As in Nova the owner's lock of a locked
// server changes nothing (an admin's lock stays an admin's), while an
// admin of another project takes the lock over.
func actLockServer(q *request, inst *structs.Instance, arg any) (*reply, error) {
	if inst.Locked && inst.ProjectID == q.token.ProjectID {
		return acceptedReply(nil)
	}
	reason := ""
	if o, ok := arg.(map[string]any); ok && q.atLeast(73) {
		reason, _ = stringOf(o, "locked_reason")
	}
	if _, err := q.runTask(inst, "lock", structs.OpLock, func(r *structs.InstanceTaskRequest) { r.Reason = reason }); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// actUnlockServer unlocks a server; a lock an admin took needs an admin
// (Nova's unlock_override rule).
func actUnlockServer(q *request, inst *structs.Instance, _ any) (*reply, error) {
	override := policyFault(lockRule + "unlock:unlock_override")
	if inst.Locked && inst.LockedBy == "admin" && !q.isAdmin() {
		return nil, override
	}
	if _, err := q.runTask(inst, "unlock", structs.OpUnlock, nil); err != nil {
		if structs.KindOf(err) == structs.KindPermission {
			return nil, override
		}
		return nil, err
	}
	return acceptedReply(nil)
}

var resizeSchema = &schema{types: tObject, required: []string{"flavorRef"}, props: map[string]*schema{
	"flavorRef":         {types: tString | tInteger, minLen: 1},
	"OS-DCF:diskConfig": {types: tString, enum: []string{"AUTO", "MANUAL"}},
}}

// actResize moves the server to another flavor (and host); it ends in
// VERIFY_RESIZE. A disk config given is recorded once the resize has
// started, as Nova's resize updates the instance with it.
func actResize(q *request, inst *structs.Instance, arg any) (*reply, error) {
	ref := ""
	switch v := arg.(map[string]any)["flavorRef"].(type) {
	case string:
		ref = lastSegment(v)
	default:
		ref = pyStr(v)
	}
	f, err := q.getFlavor(ref)
	if err != nil {
		if isStatus(err, http.StatusNotFound) {
			return nil, badRequest("Unable to locate requested flavor.")
		}
		return nil, err
	}
	auto := diskConfigOf(arg.(map[string]any))
	if err := checkAutoDisk(auto, inst.ImageID, inst.ImageProperties); err != nil {
		return nil, err
	}
	_, err = q.runTask(inst, "resize", structs.OpResize, func(r *structs.InstanceTaskRequest) { r.FlavorID = f.ID })
	if structs.KindOf(err) == structs.KindInvalid && strings.Contains(structs.Message(err), "must change flavor") {
		return nil, badRequest("Resize requires a flavor change.")
	}
	if err != nil {
		return nil, err
	}
	if auto != nil && *auto != inst.AutoDiskConfig {
		update := structs.InstanceUpdateRequest{InstanceID: inst.ID, AutoDiskConfig: auto}
		if err := q.call("Instance.Update", &update, &structs.InstanceUpdateResponse{}); err != nil {
			return nil, err
		}
	}
	return acceptedReply(nil)
}

// finishResize confirms or reverts a resize or cold migration, which
// only a server in VERIFY_RESIZE has.
func (q *request) finishResize(inst *structs.Instance, action, op string, status int) (*reply, error) {
	if inst.VMState != structs.VMStateResized {
		return nil, faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in vm_state %s", action, inst.ID, inst.VMState)
	}
	if _, err := q.runTask(inst, action, op, nil); err != nil {
		return nil, err
	}
	return &reply{status: status}, nil
}

// actForceDelete deletes a server at once, soft-deleted or not.
func actForceDelete(q *request, inst *structs.Instance, _ any) (*reply, error) {
	if err := q.deleteServer(inst, true); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// untilVersion limits an action to microversions up to last; later ones
// answer 404 as Nova's removed actions do.
func untilVersion(last int, do func(*request, *structs.Instance, any) (*reply, error)) func(*request, *structs.Instance, any) (*reply, error) {
	return func(q *request, inst *structs.Instance, arg any) (*reply, error) {
		if q.mv > last {
			return nil, notFound(msgNotFound)
		}
		return do(q, inst, arg)
	}
}
