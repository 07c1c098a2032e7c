package s3

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// handler answers one routed request.
type handler func(*request) error

// signed is every route's access level: S3 has no anonymous access
// (every bucket is private to its project), and a request reaches its
// route only once the servers have verified its SigV4 signature
// (authenticate); what the caller may touch is then its project's
// buckets, which the servers check.
const signed = policy.Authenticated

// routes is every operation of the API. S3 picks the operation from the
// method, the shape of the path (no bucket, a bucket, a bucket and a
// key) and a subresource query parameter (?uploads, ?uploadId,
// ?location); a route with a query parameter wins over the same path
// without one, in the order declared here.
func (a *API) routes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /", Access: signed, Handle: a.listBuckets},

		// Buckets.
		{Pattern: "PUT /{bucket}", Access: signed, Handle: a.createBucket},
		{Pattern: "HEAD /{bucket}", Access: signed, Handle: a.headBucket},
		{Pattern: "DELETE /{bucket}", Access: signed, Handle: a.deleteBucket},
		{Pattern: "GET /{bucket}", Query: "location", Access: signed, Handle: a.bucketLocation},
		{Pattern: "GET /{bucket}", Query: "uploads", Access: signed, Handle: notImplemented},
		{Pattern: "GET /{bucket}", Query: "versioning", Access: signed, Handle: notImplemented},
		{Pattern: "GET /{bucket}", Query: "policy", Access: signed, Handle: notImplemented},
		{Pattern: "GET /{bucket}", Query: "acl", Access: signed, Handle: notImplemented},
		// ListObjects, V1 or V2 (?list-type=2) alike.
		{Pattern: "GET /{bucket}", Access: signed, Handle: a.listObjects},
		// POST on a bucket (browser uploads, DeleteObjects) is not served.
		{Pattern: "POST /{bucket}", Access: signed, Handle: notImplemented},

		// Multipart uploads.
		{Pattern: "POST /{bucket}/{key...}", Query: "uploads", Access: signed, Handle: a.createUpload},
		{Pattern: "POST /{bucket}/{key...}", Query: "uploadId", Access: signed, Handle: a.completeUpload},
		{Pattern: "PUT /{bucket}/{key...}", Query: "uploadId", Access: signed, Handle: a.uploadPart},
		{Pattern: "GET /{bucket}/{key...}", Query: "uploadId", Access: signed, Handle: a.listParts},
		{Pattern: "DELETE /{bucket}/{key...}", Query: "uploadId", Access: signed, Handle: a.abortUpload},

		// Objects. HEAD has a route of its own: HEAD ?uploadId is the
		// object's HEAD, not ListParts.
		{Pattern: "PUT /{bucket}/{key...}", Access: signed, Handle: a.putObject},
		{Pattern: "GET /{bucket}/{key...}", Access: signed, Handle: a.getObject},
		{Pattern: "HEAD /{bucket}/{key...}", Access: signed, Handle: a.getObject},
		{Pattern: "DELETE /{bucket}/{key...}", Access: signed, Handle: a.deleteObject},
	}
}

// notImplemented answers a subresource or an operation S3 has and this
// API does not serve.
func notImplemented(*request) error {
	return s3Error(codeNotImplemented, "A header or query you provided implies functionality that is not implemented.")
}

// errMethodNotAllowed is S3's answer to a method the resource has no
// operation for.
var errMethodNotAllowed = s3Error(codeMethodNotAllowed, "The specified method is not allowed against this resource.")

// dispatch picks the operation from the method, the path's shape and
// the query, and runs it.
func (q *request) dispatch() error {
	m, err := q.api.table.Match(route.Request{Method: q.r.Method, Path: shape(q.bucket, q.key), Query: q.r.URL.Query(), Ctx: q.r.Context()})
	var na *route.MethodNotAllowedError
	switch {
	case errors.As(err, &na), errors.Is(err, route.ErrNotFound):
		return errMethodNotAllowed
	case err != nil:
		return err
	}
	// The kit answers HEAD with a GET route where a path has no HEAD
	// route of its own; S3 has HEAD only on buckets and objects.
	if q.r.Method == http.MethodHead && m.Route.Method() != http.MethodHead {
		return errMethodNotAllowed
	}
	return m.Route.Handle(q)
}

// shape is the path as the table matches it: no segment for the
// service, one for a bucket, two for an object. The bucket and key are
// those the request names, taken apart once (serve): a key may hold
// slashes, empty segments and a trailing slash, which splitting the
// path again would lose.
func shape(bucket, key string) []string {
	switch {
	case bucket == "":
		return nil
	case key == "":
		return []string{url.PathEscape(bucket)}
	}
	return []string{url.PathEscape(bucket), url.PathEscape(key)}
}
