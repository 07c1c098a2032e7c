package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/internal/route"
)

// v21Updated is the "updated" stamp Nova gives the v2.1 API.
const v21Updated = "2013-07-23T11:33:21Z"

func (a *API) versionRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /extensions", Access: anyone, Policy: "os_compute_api:extensions", Handle: a.extensionList},
		{Pattern: "GET /extensions/{alias}", Access: anyone, Policy: "os_compute_api:extensions", Handle: a.extensionShow},
	}
}

// version is the v2.1 entry of version discovery.
func (q *request) version(detailed bool) map[string]any {
	v := map[string]any{
		"id":          "v2.1",
		"status":      "CURRENT",
		"version":     versionString(maxMicroversion),
		"min_version": versionString(minMicroversion),
		"updated":     v21Updated,
		"links":       []link{{Href: q.base + "/v2.1/", Rel: "self"}},
	}
	if detailed {
		v["links"] = []link{{Href: q.base + "/v2.1/", Rel: "self"},
			{Href: "http://docs.openstack.org/", Rel: "describedby", Type: "text/html"}}
		v["media-types"] = []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.compute+json;version=2.1"}}
	}
	return v
}

// versionsIndex answers GET /compute/: the API versions served.
func (a *API) versionsIndex(q *request) (*reply, error) {
	return okReply(map[string]any{"versions": []any{q.version(false)}})
}

// versionShow answers GET /compute/v2.1/.
func (a *API) versionShow(q *request) (*reply, error) {
	return okReply(map[string]any{"version": q.version(true)})
}

// extensionList answers GET /extensions: Nova's extensions are folded
// into microversions, and Stratus lists none.
func (a *API) extensionList(q *request) (*reply, error) {
	return okReply(map[string]any{"extensions": []any{}})
}

func (a *API) extensionShow(q *request) (*reply, error) {
	return nil, faultf(http.StatusNotFound, "Unable to find extension %s", q.param("alias"))
}
