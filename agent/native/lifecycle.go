package native

import (
	"net/http"
	"sort"
	"strings"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// The lifecycle routes of the native API: instance operations
// (POST /v1/instances/{id}/actions), the record of what was done to an
// instance (os-instance-actions), migrations, and host drains.
//
// The native API has no authentication yet, so it asks for operations as
// an admin of no project: locks do not stop it, and it may move
// instances and pick their target host. A lock it takes is an admin's,
// which the instance's owner cannot undo through the Nova API.

// opParam is a body field an operation takes.
type opParam uint8

const (
	paramHard opParam = 1 << iota
	paramFlavor
	paramImage
	paramHost
	paramReason
	paramVolume
)

// nativeOps maps each action name the native API accepts to the
// operation it starts and the body fields it takes. "reboot" is the
// original name (Hard picks the kind); the rest are the server's
// operation names, which follow Nova's server actions.
var nativeOps = map[string]struct {
	op     string
	params opParam
}{
	"start":                 {structs.OpStart, 0},
	"stop":                  {structs.OpStop, 0},
	"reboot":                {structs.OpRebootSoft, paramHard},
	structs.OpRebootSoft:    {structs.OpRebootSoft, 0},
	structs.OpRebootHard:    {structs.OpRebootHard, 0},
	structs.OpPause:         {structs.OpPause, 0},
	structs.OpUnpause:       {structs.OpUnpause, 0},
	structs.OpSuspend:       {structs.OpSuspend, 0},
	structs.OpResume:        {structs.OpResume, 0},
	structs.OpLock:          {structs.OpLock, paramReason},
	structs.OpUnlock:        {structs.OpUnlock, 0},
	structs.OpRescue:        {structs.OpRescue, paramImage},
	structs.OpUnrescue:      {structs.OpUnrescue, 0},
	structs.OpRebuild:       {structs.OpRebuild, paramImage},
	structs.OpResize:        {structs.OpResize, paramFlavor},
	structs.OpConfirmResize: {structs.OpConfirmResize, 0},
	structs.OpRevertResize:  {structs.OpRevertResize, 0},
	structs.OpMigrate:       {structs.OpMigrate, paramHost},
	structs.OpLiveMigrate:   {structs.OpLiveMigrate, paramHost},
	structs.OpEvacuate:      {structs.OpEvacuate, paramHost},
	structs.OpShelve:        {structs.OpShelve, 0},
	structs.OpShelveOffload: {structs.OpShelveOffload, 0},
	structs.OpUnshelve:      {structs.OpUnshelve, paramHost},
	structs.OpRestore:       {structs.OpRestore, 0},
	// Volumes kept on the instance's host (Nova's os-volume_attachments).
	structs.OpAttachVolume: {structs.OpAttachVolume, paramVolume},
	structs.OpDetachVolume: {structs.OpDetachVolume, paramVolume},
}

// nativeOpNames lists nativeOps' keys for error messages, in a stable
// order.
var nativeOpNames = func() string {
	names := make([]string, 0, len(nativeOps))
	for name := range nativeOps {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}()

// instanceActionBody is the body of POST /v1/instances/{id}/actions.
type instanceActionBody struct {
	// Action is one of nativeOps' names.
	Action string
	// Hard makes a "reboot" a hard one.
	Hard bool
	// Flavor (id or name) is the flavor a resize moves to; required.
	Flavor string
	// Image is a rebuild's new image (default: the current one) or a
	// rescue's image.
	Image string
	// Host (id or name) is where a migrate, live-migration, evacuate or
	// unshelve should put the instance; the scheduler picks if empty.
	Host string
	// Reason is a lock's reason.
	Reason string
	// Volume is the volume ID attach_volume and detach_volume act on,
	// and Device the guest device an attach asks for (/dev/sdX; the
	// first free one when empty).
	Volume string
	Device string
}

// taskRequest checks the body and turns it into an Instance.Task request.
func (b *instanceActionBody) taskRequest(instanceID string) (*structs.InstanceTaskRequest, error) {
	if b.Action == "" {
		return nil, structs.Errorf(structs.KindInvalid, "an Action is required (one of %s)", nativeOpNames)
	}
	spec, ok := nativeOps[b.Action]
	if !ok {
		return nil, structs.Errorf(structs.KindInvalid, "action %q is not one of %s", b.Action, nativeOpNames)
	}
	var errs []string
	for _, f := range []struct {
		name  string
		param opParam
		set   bool
	}{
		{"Hard", paramHard, b.Hard}, {"Flavor", paramFlavor, b.Flavor != ""}, {"Image", paramImage, b.Image != ""},
		{"Host", paramHost, b.Host != ""}, {"Reason", paramReason, b.Reason != ""},
		{"Volume", paramVolume, b.Volume != ""}, {"Device", paramVolume, b.Device != ""},
	} {
		if f.set && spec.params&f.param == 0 {
			errs = append(errs, f.name+" does not apply to the "+b.Action+" action")
		}
	}
	if spec.params&paramFlavor != 0 && b.Flavor == "" {
		errs = append(errs, "the "+b.Action+" action needs a Flavor")
	}
	if spec.params&paramVolume != 0 && b.Volume == "" {
		errs = append(errs, "the "+b.Action+" action needs a Volume")
	}
	if b.Device != "" && spec.op == structs.OpDetachVolume {
		errs = append(errs, "Device does not apply to the "+b.Action+" action")
	}
	if len(b.Reason) > 255 {
		errs = append(errs, "Reason is longer than 255 characters")
	}
	if len(errs) > 0 {
		return nil, structs.Errorf(structs.KindInvalid, "%s", strings.Join(errs, "; "))
	}
	op := spec.op
	if b.Action == "reboot" && b.Hard {
		op = structs.OpRebootHard
	}
	req := &structs.InstanceTaskRequest{InstanceID: instanceID, Op: op, FlavorID: b.Flavor, ImageID: b.Image,
		TargetHost: b.Host, Reason: b.Reason, Admin: true}
	if b.Volume != "" {
		req.Volume = &structs.VolumeAttachRequest{VolumeID: b.Volume, Device: b.Device}
	}
	return req, nil
}

// instanceTaskJSON is the answer of POST /v1/instances/{id}/actions: the
// id of the instance action that records the operation (follow it at
// /v1/instances/{id}/actions/{request_id}), the migration a move
// created (0 for none), and the instance as the operation left it.
type instanceTaskJSON struct {
	RequestID   string
	MigrationID uint64
	Instance    *Instance
}

func (a *API) instanceAction(w http.ResponseWriter, q *request) (any, error) {
	var body instanceActionBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	args, err := body.taskRequest(q.param("id"))
	if err != nil {
		return nil, err
	}
	args.ProjectID, args.UserID, args.Admin = q.caller()
	out, err := a.submitTask(q, args)
	if err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	resp := &instanceTaskJSON{RequestID: out.RequestID, MigrationID: out.MigrationID}
	if out.Instance != nil {
		resp.Instance = newInstance(out.Instance)
	}
	return resp, nil
}

// submitTask sends an Instance.Task request with its idempotency key
// (the client's Idempotency-Key header or one of the agent's), retried
// across elections: a task that started before an election lost its
// answer is answered, not refused as a conflict with itself.
func (a *API) submitTask(q *request, args *structs.InstanceTaskRequest) (*structs.InstanceTaskResponse, error) {
	var err error
	if args.IdempotencyKey, err = idempotencyKey(q); err != nil {
		return nil, err
	}
	var out structs.InstanceTaskResponse
	err = retry.DoFor(q.Context(), a.cfg.WriteRetry, func(bool) error {
		out, args.Forwarded = structs.InstanceTaskResponse{}, false
		return q.rpc.RPC("Instance.Task", args, &out)
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// instanceActionList answers GET /v1/instances/{id}/actions: the
// instance's actions, newest first, each with its events. Actions outlive
// their instance, so an unknown instance has an empty list, not a 404.
func (a *API) instanceActionList(w http.ResponseWriter, q *request) (any, error) {
	args := structs.InstanceActionListRequest{InstanceID: q.param("id")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceActionListResponse
	if err := q.rpc.RPC("Instance.Actions", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Actions == nil {
		out.Actions = []*structs.InstanceAction{}
	}
	return out.Actions, nil
}

// instanceActionGet answers GET /v1/instances/{id}/actions/{request_id}.
func (a *API) instanceActionGet(w http.ResponseWriter, q *request) (any, error) {
	args := structs.InstanceActionListRequest{InstanceID: q.param("id"), RequestID: q.param("request_id")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceActionListResponse
	if err := q.rpc.RPC("Instance.Actions", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if len(out.Actions) == 0 || out.Actions[0] == nil {
		return nil, structs.Errorf(structs.KindNotFound, "action %q of instance %q not found", args.RequestID, args.InstanceID)
	}
	return out.Actions[0], nil
}

// migrationList answers GET /v1/migrations[?instance=ID].
func (a *API) migrationList(w http.ResponseWriter, q *request) (any, error) {
	args := structs.MigrationListRequest{InstanceID: q.URL.Query().Get("instance")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.MigrationListResponse
	if err := q.rpc.RPC("Migration.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Migrations == nil {
		out.Migrations = []*structs.Migration{}
	}
	// Oldest first: ids are Raft indexes, but the table's varint index
	// does not iterate in numeric order.
	sort.Slice(out.Migrations, func(i, j int) bool { return out.Migrations[i].ID < out.Migrations[j].ID })
	return out.Migrations, nil
}

// hostDrain answers POST /v1/hosts/{id}/drain: disable the host and move
// everything off it. The body ({"Reason"}) is optional. Enabling the
// host cancels the drain.
func (a *API) hostDrain(w http.ResponseWriter, q *request) (any, error) {
	var body hostEnabledBody
	if q.ContentLength != 0 {
		if err := decodeJSON(w, q, &body); err != nil {
			return nil, err
		}
	}
	args := structs.HostUpdateEnabledRequest{HostID: q.param("id"), Enabled: false, Reason: body.Reason, Drain: true}
	var out structs.GenericResponse
	if err := q.rpc.RPC("Host.UpdateEnabled", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
