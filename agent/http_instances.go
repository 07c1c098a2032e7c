package agent

import (
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
)

// maxInstanceCount bounds one create request, as Nova's multi-create
// quota check would.
const maxInstanceCount = 1000

// instanceJSON is an instance as the native API shows it: the stored
// record plus the status Nova's API derives from its states.
type instanceJSON struct {
	*structs.Instance
	Status string
}

func newInstanceJSON(inst *structs.Instance) *instanceJSON {
	return &instanceJSON{Instance: inst, Status: inst.Status()}
}

func instancesJSON(list []*structs.Instance) []*instanceJSON {
	out := make([]*instanceJSON, 0, len(list))
	for _, inst := range list {
		out = append(out, newInstanceJSON(inst))
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
	Instances []*instanceJSON
	EvalID    string
}

func (a *Agent) instanceList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.InstanceListRequest{HostID: r.URL.Query().Get("host"), ProjectID: r.URL.Query().Get("project")}
	if p := restrictedProject(r); p != "" {
		args.ProjectID = p
	}
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceListResponse
	if err := a.rpc.RPC("Instance.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return instancesJSON(out.Instances), nil
}

func (a *Agent) instanceGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.InstanceSpecificRequest{InstanceID: r.PathValue("id")}
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleInstanceResponse
	if err := a.rpc.RPC("Instance.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Instance == nil {
		return nil, notFound("instance", args.InstanceID)
	}
	return &instanceDetailJSON{Instance: out.Instance, Status: out.Instance.Status(), Allocation: out.Allocation}, nil
}

func (a *Agent) instanceCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	body := instanceCreateBody{Count: 1}
	err := decodeJSON(w, r, &body)
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
	if s := subjectOf(r); s != nil {
		// The caller's own project and user own what it boots.
		args.ProjectID, args.UserID = s.ProjectID, s.UserID
	}
	args.AuthToken = requestToken(r)
	if args.IdempotencyKey, err = idempotencyKey(r); err != nil {
		return nil, err
	}
	var out structs.InstanceCreateResponse
	// The key makes a retry safe: a create that committed before its
	// answer was lost to an election is answered, not made again.
	err = retry.DoFor(r.Context(), a.writeRetry, func(bool) error {
		out, args.Forwarded = structs.InstanceCreateResponse{}, false
		return a.rpc.RPC("Instance.Create", &args, &out)
	})
	if err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &instanceCreateJSON{Instances: instancesJSON(out.Instances), EvalID: out.EvalID}, nil
}

// idempotencyKey is a create's idempotency key: the client's
// Idempotency-Key header, or a fresh one the agent keeps across its own
// retries.
func idempotencyKey(r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return retry.NewKey(), nil
	}
	return key, structs.ValidateIdempotencyKey(key)
}

// instanceDelete answers DELETE /v1/instances/{id}[?force]. With soft
// delete configured (reclaim_instance_interval) a delete is soft and
// restorable; ?force deletes at once, soft-deleted instances included
// (Nova's forceDelete). A locked instance refuses a delete.
func (a *Agent) instanceDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	force, err := boolParam(r, "force")
	if err != nil {
		return nil, err
	}
	args := structs.InstanceDeleteRequest{InstanceIDs: []string{r.PathValue("id")}, Force: force}
	if s := subjectOf(r); s != nil {
		// An admin's token deletes locked instances, as in Nova; without
		// ACLs a lock stops the native API's deletes.
		args.ProjectID, args.UserID, args.Admin = s.ProjectID, s.UserID, s.IsAdmin()
	}
	args.AuthToken = requestToken(r)
	var out structs.GenericResponse
	// A delete is safe to send again; "not found" after an attempt that
	// may have gone through means that attempt did.
	err = retry.DoFor(r.Context(), a.writeRetry, func(retried bool) error {
		out, args.Forwarded = structs.GenericResponse{}, false
		err := a.rpc.RPC("Instance.Delete", &args, &out)
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

func (a *Agent) evalList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.EvalListRequest
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.EvalListResponse
	if err := a.rpc.RPC("Eval.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Evals == nil {
		out.Evals = []*structs.Evaluation{}
	}
	return out.Evals, nil
}

func (a *Agent) evalGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.EvalSpecificRequest{EvalID: r.PathValue("id")}
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleEvalResponse
	if err := a.rpc.RPC("Eval.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Eval == nil {
		return nil, notFound("evaluation", args.EvalID)
	}
	return out.Eval, nil
}

// boolParam reads a boolean URL parameter: absent is false, present
// without a value ("?force") or "true" is true, "false" is false.
func boolParam(r *http.Request, name string) (bool, error) {
	v := r.URL.Query()
	if !v.Has(name) {
		return false, nil
	}
	switch v.Get(name) {
	case "", "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, structs.Errorf(structs.KindInvalid, "%s %q is not true or false", name, v.Get(name))
}

// notFound is the error of a read whose RPC answered no object.
func notFound(what, id string) error {
	return structs.Errorf(structs.KindNotFound, "%s %q not found", what, id)
}
