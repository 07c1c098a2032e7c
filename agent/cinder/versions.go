package cinder

import "net/http"

// versionDoc is Cinder's one version, v3.0, with its self link.
func (q *request) versionDoc() map[string]any {
	self := requestBase(q.r) + MountPath + "/v3/"
	return map[string]any{"versions": []map[string]any{{
		"id": "v3.0", "status": "CURRENT", "version": "3.70", "min_version": "3.0", "updated": versionUpdated,
		"links": []map[string]string{
			{"rel": "describedby", "type": "text/html", "href": "https://docs.openstack.org/"},
			{"rel": "self", "href": self},
		},
		"media-types": []map[string]string{{"base": "application/json", "type": "application/vnd.openstack.volume+json;version=3"}},
	}}}
}

// versionsAll answers GET /volume/: every version, 300 Multiple
// Choices, as Cinder's unversioned root.
func (a *API) versionsAll(q *request) error {
	return q.json(http.StatusMultipleChoices, q.versionDoc())
}

// versionsV3 answers GET /volume/v3/: the same document, 200.
func (a *API) versionsV3(q *request) error { return q.json(http.StatusOK, q.versionDoc()) }
