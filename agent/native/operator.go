package native

import (
	"net/http"
	"strconv"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// schedulerConfigJSON is the body of /v1/operator/scheduler/configuration:
// the tunables only, indexes being the server's.
type schedulerConfigJSON struct {
	RAMWeightMultiplier              float64
	CPUWeightMultiplier              float64
	DiskWeightMultiplier             float64
	BuildFailureWeightMultiplier     float64
	SoftAffinityWeightMultiplier     float64
	SoftAntiAffinityWeightMultiplier float64
	HostSubsetSize                   int
}

func (a *API) schedulerConfigGet(w http.ResponseWriter, q *request) (any, error) {
	var args structs.GenericRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SchedulerConfigResponse
	if err := q.rpc.RPC("Operator.SchedulerGetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return map[string]any{"SchedulerConfig": out.Config, "Source": out.Source}, nil
}

// schedulerConfigSet replaces the configuration; ?cas=N makes it a
// check-and-set against the ModifyIndex last read (0: never set).
func (a *API) schedulerConfigSet(w http.ResponseWriter, q *request) (any, error) {
	var body schedulerConfigJSON
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	args := structs.SchedulerSetConfigRequest{Config: structs.SchedulerConfiguration{
		RAMWeightMultiplier: body.RAMWeightMultiplier, CPUWeightMultiplier: body.CPUWeightMultiplier,
		DiskWeightMultiplier: body.DiskWeightMultiplier, BuildFailureWeightMultiplier: body.BuildFailureWeightMultiplier,
		SoftAffinityWeightMultiplier: body.SoftAffinityWeightMultiplier, SoftAntiAffinityWeightMultiplier: body.SoftAntiAffinityWeightMultiplier,
		HostSubsetSize: body.HostSubsetSize,
	}}
	if s := q.URL.Query().Get("cas"); s != "" {
		idx, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, structs.Errorf(structs.KindInvalid, "cas must be an index, not %q", s)
		}
		args.CAS, args.CheckIndex = true, idx
	}
	var out structs.SchedulerSetConfigResponse
	if err := q.rpc.RPC("Operator.SchedulerSetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return map[string]any{"Updated": out.Updated, "Index": out.Index}, nil
}

// purgeDeletedJSON is the body of POST /v1/operator/purge-deleted: the
// cut-off (RFC 3339); records of instances deleted before it are purged.
type purgeDeletedJSON struct {
	Before time.Time
}

// purgeDeleted purges deleted instances' records older than the body's
// cut-off now (cloudctl operator purge-deleted).
func (a *API) purgeDeleted(w http.ResponseWriter, q *request) (any, error) {
	var body purgeDeletedJSON
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	if body.Before.IsZero() || body.Before.UnixNano() <= 0 {
		return nil, structs.Errorf(structs.KindInvalid, "Before (an RFC 3339 time after 1970) is required")
	}
	args := structs.DeletedPurgeRequest{Before: body.Before.UnixNano()}
	var out structs.DeletedPurgeResponse
	if err := q.rpc.RPC("Operator.PurgeDeleted", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return map[string]any{"Purged": out.Purged, "Entries": out.Entries, "Index": out.Index}, nil
}

// nodeIntroBody is the body of POST /v1/operator/node-intro: a TTL ("1h")
// and the host it is for ("" for any new host).
type nodeIntroBody struct {
	TTL      string
	HostName string
}

// nodeIntroCreate issues a node introduction token: with ACLs on, the
// servers register a host they do not know only with one
// (server/node_intro.go).
func (a *API) nodeIntroCreate(w http.ResponseWriter, q *request) (any, error) {
	var body nodeIntroBody
	if err := decodeJSON(w, q, &body); err != nil {
		return nil, err
	}
	args := structs.NodeIntroCreateRequest{HostName: body.HostName}
	if body.TTL != "" {
		d, err := time.ParseDuration(body.TTL)
		if err != nil {
			return nil, structs.Errorf(structs.KindInvalid, "TTL %q: %v", body.TTL, err)
		}
		args.TTL = d
	}
	var out structs.NodeIntroCreateResponse
	if err := q.rpc.RPC("Operator.NodeIntroCreate", &args, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Bootstrap is the answer of POST /v1/operator/bootstrap: the first
// admin, its password and its project.
type Bootstrap struct {
	UserID      string
	UserName    string
	Password    string
	ProjectID   string
	ProjectName string
	DomainID    string
}

// operatorBootstrap creates the first admin, once.
func (a *API) operatorBootstrap(w http.ResponseWriter, q *request) (any, error) {
	var out structs.IdentityBootstrapResponse
	if err := q.rpc.RPC("Identity.Bootstrap", &structs.IdentityBootstrapRequest{}, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return &Bootstrap{UserID: out.UserID, UserName: out.UserName, Password: out.Password,
		ProjectID: out.ProjectID, ProjectName: out.ProjectName, DomainID: out.DomainID}, nil
}
