package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// The native API's instance groups (HCL instance specs): their versions,
// plans computed by the servers (so the CLI and the UI show the same
// diff), and their deployments.

// groupRegisterBody is the body of POST /v1/groups and of a plan.
type groupRegisterBody struct {
	Spec         *structs.InstanceGroupSpec
	EnforceIndex bool
	CheckIndex   uint64
}

// groupStopBody is the body of POST /v1/groups/{name}/stop.
type groupStopBody struct {
	Purge        bool
	EnforceIndex bool
	CheckIndex   uint64
}

// groupRevertBody is the body of POST /v1/groups/{name}/revert.
type groupRevertBody struct {
	Version      uint64
	EnforceIndex bool
	CheckIndex   uint64
}

// groupWriteJSON answers the writes.
type groupWriteJSON struct {
	Name             string
	Version          uint64
	Changed          bool
	GroupModifyIndex uint64
}

// groupStatusJSON is the body of GET /v1/groups/{name}.
type groupStatusJSON struct {
	Group      *structs.InstanceGroup
	Deployment *structs.GroupDeployment
	Members    []*Instance
}

func groupWrite(w http.ResponseWriter, out *structs.InstanceGroupRegisterResponse) *groupWriteJSON {
	setIndex(w, out.Index)
	return &groupWriteJSON{Name: out.Name, Version: out.Version, Changed: out.Changed, GroupModifyIndex: out.GroupModifyIndex}
}

func (a *API) groupList(w http.ResponseWriter, q *request) (any, error) {
	var args structs.InstanceGroupListRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceGroupListResponse
	if err := q.rpc.RPC("InstanceGroup.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if out.Groups == nil {
		out.Groups = []*structs.InstanceGroupSummary{}
	}
	return out.Groups, nil
}

func (a *API) groupGet(w http.ResponseWriter, q *request) (any, error) {
	args := structs.InstanceGroupSpecificRequest{Name: q.param("name")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceGroupResponse
	if err := q.rpc.RPC("InstanceGroup.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return &groupStatusJSON{Group: out.Group, Deployment: out.Deployment, Members: newInstances(out.Members)}, nil
}

func (a *API) groupVersions(w http.ResponseWriter, q *request) (any, error) {
	args := structs.InstanceGroupSpecificRequest{Name: q.param("name")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceGroupVersionsResponse
	if err := q.rpc.RPC("InstanceGroup.Versions", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	list := make([]*groupVersionJSON, 0, len(out.Versions))
	for _, v := range out.Versions {
		list = append(list, &groupVersionJSON{InstanceGroupVersion: v, Diff: out.Diffs[v.Version]})
	}
	return list, nil
}

// groupVersionJSON is a version with its changes against the one before.
type groupVersionJSON struct {
	*structs.InstanceGroupVersion
	Diff []*structs.FieldDiff
}

// decodeSpecBody reads a register or plan body; for a plan the spec's
// name must be the path's.
func decodeSpecBody(w http.ResponseWriter, q *request, name string) (*groupRegisterBody, error) {
	var body groupRegisterBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	if body.Spec == nil {
		return nil, structs.Errorf(structs.KindInvalid, "the body needs a Spec")
	}
	if name != "" && body.Spec.Name != name {
		return nil, structs.Errorf(structs.KindInvalid, "the spec is for instance group %q, not %q", body.Spec.Name, name)
	}
	return &body, nil
}

func (a *API) groupRegister(w http.ResponseWriter, q *request) (any, error) {
	body, err := decodeSpecBody(w, q, "")
	if err != nil {
		return nil, err
	}
	args := structs.InstanceGroupRegisterRequest{Spec: body.Spec, EnforceIndex: body.EnforceIndex, CheckIndex: body.CheckIndex}
	var out structs.InstanceGroupRegisterResponse
	if err := q.rpc.RPC("InstanceGroup.Register", &args, &out); err != nil {
		return nil, err
	}
	return groupWrite(w, &out), nil
}

func (a *API) groupPlan(w http.ResponseWriter, q *request) (any, error) {
	body, err := decodeSpecBody(w, q, q.param("name"))
	if err != nil {
		return nil, err
	}
	args := structs.InstanceGroupPlanRequest{Spec: body.Spec}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.InstanceGroupPlanResponse
	if err := q.rpc.RPC("InstanceGroup.Plan", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	return out.Plan, nil
}

func (a *API) groupStop(w http.ResponseWriter, q *request) (any, error) {
	var body groupStopBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	args := structs.InstanceGroupStopRequest{Name: q.param("name"), Purge: body.Purge, EnforceIndex: body.EnforceIndex, CheckIndex: body.CheckIndex}
	var out structs.InstanceGroupRegisterResponse
	if err := q.rpc.RPC("InstanceGroup.Stop", &args, &out); err != nil {
		return nil, err
	}
	return groupWrite(w, &out), nil
}

func (a *API) groupRevert(w http.ResponseWriter, q *request) (any, error) {
	var body groupRevertBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	if body.Version == 0 {
		return nil, structs.Errorf(structs.KindInvalid, "the body needs the Version to revert to")
	}
	args := structs.InstanceGroupRevertRequest{Name: q.param("name"), Version: body.Version, EnforceIndex: body.EnforceIndex, CheckIndex: body.CheckIndex}
	var out structs.InstanceGroupRegisterResponse
	if err := q.rpc.RPC("InstanceGroup.Revert", &args, &out); err != nil {
		return nil, err
	}
	return groupWrite(w, &out), nil
}
