package cinder

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMicroversionNegotiation(t *testing.T) {
	for _, c := range []struct {
		header string
		want   int
		status int
	}{
		{"", 0, 0},
		{"volume 3.27", 27, 0},
		{"volume latest", maxVersion, 0},
		{"compute 2.90, volume 3.5", 5, 0},
		{"compute 2.90", 0, 0},
		{"volume 3.71", 0, http.StatusNotAcceptable},
		{"volume 2.0", 0, http.StatusNotAcceptable},
		{"volume three", 0, http.StatusBadRequest},
	} {
		r := httptest.NewRequest(http.MethodGet, "/volume/v3/volumes", nil)
		if c.header != "" {
			r.Header.Set(versionHeader, c.header)
		}
		q := &request{r: r}
		err := q.negotiate()
		status, _ := statusOf(err)
		if err == nil {
			status = 0
		}
		if status != c.status || (err == nil && q.version != c.want) {
			t.Errorf("%q: version 3.%d, error %v; want 3.%d, status %d", c.header, q.version, err, c.want, c.status)
		}
	}
}

// TestFaultBodies: routing failures and refusals answer Cinder's fault
// shape without reaching the servers.
func TestFaultBodies(t *testing.T) {
	a := New(Config{})
	for _, c := range []struct {
		method, path, fault string
		status              int
	}{
		{"GET", "/volume/v4/volumes", "itemNotFound", http.StatusNotFound},
		{"PATCH", "/volume/v3/volumes", "badMethod", http.StatusMethodNotAllowed},
		{"GET", "/volume/v3/volumes", "unauthorized", http.StatusUnauthorized},
	} {
		w := httptest.NewRecorder()
		a.Handler().ServeHTTP(w, httptest.NewRequest(c.method, c.path, nil))
		var body map[string]map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != c.status ||
			body[c.fault]["code"] != float64(c.status) || body[c.fault]["message"] == "" {
			t.Errorf("%s %s: %d %s", c.method, c.path, w.Code, w.Body)
		}
		if !strings.HasPrefix(w.Header().Get("X-Openstack-Request-Id"), "req-") {
			t.Errorf("%s %s: no request id", c.method, c.path)
		}
	}
}
