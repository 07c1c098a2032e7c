package agent

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

func (a *Agent) flavorList(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.FlavorListRequest
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.FlavorListResponse
	if err := a.rpc.RPC("Flavor.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	list := []*structs.Flavor{}
	project := restrictedProject(r)
	for _, f := range out.Flavors {
		// A confined caller sees the flavors its project may boot.
		if project == "" || f.CanUse(project) {
			list = append(list, f)
		}
	}
	return list, nil
}

func (a *Agent) flavorGet(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.FlavorSpecificRequest{ID: r.PathValue("id")}
	if err := parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleFlavorResponse
	if err := a.rpc.RPC("Flavor.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if project := restrictedProject(r); out.Flavor == nil || (project != "" && !out.Flavor.CanUse(project)) {
		return nil, notFound("flavor", args.ID)
	}
	return out.Flavor, nil
}

func (a *Agent) flavorCreate(w http.ResponseWriter, r *http.Request) (any, error) {
	// Nova's defaults for fields the body leaves out.
	f := structs.Flavor{IsPublic: true, RxTxFactor: 1.0}
	if err := decodeJSON(w, r, &f); err != nil {
		return nil, err
	}
	// Indexes are the server's to set.
	f.CreateIndex, f.ModifyIndex = 0, 0
	if f.ExtraSpecs == nil {
		f.ExtraSpecs = map[string]string{}
	}
	args := structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{&f}, CreateOnly: true}
	args.AuthToken = requestToken(r)
	var out structs.FlavorUpsertResponse
	if err := a.rpc.RPC("Flavor.Upsert", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.Flavors) != 1 {
		return nil, structs.Errorf(structs.KindInternal, "flavor %q was not stored", f.ID)
	}
	return out.Flavors[0], nil
}

func (a *Agent) flavorDelete(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.FlavorDeleteRequest{IDs: []string{r.PathValue("id")}}
	args.AuthToken = requestToken(r)
	var out structs.GenericResponse
	if err := a.rpc.RPC("Flavor.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
