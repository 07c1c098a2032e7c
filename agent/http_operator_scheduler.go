package agent

import (
	"net/http"
	"strconv"

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

func (a *Agent) schedulerConfigGet(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.GenericRequest
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SchedulerConfigResponse
	if err := a.rpc.RPC("Operator.SchedulerGetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return map[string]any{"SchedulerConfig": out.Config, "Source": out.Source}, nil
}

// schedulerConfigSet replaces the configuration; ?cas=N makes it a
// check-and-set against the ModifyIndex last read (0: never set).
func (a *Agent) schedulerConfigSet(w http.ResponseWriter, r *http.Request) (any, error) {
	var body schedulerConfigJSON
	if err := decodeJSON(w, r, &body); err != nil {
		return nil, err
	}
	args := structs.SchedulerSetConfigRequest{Config: structs.SchedulerConfiguration{
		RAMWeightMultiplier: body.RAMWeightMultiplier, CPUWeightMultiplier: body.CPUWeightMultiplier,
		DiskWeightMultiplier: body.DiskWeightMultiplier, BuildFailureWeightMultiplier: body.BuildFailureWeightMultiplier,
		SoftAffinityWeightMultiplier: body.SoftAffinityWeightMultiplier, SoftAntiAffinityWeightMultiplier: body.SoftAntiAffinityWeightMultiplier,
		HostSubsetSize: body.HostSubsetSize,
	}}
	if s := r.URL.Query().Get("cas"); s != "" {
		idx, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, structs.Errorf(structs.KindInvalid, "cas must be an index, not %q", s)
		}
		args.CAS, args.CheckIndex = true, idx
	}
	args.AuthToken = requestToken(r)
	var out structs.SchedulerSetConfigResponse
	if err := a.rpc.RPC("Operator.SchedulerSetConfiguration", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return map[string]any{"Updated": out.Updated, "Index": out.Index}, nil
}
