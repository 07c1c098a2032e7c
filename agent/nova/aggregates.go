package nova

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const aggregateRule = "os_compute_api:os-aggregates:"

func (a *API) aggregateRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-aggregates", Access: admin, Policy: aggregateRule + "index", Handle: a.aggregateList},
		{Pattern: "POST /os-aggregates", Access: admin, Policy: aggregateRule + "create", Handle: a.aggregateCreate},
		{Pattern: "GET /os-aggregates/{id}", Access: admin, Policy: aggregateRule + "show", Handle: a.aggregateShow},
		{Pattern: "PUT /os-aggregates/{id}", Access: admin, Policy: aggregateRule + "update", Handle: a.aggregateUpdate},
		{Pattern: "DELETE /os-aggregates/{id}", Access: admin, Policy: aggregateRule + "delete", Handle: a.aggregateDelete},
		// Each action has its own rule, checked once the body names it.
		{Pattern: "POST /os-aggregates/{id}/action", Access: anyone, Policy: aggregateRule + "add_host", Handle: a.aggregateAction},
		{Pattern: "POST /os-aggregates/{id}/images", MinVersion: 81, Access: admin, Policy: "compute:aggregates:images", Handle: a.aggregateImages},
	}
}

// Nova's aggregate schemas: a name and an optional zone (null for
// none); update needs one of them; the actions name a host or give
// metadata whose null values delete keys.
var (
	zoneNameSchema  = &schema{types: tString | tNull, minLen: 1, maxLen: 255, format: checkZoneName}
	aggregateSchema = &schema{types: tObject, required: []string{"aggregate"}, props: map[string]*schema{
		"aggregate": {types: tObject, required: []string{"name"}, props: map[string]*schema{
			"name": nameSchema, "availability_zone": zoneNameSchema}},
	}}
	aggregateUpdateSchema = &schema{types: tObject, required: []string{"aggregate"}, props: map[string]*schema{
		"aggregate": {types: tObject, props: map[string]*schema{
			"name": {types: tString, minLen: 1, maxLen: 255, format: checkPrintable}, "availability_zone": zoneNameSchema}},
	}}
	aggregateHostSchema = &schema{types: tObject, required: []string{"host"}, props: map[string]*schema{
		"host": {types: tString, minLen: 1, maxLen: 255}}}
	aggregateMetadataSchema = &schema{types: tObject, required: []string{"metadata"}, props: map[string]*schema{
		"metadata": {types: tObject, open: true, keys: metadataKeyPattern, extra: &schema{types: tString | tNull, maxLen: 255}}}}
)

// checkZoneName is Nova's az_name format, and refuses ':' which
// separates the zone from a host in "az:host".
func checkZoneName(s string) string {
	if msg := checkName(s); msg != "" {
		return strings.ReplaceAll(msg, "'name'", "'availability_zone'")
	}
	if strings.Contains(s, ":") {
		return "An invalid 'availability_zone' value was provided. The availability zone name must not contain ':'."
	}
	return ""
}

// aggregateID reads the {id} of the path: Nova's aggregate ids are
// integers.
func (q *request) aggregateID() (int64, error) {
	id, err := strconv.ParseInt(q.param("id"), 10, 64)
	if err != nil {
		return 0, badRequest("Invalid input received: id must be an integer")
	}
	return id, nil
}

// hostNames maps host ids to names, for the aggregates' host lists.
func (q *request) hostNames() (map[string]string, error) {
	hosts, err := q.listHosts()
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(hosts))
	for _, h := range hosts {
		names[h.ID] = h.Name
	}
	return names, nil
}

// aggregateView is an aggregate in Nova's body; hosts are named as
// Nova's services are.
func (q *request) aggregateView(ag *structs.Aggregate, names map[string]string) map[string]any {
	hosts := make([]string, 0, len(ag.Hosts))
	for _, id := range ag.Hosts {
		if n, ok := names[id]; ok {
			hosts = append(hosts, n)
		} else {
			hosts = append(hosts, id)
		}
	}
	metadata := ag.Metadata
	if metadata == nil {
		metadata = map[string]string{}
	}
	v := map[string]any{"id": ag.ID, "name": ag.Name, "availability_zone": nullString(ag.AZ()), "hosts": hosts,
		"metadata": metadata, "created_at": pyTime(ag.CreatedAt), "updated_at": pyTime(ag.UpdatedAt),
		"deleted": false, "deleted_at": nil}
	if q.atLeast(41) {
		v["uuid"] = ag.UUID
	}
	return v
}

