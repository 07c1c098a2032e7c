package identity

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// fakeRPC answers with a function; a nil answer leaves replies empty.
type fakeRPC func(method string, args, reply any) error

func (f fakeRPC) RPC(method string, args, reply any) error { return f(method, args, reply) }

func TestStopDoesNotWaitForBlockingQueries(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	defer close(release)
	svc, err := New(Config{RPC: fakeRPC(func(string, any, any) error {
		<-release // a blocking query that never returns on its own
		return nil
	})})
	if err != nil {
		t.Fatal(err)
	}
	svc.Start()
	done := make(chan struct{})
	go func() {
		svc.Stop()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop waited for a blocking query")
	}
}

func TestIssueWithoutSigningKeyIsUnavailable(t *testing.T) {
	t.Parallel()
	svc, err := New(Config{RPC: fakeRPC(func(method string, args, reply any) error {
		if method == "Identity.IssueToken" {
			// What a server answers before the leader created a key.
			return structs.Errorf(structs.KindUnavailable, "no token signing key is known yet; the cluster leader creates one")
		}
		return nil
	}), ExternalURL: func(*http.Request) string { return "https://cloud.example/" }})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	svc.Handler().ServeHTTP(rec, httptest.NewRequest("POST", "/identity/v3/auth/tokens",
		strings.NewReader(`{"auth": {"identity": {"methods": ["password"], "password": {"user": {"id": "u", "password": "p"}}}}}`)))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), `"title":"Service Unavailable"`) {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	if rec.Header().Get("X-Openstack-Request-Id") == "" {
		t.Fatal("no request id")
	}
}

func TestServerErrorsMapToKeystoneErrors(t *testing.T) {
	t.Parallel()
	var answer error
	svc, err := New(Config{RPC: fakeRPC(func(string, any, any) error { return answer }),
		ExternalURL: func(*http.Request) string { return "https://cloud.example/" }})
	if err != nil {
		t.Fatal(err)
	}
	h := svc.wrap(func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		return 0, nil, svc.call("Identity.List", &structs.IdentityListRequest{}, &structs.IdentityListResponse{})
	})
	for kind, want := range map[structs.ErrorKind]int{
		structs.KindInvalid:    http.StatusBadRequest,
		structs.KindNotFound:   http.StatusNotFound,
		structs.KindConflict:   http.StatusConflict,
		structs.KindPermission: http.StatusUnauthorized,
		// A token the servers refuse (revoked meanwhile) is a 401 too.
		structs.KindUnauthenticated: http.StatusUnauthorized,
		structs.KindNoLeader:        http.StatusServiceUnavailable,
		structs.KindInternal:        http.StatusInternalServerError,
	} {
		answer = structs.Errorf(kind, "boom")
		rec := httptest.NewRecorder()
		h(rec, httptest.NewRequest("GET", "/identity/v3/x", nil))
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", kind, rec.Code, want)
		}
		if want == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") != `Keystone uri="https://cloud.example/identity"` {
			t.Errorf("WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
		}
		if want == http.StatusInternalServerError && strings.Contains(rec.Body.String(), "boom") {
			t.Errorf("an internal error leaked its text: %s", rec.Body.String())
		}
	}
}
