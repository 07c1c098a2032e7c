package native

import (
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// maxInstanceCount bounds one create request, as Nova's multi-create
// quota check would.
const maxInstanceCount = 1000

// Instance is an instance as the native API shows it: the stored
// record plus the status Nova's API derives from its states.
type Instance struct {
	*structs.Instance
	Status string
}

func newInstance(inst *structs.Instance) *Instance {
	return &Instance{Instance: redactInstance(inst), Status: inst.Status()}
}

func newInstances(list []*structs.Instance) []*Instance {
	out := make([]*Instance, 0, len(list))
	for _, inst := range list {
		out = append(out, newInstance(inst))
	}
	return out
}

// instanceDetailJSON is the body of GET /v1/instances/{id}: the instance
// and its allocation (null before it is placed).
type instanceDetailJSON struct {
	*structs.Instance
	Status     string
	Allocation *structs.Allocation
}

// instanceCreateBody is the body of POST /v1/instances.
type instanceCreateBody struct {
	Name            string
	Flavor          string // id or name
	Image           string
	ImageProperties map[string]string
	AZ              string
	KeyName         string
	Metadata        map[string]string
	Count           int
}

func (b *instanceCreateBody) validate() error {
	var errs []string
	if name := strings.TrimSpace(b.Name); name == "" || len(b.Name) > 255 {
		errs = append(errs, "name must be 1-255 characters")
	}
	if b.Flavor == "" {
		errs = append(errs, "flavor is required")
	}
	if b.Count < 1 || b.Count > maxInstanceCount {
		errs = append(errs, "count must be between 1 and 1000")
	}
	if len(errs) > 0 {
		return structs.Errorf(structs.KindInvalid, "instance: %s", strings.Join(errs, "; "))
	}
	return nil
}

// instanceCreateJSON is the answer of POST /v1/instances.
type instanceCreateJSON struct {
	Instances []*Instance
	EvalID    string
}

func (a *API) instanceList(w http.ResponseWriter, q *request) (any, error) {
	args := structs.InstanceListRequest{HostID: q.URL.Query().Get("host"), ProjectID: q.URL.Query().Get("project")}
	if p := q.restrictedProject(); p != "" {
		args.ProjectID = p
	}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceListResponse
	if err := q.rpc.RPC("Instance.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return newInstances(out.Instances), nil
}

func (a *API) instanceGet(w http.ResponseWriter, q *request) (any, error) {
	args := structs.InstanceSpecificRequest{InstanceID: q.param("id")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleInstanceResponse
	if err := q.rpc.RPC("Instance.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Instance == nil {
		return nil, notFound("instance", args.InstanceID)
	}
	return &instanceDetailJSON{Instance: redactInstance(out.Instance), Status: out.Instance.Status(), Allocation: redactAlloc(out.Allocation)}, nil
}

func (a *API) instanceCreate(w http.ResponseWriter, q *request) (any, error) {
	body := instanceCreateBody{Count: 1}
	err := decodeJSON(w, q, &body)
	if err != nil {
		return nil, err
	}
	if err := body.validate(); err != nil {
		return nil, err
	}
	args := structs.InstanceCreateRequest{
		Name: body.Name, FlavorID: body.Flavor, ImageID: body.Image, ImageProperties: body.ImageProperties,
		AZ: body.AZ, KeyName: body.KeyName, Metadata: body.Metadata, Count: body.Count,
	}
	// The caller's own project and user own what it boots: the token's,
	// verified even with ACLs off, as for volumes (volumeOwner).
	args.ProjectID, args.UserID, _ = a.caller(q)
	if args.IdempotencyKey, err = idempotencyKey(q); err != nil {
		return nil, err
	}
	var out structs.InstanceCreateResponse
	// The key makes a retry safe: a create that committed before its
	// answer was lost to an election is answered, not made again.
	err = retry.DoFor(q.Context(), a.cfg.WriteRetry, func(bool) error {
		out, args.Forwarded = structs.InstanceCreateResponse{}, false
		return q.rpc.RPC("Instance.Create", &args, &out)
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &instanceCreateJSON{Instances: newInstances(out.Instances), EvalID: out.EvalID}, nil
}

// idempotencyKey is a create's idempotency key: the client's
// Idempotency-Key header, or a fresh one the agent keeps across its own
// retries.
func idempotencyKey(q *request) (string, error) {
	key := q.Header.Get("Idempotency-Key")
	if key == "" {
		return retry.NewKey(), nil
	}
	return key, structs.ValidateIdempotencyKey(key)
}

// instanceDelete answers DELETE /v1/instances/{id}[?force]. With soft
// delete configured (reclaim_instance_interval) a delete is soft and
// restorable; ?force deletes at once, soft-deleted instances included
// (Nova's forceDelete). A locked instance refuses a delete.
func (a *API) instanceDelete(w http.ResponseWriter, q *request) (any, error) {
	force, err := boolParam(q, "force")
	if err != nil {
		return nil, err
	}
	args := structs.InstanceDeleteRequest{InstanceIDs: []string{q.param("id")}, Force: force}
	if s := q.subject; s != nil {
		// An admin's token deletes locked instances, as in Nova; without
		// ACLs a lock stops the native API's deletes.
		args.ProjectID, args.UserID, args.Admin = s.ProjectID, s.UserID, s.IsAdmin()
	}
	var out structs.GenericResponse
	// A delete is safe to send again; "not found" after an attempt that
	// may have gone through means that attempt did.
	err = retry.DoFor(q.Context(), a.cfg.WriteRetry, func(retried bool) error {
		out, args.Forwarded = structs.GenericResponse{}, false
		err := q.rpc.RPC("Instance.Delete", &args, &out)
		if retried && structs.KindOf(err) == structs.KindNotFound {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}

func (a *API) evalList(w http.ResponseWriter, q *request) (any, error) {
	var args structs.EvalListRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.EvalListResponse
	if err := q.rpc.RPC("Eval.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Evals == nil {
		out.Evals = []*structs.Evaluation{}
	}
	return out.Evals, nil
}

func (a *API) evalGet(w http.ResponseWriter, q *request) (any, error) {
	args := structs.EvalSpecificRequest{EvalID: q.param("id")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleEvalResponse
	if err := q.rpc.RPC("Eval.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Eval == nil {
		return nil, notFound("evaluation", args.EvalID)
	}
	return out.Eval, nil
}