func (q *request) aggregateReply(ag *structs.Aggregate) (*reply, error) {
	names, err := q.hostNames()
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"aggregate": q.aggregateView(ag, names)})
}

// aggregateList answers GET /os-aggregates (admin).
func (a *API) aggregateList(q *request) (*reply, error) {
	var out structs.AggregateListResponse
	if err := q.call("Aggregate.List", &structs.AggregateListRequest{}, &out); err != nil {
		return nil, err
	}
	names, err := q.hostNames()
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(out.Aggregates))
	for _, ag := range out.Aggregates {
		views = append(views, q.aggregateView(ag, names))
	}
	return okReply(map[string]any{"aggregates": views})
}

func (a *API) aggregateShow(q *request) (*reply, error) {
	id, err := q.aggregateID()
	if err != nil {
		return nil, err
	}
	var out structs.SingleAggregateResponse
	if err := q.call("Aggregate.Get", &structs.AggregateSpecificRequest{AggregateID: id}, &out); err != nil {
		return nil, notFoundAs(err, "Aggregate %d could not be found.", id)
	}
	return q.aggregateReply(out.Aggregate)
}

// aggregateCreate answers POST /os-aggregates: 200 with the aggregate,
// without hosts and metadata as in Nova; a name in use is 409.
func (a *API) aggregateCreate(q *request) (*reply, error) {
	body, err := decodeBody(q, aggregateSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "aggregate")
	args := &structs.AggregateCreateRequest{}
	args.Name, _ = stringOf(in, "name")
	args.AZ, _ = stringOf(in, "availability_zone")
	var out structs.SingleAggregateResponse
	if err := q.call("Aggregate.Create", args, &out); err != nil {
		return nil, err
	}
	v := q.aggregateView(out.Aggregate, nil)
	delete(v, "hosts")
	delete(v, "metadata")
	return okReply(map[string]any{"aggregate": v})
}

// aggregateUpdate answers PUT /os-aggregates/{id}: a new name or zone.
func (a *API) aggregateUpdate(q *request) (*reply, error) {
	body, err := decodeBody(q, aggregateUpdateSchema)
	if err != nil {
		return nil, err
	}
	in := object(body, "aggregate")
	if len(in) == 0 {
		return nil, validationError([]string{"aggregate"}, in, pyRepr(in)+" is not valid under any of the given schemas")
	}
	id, err := q.aggregateID()
	if err != nil {
		return nil, err
	}
	args := &structs.AggregateUpdateRequest{AggregateID: id}
	if name, ok := stringOf(in, "name"); ok {
		name = strings.TrimSpace(name)
		args.Name = &name
	}
	if _, ok := in["availability_zone"]; ok {
		az, _ := stringOf(in, "availability_zone")
		args.AZ = &az
	}
	var out structs.SingleAggregateResponse
	if err := q.call("Aggregate.Update", args, &out); err != nil {
		return nil, notFoundAs(err, "Aggregate %d could not be found.", id)
	}
	return q.aggregateReply(out.Aggregate)
}

// aggregateDelete answers DELETE /os-aggregates/{id}: 200 without a
// body, as Nova; an aggregate with hosts is 400.
func (a *API) aggregateDelete(q *request) (*reply, error) {
	id, err := q.aggregateID()
	if err != nil {
		return nil, err
	}
	if err := q.call("Aggregate.Delete", &structs.AggregateDeleteRequest{AggregateID: id}, &structs.GenericResponse{}); err != nil {
		return nil, notFoundAs(err, "Aggregate %d could not be found.", id)
	}
	return &reply{status: http.StatusOK}, nil
}

