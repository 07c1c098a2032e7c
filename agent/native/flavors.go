package native

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

func (a *API) flavorList(w http.ResponseWriter, q *request) (any, error) {
	var args structs.FlavorListRequest
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.FlavorListResponse
	if err := q.rpc.RPC("Flavor.List", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	list := []*structs.Flavor{}
	project := q.restrictedProject()
	for _, f := range out.Flavors {
		// A confined caller sees the flavors its project may boot.
		if project == "" || f.CanUse(project) {
			list = append(list, f)
		}
	}
	return list, nil
}

func (a *API) flavorGet(w http.ResponseWriter, q *request) (any, error) {
	args := structs.FlavorSpecificRequest{ID: q.param("id")}
	if err := parseQuery(q, &args.QueryOptions); err != nil {
		return nil, err
	}
	var out structs.SingleFlavorResponse
	if err := q.rpc.RPC("Flavor.Get", &args, &out); err != nil {
		return nil, err
	}
	setMeta(w, &out.QueryMeta)
	if project := q.restrictedProject(); out.Flavor == nil || (project != "" && !out.Flavor.CanUse(project)) {
		return nil, notFound("flavor", args.ID)
	}
	return out.Flavor, nil
}

func (a *API) flavorCreate(w http.ResponseWriter, q *request) (any, error) {
	// Nova's defaults for fields the body leaves out.
	f := structs.Flavor{IsPublic: true, RxTxFactor: 1.0}
	if err := decodeJSON(w, q, &f); err != nil {
		return nil, err
	}
	// Indexes are the server's to set.
	f.CreateIndex, f.ModifyIndex = 0, 0
	if f.ExtraSpecs == nil {
		f.ExtraSpecs = map[string]string{}
	}
	args := structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{&f}, CreateOnly: true}
	var out structs.FlavorUpsertResponse
	if err := q.rpc.RPC("Flavor.Upsert", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	if len(out.Flavors) != 1 {
		return nil, structs.Errorf(structs.KindInternal, "flavor %q was not stored", f.ID)
	}
	return out.Flavors[0], nil
}

func (a *API) flavorDelete(w http.ResponseWriter, q *request) (any, error) {
	args := structs.FlavorDeleteRequest{IDs: []string{q.param("id")}}
	var out structs.GenericResponse
	if err := q.rpc.RPC("Flavor.Delete", &args, &out); err != nil {
		return nil, err
	}
	setIndex(w, out.Index)
	return nil, nil
}
