package nova

import "net/http"

func (a *API) tagRoutes() []routeSpec {
	const rule = "os_compute_api:os-server-tags:"
	return []routeSpec{
		{pattern: "GET /servers/{id}/tags", minV: 26, access: reader, policy: rule + "index", handle: a.tagList},
		{pattern: "GET /servers/{id}/tags/{tag}", minV: 26, access: reader, policy: rule + "show", handle: a.tagShow},
		{pattern: "PUT /servers/{id}/tags", minV: 26, access: member, policy: rule + "update_all", handle: a.tagWrite},
		{pattern: "PUT /servers/{id}/tags/{tag}", minV: 26, access: member, policy: rule + "update", handle: a.tagWrite},
		{pattern: "DELETE /servers/{id}/tags", minV: 26, access: member, policy: rule + "delete_all", handle: a.tagWrite},
		{pattern: "DELETE /servers/{id}/tags/{tag}", minV: 26, access: member, policy: rule + "delete", handle: a.tagWrite},
	}
}

// tagList answers GET /servers/{id}/tags (2.26): Stratus does not store
// server tags yet, so every server has none.
func (a *API) tagList(q *request) (*reply, error) {
	if _, err := q.getServer(q.param("id")); err != nil {
		return nil, err
	}
	return okReply(map[string]any{"tags": []string{}})
}

func (a *API) tagShow(q *request) (*reply, error) {
	if _, err := q.getServer(q.param("id")); err != nil {
		return nil, err
	}
	return nil, notFound("Tag %s could not be found.", q.param("tag"))
}

// tagWrite answers the tag writes, which need tag storage.
func (a *API) tagWrite(q *request) (*reply, error) {
	if _, err := q.getServer(q.param("id")); err != nil {
		return nil, err
	}
	return nil, faultf(http.StatusNotImplemented, msgNotSupported)
}
