package metadata

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stratus-cloud/stratus/policy"
)

// TestRoutesStateWhoMayCall: only the version list is public; every
// other route answers the instance the request is identified as.
func TestRoutesStateWhoMayCall(t *testing.T) {
	s := New(Config{Call: func(string, any, any) error { return nil }})
	for _, r := range s.table.Routes() {
		want := policy.Authenticated
		if r.Pattern == "GET /" {
			want = policy.Public
		}
		if r.Access != want {
			t.Errorf("%s: %s, want %s", r.Pattern, r.Access, want)
		}
	}
}

// TestRoutingComesBeforeIdentification: a method no path takes is a 405
// with Allow "GET, HEAD" before the caller is identified, the version
// list needs no identification, and everything else does (here it
// fails: the servers cannot be reached).
func TestRoutingComesBeforeIdentification(t *testing.T) {
	calls := 0
	s := New(Config{HostIDs: func() []string { return []string{"h1"} }, Call: func(string, any, any) error {
		calls++
		return errors.New("unreachable")
	}})
	for _, c := range []struct {
		method, path string
		status       int
		identifies   bool
	}{
		{"GET", "/", 200, false},
		{"HEAD", "/", 200, false},
		{"GET", "//./", 200, false},
		{"POST", "/", 405, false},
		{"PUT", "/openstack/latest/meta_data.json", 405, false},
		{"PUT", "/openstack/latest/password", 405, false},
		{"POST", "/openstack/latest/meta_data.json", 405, false},
		{"POST", "/latest/password", 405, false},
		{"DELETE", "/latest/meta-data/", 405, false},
		{"POST", "/openstack/latest/password", 500, true},
		{"POST", "/openstack/latest/password/", 500, true},
		{"GET", "/openstack", 500, true},
		{"GET", "/openstack/latest", 500, true},
		{"GET", "/openstack/latest/meta_data.json", 500, true},
		{"GET", "/openstack/latest/a/b", 500, true},
		{"GET", "/latest", 500, true},
		{"HEAD", "/latest/meta-data/instance-id", 500, true},
		{"GET", "/2009-04-04/meta-data/a%2Fb", 500, true},
	} {
		calls = 0
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(c.method, "http://169.254.169.254"+c.path, nil))
		if w.Code != c.status || (calls > 0) != c.identifies {
			t.Errorf("%s %s: %d (%d calls), want %d (identifies %v)", c.method, c.path, w.Code, calls, c.status, c.identifies)
		}
		if c.status == http.StatusMethodNotAllowed && w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q", c.method, c.path, w.Header().Get("Allow"))
		}
		s.mu.Lock()
		s.ipsRead = s.ipsRead.AddDate(-1, 0, 0)
		s.mu.Unlock()
	}
}
