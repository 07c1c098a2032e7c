package nova

import (
	"net/http"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Server tags (2.26): a sorted set of up to 50 strings per server, kept
// in the replicated instance record and changed through Instance.Update,
// so concurrent adds and removes never lose each other.

func (a *API) tagRoutes() []route.Route[handler] {
	const rule = "os_compute_api:os-server-tags:"
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/tags", MinVersion: 26, Access: reader, Policy: rule + "index", Handle: a.tagList},
		{Pattern: "GET /servers/{id}/tags/{tag}", MinVersion: 26, Access: reader, Policy: rule + "show", Handle: a.tagShow},
		{Pattern: "PUT /servers/{id}/tags", MinVersion: 26, Access: member, Policy: rule + "update_all", Handle: a.tagReplace},
		{Pattern: "PUT /servers/{id}/tags/{tag}", MinVersion: 26, Access: member, Policy: rule + "update", Handle: a.tagAdd},
		{Pattern: "DELETE /servers/{id}/tags", MinVersion: 26, Access: member, Policy: rule + "delete_all", Handle: a.tagDeleteAll},
		{Pattern: "DELETE /servers/{id}/tags/{tag}", MinVersion: 26, Access: member, Policy: rule + "delete", Handle: a.tagDelete},
	}
}

// tagsOf is a server's tags for its view: never null.
func tagsOf(inst *structs.Instance) []string {
	if len(inst.Tags) == 0 {
		return []string{}
	}
	return inst.Tags
}

// guestHostname is the server's host name: the one set (2.90), else
// one derived from its name as Nova derives it.
func guestHostname(inst *structs.Instance) string { return inst.GuestHostname() }

// arrayOf returns m[k] as an array, or nil.
func arrayOf(m map[string]any, k string) []any {
	a, _ := m[k].([]any)
	return a
}

// tagsSchema is Nova's update_all body.
var tagsSchema = &schema{types: tObject, required: []string{"tags"}, props: map[string]*schema{
	"tags": {types: tArray, maxItems: structs.MaxServerTags, items: &schema{types: tString, minLen: 1, maxLen: 60, pattern: tagPattern}},
}}

func (a *API) tagList(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"tags": tagsOf(inst)})
}

func (a *API) tagShow(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if !inst.HasTag(q.param("tag")) {
		return nil, notFound("Tag %s could not be found.", q.param("tag"))
	}
	return noContent()
}

// updateTags changes the tags through the servers, worded as Nova.
func (q *request) updateTags(inst *structs.Instance, args structs.InstanceUpdateRequest) (*structs.Instance, error) {
	args.InstanceID = inst.ID
	var out structs.InstanceUpdateResponse
	if err := q.call("Instance.Update", &args, &out); err != nil {
		switch structs.KindOf(err) {
		case structs.KindConflict:
			return nil, faultf(http.StatusConflict, "%s", structs.Message(err))
		case structs.KindInvalid:
			return nil, badRequest("%s", structs.Message(err))
		case structs.KindNotFound:
			return nil, notFound("%s", structs.Message(err))
		}
		return nil, err
	}
	return out.Instance, nil
}

// tagReplace answers PUT /servers/{id}/tags: the new set, 200.
func (a *API) tagReplace(q *request) (*reply, error) {
	body, err := decodeBody(q, tagsSchema)
	if err != nil {
		return nil, err
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	var tags []string
	for _, t := range arrayOf(body, "tags") {
		tags = append(tags, t.(string))
	}
	after, err := q.updateTags(inst, structs.InstanceUpdateRequest{ReplaceTags: true, AddTags: tags})
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"tags": tagsOf(after)})
}

// tagAdd answers PUT /servers/{id}/tags/{tag}: 201 with a Location when
// new, 204 when the server already had it.
func (a *API) tagAdd(q *request) (*reply, error) {
	tag := q.param("tag")
	if len([]rune(tag)) > 60 || strings.ContainsAny(tag, "/,") {
		return nil, badRequest("Tag '%s' is invalid. It must be a non-empty string of at most 60 characters without '/' or ','.", tag)
	}
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if inst.HasTag(tag) {
		return noContent()
	}
	if len(inst.Tags) >= structs.MaxServerTags {
		return nil, badRequest("The number of tags exceeded the per-server limit %d", structs.MaxServerTags)
	}
	if _, err := q.updateTags(inst, structs.InstanceUpdateRequest{AddTags: []string{tag}}); err != nil {
		return nil, err
	}
	r := &reply{status: http.StatusCreated}
	r.header = http.Header{"Location": {q.selfHref("servers", inst.ID, "tags", tag)}}
	return r, nil
}

func (a *API) tagDeleteAll(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if _, err := q.updateTags(inst, structs.InstanceUpdateRequest{ReplaceTags: true}); err != nil {
		return nil, err
	}
	return noContent()
}

func (a *API) tagDelete(q *request) (*reply, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	tag := q.param("tag")
	if !inst.HasTag(tag) {
		return nil, notFound("Tag %s could not be found.", tag)
	}
	if _, err := q.updateTags(inst, structs.InstanceUpdateRequest{RemoveTags: []string{tag}}); err != nil {
		return nil, err
	}
	return noContent()
}

// tagFilter matches the tags filters of the server list (2.26): tags
// (all of), tags-any, not-tags (not all of), not-tags-any (none of),
// each a comma-separated list.
func tagFilter(kind, value string) func(serverEntry) bool {
	want := strings.Split(value, ",")
	has := func(e serverEntry, t string) bool { return e.inst.HasTag(t) }
	all := func(e serverEntry) bool { return !slices.ContainsFunc(want, func(t string) bool { return !has(e, t) }) }
	anyOf := func(e serverEntry) bool { return slices.ContainsFunc(want, func(t string) bool { return has(e, t) }) }
	switch kind {
	case "tags":
		return all
	case "tags-any":
		return anyOf
	case "not-tags":
		return func(e serverEntry) bool { return !all(e) }
	}
	return func(e serverEntry) bool { return !anyOf(e) }
}
