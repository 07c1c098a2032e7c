package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

func (a *API) metadataRoutes() []route.Route[handler] {
	const rule = "os_compute_api:server-metadata:"
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/metadata", Access: reader, Policy: rule + "index", Handle: a.metadataList},
		{Pattern: "POST /servers/{id}/metadata", Access: member, Policy: rule + "create", Handle: a.metadataMerge},
		{Pattern: "PUT /servers/{id}/metadata", Access: member, Policy: rule + "update_all", Handle: a.metadataReplace},
		{Pattern: "GET /servers/{id}/metadata/{key}", Access: reader, Policy: rule + "show", Handle: a.metadataShow},
		{Pattern: "PUT /servers/{id}/metadata/{key}", Access: member, Policy: rule + "update", Handle: a.metadataSet},
		{Pattern: "DELETE /servers/{id}/metadata/{key}", Access: member, Policy: rule + "delete", Handle: a.metadataDelete},
		{Pattern: "GET /servers/{id}/ips", Access: reader, Policy: "os_compute_api:ips:index", Handle: a.ipsList},
		{Pattern: "GET /servers/{id}/ips/{network}", Access: reader, Policy: "os_compute_api:ips:show", Handle: a.ipsShow},
	}
}

var (
	metadataBody = &schema{types: tObject, required: []string{"metadata"}, props: map[string]*schema{"metadata": metadataSchema}}
	metaItemBody = &schema{types: tObject, required: []string{"meta"}, props: map[string]*schema{"meta": {
		types: tObject, open: true, keys: metadataKeyPattern, extra: &schema{types: tString, maxLen: 255}}}}
)

func (a *API) metadataList(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"metadata": metadataOf(inst)})
}

func (a *API) metadataShow(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	key := q.param("key")
	v, ok := inst.Metadata[key]
	if !ok {
		return nil, notFound("Metadata item was not found")
	}
	return okReply(map[string]any{"meta": map[string]string{key: v}})
}

// updateMetadata sends a metadata change through Instance.Update and
// maps its refusals to Nova's.
func (q *request) updateMetadata(args *structs.InstanceUpdateRequest) (*structs.Instance, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	args.InstanceID = inst.ID
	var out structs.InstanceUpdateResponse
	if err := q.call("Instance.Update", args, &out); err != nil {
		switch structs.KindOf(err) {
		case structs.KindNotFound:
			if len(args.DeleteMetadata) > 0 {
				return nil, notFound("Metadata item was not found")
			}
			return nil, notFound("Instance %s could not be found.", inst.ID)
		case structs.KindQuotaReached:
			return nil, faultf(http.StatusForbidden, "Quota exceeded for metadata_items: %s", structs.Message(err))
		}
		return nil, err
	}
	return out.Instance, nil
}

// metadataMerge answers POST /metadata: the given items are added.
func (a *API) metadataMerge(q *request) (*reply, error) {
	body, err := decodeBody(q, metadataBody)
	if err != nil {
		return nil, err
	}
	inst, err := q.updateMetadata(&structs.InstanceUpdateRequest{SetMetadata: stringMap(object(body, "metadata"))})
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"metadata": metadataOf(inst)})
}

// metadataReplace answers PUT /metadata: the items replace all.
func (a *API) metadataReplace(q *request) (*reply, error) {
	body, err := decodeBody(q, metadataBody)
	if err != nil {
		return nil, err
	}
	set := stringMap(object(body, "metadata"))
	inst, err := q.updateMetadata(&structs.InstanceUpdateRequest{ReplaceMetadata: true, SetMetadata: set})
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"metadata": metadataOf(inst)})
}

// metadataSet answers PUT /metadata/{key}: a body of exactly that key.
func (a *API) metadataSet(q *request) (*reply, error) {
	body, err := decodeBody(q, metaItemBody)
	if err != nil {
		return nil, err
	}
	meta := stringMap(object(body, "meta"))
	key := q.param("key")
	if _, ok := meta[key]; !ok {
		return nil, badRequest("Request body and URI mismatch")
	}
	if len(meta) > 1 {
		return nil, badRequest("Request body contains too many items")
	}
	if _, err := q.updateMetadata(&structs.InstanceUpdateRequest{SetMetadata: meta}); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"meta": meta})
}

func (a *API) metadataDelete(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if _, ok := inst.Metadata[q.param("key")]; !ok {
		return nil, notFound("Metadata item was not found")
	}
	if _, err := q.updateMetadata(&structs.InstanceUpdateRequest{DeleteMetadata: []string{q.param("key")}}); err != nil {
		return nil, err
	}
	return noContent()
}

// ipsList answers GET /servers/{id}/ips: the server's addresses by
// network name.
func (a *API) ipsList(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"addresses": q.ipsOf(inst)})
}

func (a *API) ipsShow(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	network := q.param("network")
	if ips, ok := q.ipsOf(inst)[network]; ok {
		return okReply(map[string]any{network: ips})
	}
	return nil, notFound("Instance is not a member of specified network")
}
