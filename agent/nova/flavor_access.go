package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Nova's os-flavor-access: the projects that may use a private flavor.

const flavorAccessRule = "os_compute_api:os-flavor-access"

func (a *API) flavorAccessRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /flavors/{id}/os-flavor-access", Access: admin, Policy: flavorAccessRule, Handle: a.flavorAccessList},
		{Pattern: "POST /flavors/{id}/action", Access: admin, Policy: flavorAccessRule + ":add_tenant_access", Handle: a.flavorAction},
	}
}

// flavorAccessBody is the list every flavor access call answers.
func flavorAccessBody(f *structs.Flavor) map[string]any {
	list := make([]map[string]any, 0, len(f.Projects))
	for _, p := range f.Projects {
		list = append(list, map[string]any{"flavor_id": f.ID, "tenant_id": p})
	}
	return map[string]any{"flavor_access": list}
}

func (a *API) flavorAccessList(q *request) (*reply, error) {
	f, err := q.getFlavor(q.param("id"))
	if err != nil {
		return nil, err
	}
	if f.IsPublic {
		return nil, notFound("Access list not available for public flavors.")
	}
	return okReply(flavorAccessBody(f))
}

// flavorActionSchema is one of addTenantAccess and removeTenantAccess.
var flavorActionSchema = &schema{types: tObject, props: map[string]*schema{
	"addTenantAccess": {types: tObject, required: []string{"tenant"}, props: map[string]*schema{
		"tenant": {types: tString, minLen: 1, maxLen: 255}}},
	"removeTenantAccess": {types: tObject, required: []string{"tenant"}, props: map[string]*schema{
		"tenant": {types: tString, minLen: 1, maxLen: 255}}},
}}

// flavorAction answers POST /flavors/{id}/action: addTenantAccess or
// removeTenantAccess, 200 with the access list.
func (a *API) flavorAction(q *request) (*reply, error) {
	body, err := decodeBody(q, flavorActionSchema)
	if err != nil {
		return nil, err
	}
	if len(body) != 1 {
		return nil, badRequest("Malformed request body")
	}
	args := structs.FlavorAccessRequest{FlavorID: q.param("id")}
	if add := object(body, "addTenantAccess"); add != nil {
		args.AddProject, _ = stringOf(add, "tenant")
	} else {
		args.RemoveProject, _ = stringOf(object(body, "removeTenantAccess"), "tenant")
	}
	if _, err := q.getFlavor(args.FlavorID); err != nil {
		return nil, err
	}
	var out structs.SingleFlavorResponse
	if err := q.call("Flavor.Access", &args, &out); err != nil {
		switch structs.KindOf(err) {
		case structs.KindConflict:
			return nil, faultf(http.StatusConflict, "%s", structs.Message(err))
		case structs.KindNotFound:
			return nil, notFound("%s", structs.Message(err))
		}
		return nil, err
	}
	return okReply(flavorAccessBody(out.Flavor))
}