// aggregateAction answers POST /os-aggregates/{id}/action: exactly one
// of add_host, remove_host, set_metadata, each admin-only.
func (a *API) aggregateAction(q *request) (*reply, error) {
	body, err := decodeBody(q, anyBody)
	if err != nil {
		return nil, err
	}
	if len(body) != 1 {
		return nil, badRequest("Malformed request body")
	}
	var name string
	for k := range body {
		name = k
	}
	var s *schema
	switch name {
	case "add_host", "remove_host":
		s = aggregateHostSchema
	case "set_metadata":
		s = aggregateMetadataSchema
	default:
		return nil, badRequest("There is no such action: %s", name)
	}
	if !q.isAdmin() {
		return nil, policyFault(aggregateRule + name)
	}
	if err := s.validate(body[name], []string{name}); err != nil {
		return nil, err
	}
	in := object(body, name)
	id, err := q.aggregateID()
	if err != nil {
		return nil, err
	}
	var out structs.SingleAggregateResponse
	switch name {
	case "add_host":
		host, _ := stringOf(in, "host")
		// Nova's own words come back: not found (404), already there
		// or in another zone (409).
		if err := q.call("Aggregate.AddHost", &structs.AggregateHostRequest{AggregateID: id, Host: host}, &out); err != nil {
			return nil, err
		}
	case "remove_host":
		host, _ := stringOf(in, "host")
		if err := q.call("Aggregate.RemoveHost", &structs.AggregateHostRequest{AggregateID: id, Host: host}, &out); err != nil {
			switch structs.KindOf(err) {
			case structs.KindNotFound:
				return nil, notFound("Cannot remove host %s in aggregate %d", host, id)
			case structs.KindConflict, structs.KindInvalid:
				return nil, faultf(http.StatusConflict, "Cannot remove host %s in aggregate %d", host, id)
			}
			return nil, err
		}
	case "set_metadata":
		args := &structs.AggregateMetadataRequest{AggregateID: id, Set: map[string]string{}}
		for k, v := range object(in, "metadata") {
			if s, ok := v.(string); ok {
				args.Set[k] = s
			} else {
				args.Delete = append(args.Delete, k)
			}
		}
		if err := q.call("Aggregate.SetMetadata", args, &out); err != nil {
			return nil, notFoundAs(err, "Aggregate %d could not be found.", id)
		}
	}
	return q.aggregateReply(out.Aggregate)
}

// aggregateImages answers 2.81's image cache request (202): every host
// of the aggregate fetches the images into its image cache (see
// agent/image_precache.go). An unknown image is a 400, duplicates too.
func (a *API) aggregateImages(q *request) (*reply, error) {
	body, err := decodeBody(q, aggregateImagesSchema)
	if err != nil {
		return nil, err
	}
	id, err := q.aggregateID()
	if err != nil {
		return nil, err
	}
	return q.cacheImages(id, arrayOf(body, "cache"))
}

// aggregateImagesSchema is Nova's 2.81 body: images to cache, by id.
var aggregateImagesSchema = &schema{types: tObject, required: []string{"cache"}, props: map[string]*schema{
	"cache": {types: tArray, minItems: 1, items: &schema{types: tObject, required: []string{"id"}, props: map[string]*schema{
		"id": {types: tString, format: checkUUID}}}}}}

// cacheImages asks the servers to have the aggregate's hosts cache the
// images, with Nova's answers: duplicates and unknown or inactive
// images 400, an unknown aggregate 404.
func (q *request) cacheImages(id int64, cache []any) (*reply, error) {
	var ids []string
	for _, item := range cache {
		img, _ := stringOf(item.(map[string]any), "id")
		if containsString(ids, img) {
			return nil, badRequest("Duplicate images in request")
		}
		ids = append(ids, img)
	}
	err := q.call("ImageCache.Request", &structs.ImageCacheCreateRequest{AggregateID: id, ImageIDs: ids}, &structs.GenericResponse{})
	if err == nil {
		return acceptedReply(nil)
	}
	switch structs.KindOf(err) {
	case structs.KindNotFound:
		return nil, notFound("Aggregate %d could not be found.", id)
	case structs.KindInvalid:
		return nil, badRequest("%s", structs.Message(err))
	}
	return nil, err
}
