package nova

// v21Updated is the "updated" stamp Nova gives the v2.1 API.
const v21Updated = "2013-07-23T11:33:21Z"

// v20Path is where Nova serves its legacy v2.0 API: the v2.1 API at
// 2.1, without microversion headers and with request bodies' unknown
// properties dropped rather than refused (router.go, body.go).
const (
	v20Updated = "2025-07-04T12:00:00Z"
	v20Path    = "v2"
)

// versionInfo is one API version of version discovery, with its
// document's links and media type when detailed.
type versionInfo struct {
	id, path, status, version, minVersion, updated, mediaType string
}

// apiVersions are the versions Nova lists, in its order.
func apiVersions() []versionInfo {
	return []versionInfo{
		{id: "v2.0", path: v20Path, status: "DEPRECATED", updated: v20Updated, mediaType: "2"},
		{id: "v2.1", path: "v2.1", status: "CURRENT", version: versionString(maxMicroversion),
			minVersion: versionString(minMicroversion), updated: v21Updated, mediaType: "2.1"},
	}
}

// view is a version in Nova's body.
func (v versionInfo) view(base string, detailed bool) map[string]any {
	out := map[string]any{
		"id":          v.id,
		"status":      v.status,
		"version":     v.version,
		"min_version": v.minVersion,
		"updated":     v.updated,
		"links":       []link{{Href: base + "/" + v.path + "/", Rel: "self"}},
	}
	if detailed {
		out["links"] = []link{{Href: base + "/" + v.path + "/", Rel: "self"},
			{Href: "http://docs.openstack.org/", Rel: "describedby", Type: "text/html"}}
		out["media-types"] = []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.compute+json;version=" + v.mediaType}}
	}
	return out
}

// versionsIndex answers GET /compute/: the API versions, v2.0 first, as
// Nova lists them.
func (a *API) versionsIndex(q *request) (*reply, error) {
	var views []any
	for _, v := range apiVersions() {
		views = append(views, v.view(q.base, false))
	}
	return okReply(map[string]any{"versions": views})
}

// versionShow answers GET /compute/v2.1/ and /compute/v2/: that
// version's document.
func (a *API) versionShow(q *request, path string) (*reply, error) {
	for _, v := range apiVersions() {
		if v.path != path {
			continue
		}
		return okReply(map[string]any{"version": v.view(q.base, true)})
	}
	return nil, notFound(msgNotFound)
}
