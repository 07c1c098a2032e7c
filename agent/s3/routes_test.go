package s3

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// TestRoutesAreSigned: every operation needs a verified signature.
func TestRoutesAreSigned(t *testing.T) {
	a := New(Config{})
	for _, r := range a.table.Routes() {
		if r.Access != policy.Authenticated {
			t.Errorf("%s ?%s: access %s, want authenticated", r.Pattern, r.Query, r.Access)
		}
	}
}

// TestDispatchPicksTheOperation pins which operation each method, path
// shape and subresource reaches.
func TestDispatchPicksTheOperation(t *testing.T) {
	a := New(Config{})
	for _, c := range []struct {
		method, path, want string
	}{
		{"GET", "/", "listBuckets"},
		{"HEAD", "/", "MethodNotAllowed"},
		{"PUT", "/", "MethodNotAllowed"},
		{"GET", "//k", "listBuckets"},
		{"PUT", "/b", "createBucket"},
		{"PUT", "/b/", "createBucket"},
		{"HEAD", "/b", "headBucket"},
		{"HEAD", "/b?location", "headBucket"},
		{"DELETE", "/b", "deleteBucket"},
		{"GET", "/b?location&uploads", "bucketLocation"},
		{"GET", "/b?uploads", "NotImplemented"},
		{"GET", "/b?versioning", "NotImplemented"},
		{"GET", "/b?policy", "NotImplemented"},
		{"GET", "/b?acl", "NotImplemented"},
		{"GET", "/b", "listObjects"},
		{"GET", "/b?list-type=2", "listObjects"},
		{"POST", "/b", "NotImplemented"},
		{"PATCH", "/b", "MethodNotAllowed"},
		{"POST", "/b/k?uploads", "createUpload"},
		{"POST", "/b/k?uploads&uploadId=1", "createUpload"},
		{"POST", "/b/k?uploadId=1", "completeUpload"},
		{"PUT", "/b/k?uploadId=1&partNumber=1", "uploadPart"},
		{"GET", "/b/k?uploadId=1", "listParts"},
		{"DELETE", "/b/k?uploadId=1", "abortUpload"},
		{"PUT", "/b/a/b/", "putObject"},
		{"PUT", "/b//", "putObject"},
		{"GET", "/b/k", "getObject"},
		{"HEAD", "/b/k", "getObject"},
		{"HEAD", "/b/k?uploadId=1", "getObject"},
		{"DELETE", "/b/k", "deleteObject"},
		{"POST", "/b/k", "MethodNotAllowed"},
		{"OPTIONS", "/b/k", "MethodNotAllowed"},
	} {
		r := httptest.NewRequest(c.method, "http://s3.test"+c.path, nil)
		q := &request{api: a, r: r}
		q.bucket, q.key, _ = strings.Cut(r.URL.Path[1:], "/")
		if got := operation(t, q); got != c.want {
			t.Errorf("%s %s: %s, want %s", c.method, c.path, got, c.want)
		}
	}
}

// operation names the handler q reaches, or the S3 code it is refused
// with.
func operation(t *testing.T, q *request) string {
	t.Helper()
	var name string
	a := q.api
	saved := a.table
	defer func() { a.table = saved }()
	for _, rt := range a.table.Routes() {
		h := rt.Handle
		fn := runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
		fn = strings.TrimSuffix(fn[strings.LastIndex(fn, ".")+1:], "-fm")
		rt.Handle = func(*request) error { name = fn; return nil }
		defer func() { rt.Handle = h }()
	}
	err := q.dispatch()
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Code
	}
	if name == "notImplemented" {
		return "NotImplemented"
	}
	return name
}

// TestErrorKindsKeepTheirS3Codes pins the code and status of each error
// kind: a kind's status is its S3 code's.
func TestErrorKindsKeepTheirS3Codes(t *testing.T) {
	for kind, code := range kindCodes {
		if statuses[kind] != statusOf[code] {
			t.Errorf("%s: status %d, but %s is a %d", kind, statuses[kind], code, statusOf[code])
		}
	}
	for _, c := range []struct {
		kind   structs.ErrorKind
		code   string
		status int
	}{
		{structs.KindInvalid, "InvalidArgument", 400},
		{structs.KindNotFound, "NoSuchKey", 404},
		{structs.KindPermission, "AccessDenied", 403},
		{structs.KindConflict, "OperationAborted", 409},
		{structs.KindTooLarge, "EntityTooLarge", 400},
		{structs.KindNoLeader, "ServiceUnavailable", 503},
		{structs.KindUnavailable, "ServiceUnavailable", 503},
		{structs.KindQuotaReached, "InternalError", 500},
		{structs.KindUnauthenticated, "InternalError", 500},
		{structs.KindInternal, "InternalError", 500},
		{"", "InternalError", 500},
	} {
		var err error = structs.Errorf(c.kind, "x")
		if c.kind == "" {
			err = errors.New("x")
		}
		ae := toAPIError(err)
		if ae.Code != c.code || ae.httpStatus() != c.status {
			t.Errorf("%q: %s %d, want %s %d", c.kind, ae.Code, ae.httpStatus(), c.code, c.status)
		}
	}
	if ae := toAPIError(structs.Errorf(structs.KindNoLeader, "no leader")); ae.Message != "Please reduce your request rate. no leader" {
		t.Errorf("503 message %q", ae.Message)
	}
	if ae := toAPIError(&http.MaxBytesError{Limit: 10}); ae.Code != codeMalformedXML || ae.httpStatus() != 400 {
		t.Errorf("body too large: %s %d", ae.Code, ae.httpStatus())
	}
}
