package glance

import (
	"net/http"

	"github.com/stratus-cloud/stratus/internal/httpx"
)

// apiVersions are the Image API versions served, newest first: 2.7
// (os_hidden) and every earlier 2.x. Interoperable import (2.6) is
// answered with no import methods, as a Glance without any enabled.
var apiVersions = []string{"v2.7", "v2.6", "v2.5", "v2.4", "v2.3", "v2.2", "v2.1", "v2.0"}

// baseURL is the external URL the client reached the agent at
// (httpx.ExternalBase), plus MountPath.
func baseURL(r *http.Request) string {
	return httpx.ExternalBase(r) + MountPath
}

func versionsBody(r *http.Request) map[string]any {
	self := baseURL(r) + "/v2/"
	list := make([]map[string]any, 0, len(apiVersions))
	for i, v := range apiVersions {
		status := "SUPPORTED"
		if i == 0 {
			status = "CURRENT"
		}
		list = append(list, map[string]any{"id": v, "status": status,
			"links": []map[string]string{{"rel": "self", "href": self}}})
	}
	return map[string]any{"versions": list}
}

// versions answers GET /image as Glance answers GET /: 300 Multiple
// Choices with the version list.
func (a *API) versions(q *request) error {
	return q.json(http.StatusMultipleChoices, versionsBody(q.r))
}

// versionList answers GET /image/versions (and /image/v2): 200 with the
// version list.
func (a *API) versionList(q *request) error {
	return q.json(http.StatusOK, versionsBody(q.r))
}

// importInfo answers GET /v2/info/import: no import methods are enabled;
// data is uploaded with PUT /v2/images/{id}/file.
func (a *API) importInfo(q *request) error {
	return q.json(http.StatusOK, map[string]any{"import-methods": map[string]any{
		"description": "Import methods available.", "type": "array", "value": []string{}}})
}
