// Package s3 is the S3-compatible object store API the agent serves
// (nova-objectstore's role): buckets, objects with streaming uploads and
// ranged reads, ListObjectsV2 and multipart uploads, path-style, at
// /s3/<bucket>/<key> of the agent's HTTP listener and at /<bucket>/<key>
// of an optional dedicated listener. Requests are authenticated with AWS
// Signature Version 4 (header or presigned query, and the chunk
// signatures of streaming uploads) against the EC2-style credentials
// Keystone's OS-EC2 API issues per user and project. Answers and errors
// are S3's XML.
//
// It must not hold state or data: records are the servers' (the S3 RPC
// endpoint), and object bytes stream to and from the servers' blob
// stores through Data.
package s3

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// MountPath is where the agent's main HTTP listener serves the API.
const MountPath = "/s3"

// xmlns is S3's namespace, on every answer document.
const xmlns = "http://s3.amazonaws.com/doc/2006-03-01/"

// RPC reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// Data moves object bytes between the API and the servers' blob stores.
type Data interface {
	// Put streams body to a server, which stores and checks it and
	// records the object (or part) it answers. An error reading body
	// (a bad chunk signature, a checksum mismatch) is returned as it is.
	Put(req *structs.S3PutRequest, body io.Reader) (*structs.S3PutResult, error)
	// Complete has a server assemble a multipart upload.
	Complete(req *structs.S3CompleteRequest) (*structs.S3Object, error)
	// Open reads length bytes (all the rest when negative) from offset
	// of the blob named hash, held by the servers of locs, with the
	// request's token.
	Open(token, hash string, locs []*structs.ImageLocation, offset, length int64) (io.ReadCloser, error)
}

// Config configures the API.
type Config struct {
	RPC    RPC
	Data   Data
	Logger hclog.Logger
	// Now is the clock signatures are checked against; time.Now when
	// nil.
	Now func() time.Time
}

// API is the S3 handler. It holds no state of its own.
type API struct {
	rpc    RPC
	data   Data
	logger hclog.Logger
	now    func() time.Time
	// table is the compiled routes (routes.go).
	table *route.Table[handler]
}

// New builds the API from its config.
func New(cfg Config) *API {
	a := &API{rpc: cfg.RPC, data: cfg.Data, logger: cfg.Logger, now: cfg.Now}
	if a.logger == nil {
		a.logger = hclog.NewNullLogger()
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.table = route.MustTable(a.routes())
	return a
}

// Handler serves the API with paths under prefix: MountPath on the
// agent's listener, "" on a dedicated one.
func (a *API) Handler(prefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.serve(prefix, w, r) })
}

// request is one API call as the handlers see it.
type request struct {
	api *API
	w   http.ResponseWriter
	r   *http.Request
	// prefix is where the API is mounted on its listener ("" on the
	// dedicated one), for the absolute URLs of answers.
	prefix string
	bucket string
	key    string
	id     string
	caller structs.S3Caller
	sig    *sigRequest
	// signKey is the verified request's signing key, for chunk
	// signatures (only chunk-signed uploads get one).
	signKey []byte
	// token is the servers' token of the credential's user for this
	// request (S3.Verify); every call of the request carries it.
	token string
}

// call makes one RPC of the request as its caller: with its token.
func (q *request) call(method string, args, reply any) error {
	return route.AsCaller(q.api.rpc, q.token).RPC(method, args, reply)
}

// url is the absolute URL of path (a bucket or object, "/b/k") as the
// client reached it: behind a trusted TLS-terminating proxy or with a
// public_url, that one's (httpx.ExternalBase).
func (q *request) url(path string) string {
	return httpx.ExternalBase(q.r) + q.prefix + (&url.URL{Path: path}).EscapedPath()
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

func (a *API) serve(prefix string, w http.ResponseWriter, r *http.Request) {
	q := &request{api: a, w: w, r: r, prefix: prefix, id: newRequestID()}
	w.Header().Set("X-Amz-Request-Id", q.id)
	w.Header().Set("Server", "Stratus")
	defer func() {
		if p := recover(); p != nil {
			a.logger.Error("s3 handler panic", "path", r.URL.Path, "panic", p)
			q.fail(s3Error(codeInternalError, "We encountered an internal error. Please try again."))
		}
	}()
	path := strings.TrimPrefix(r.URL.Path, prefix)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	q.bucket, q.key, _ = strings.Cut(path[1:], "/")
	if err := q.authenticate(); err != nil {
		q.fail(err)
		return
	}
	if err := q.dispatch(); err != nil {
		q.fail(err)
	}
}

// authenticate has the servers check the request's SigV4 signature
// (S3.Verify: the agent never sees the secret) and sets the caller and
// the token its calls carry. The agent parses the signature and checks
// the time first, for S3's own errors without a round trip. Anonymous
// requests are refused: every bucket is private to its project.
func (q *request) authenticate() error {
	sig, signed, err := parseSigV4(q.r)
	if err != nil {
		return err
	}
	if !signed {
		return s3Error(codeAccessDenied, "Access Denied: the request is not signed (AWS Signature Version 4 is required).")
	}
	if err := sig.CheckTime(q.api.now().UTC()); err != nil {
		return err
	}
	var auth structs.S3VerifyResponse
	err = q.api.rpc.RPC("S3.Verify", &structs.S3VerifyRequest{Access: sig.AccessKey, AmzDate: sig.AmzDate.Format(amzDateFmt),
		ScopeDate: sig.Date, Region: sig.Region, Service: sig.Service, CanonicalRequest: sig.CanonicalRequest(q.r),
		Signature: sig.Signature, Presigned: sig.Presigned}, &auth)
	if err != nil {
		return err
	}
	admin := false
	for _, role := range auth.Roles {
		admin = admin || role == "admin"
	}
	q.sig, q.signKey, q.token = sig, auth.SigningKey, auth.Token
	q.caller = structs.S3Caller{ProjectID: auth.ProjectID, UserID: auth.UserID, Admin: admin}
	route.ObserveCaller(q.r.Context(), auth.UserID, auth.ProjectID)
	return nil
}

// fail answers an error as S3 does: the XML error document (no body for
// HEAD) with the code's status.
func (q *request) fail(err error) {
	ae := toAPIError(err)
	status := ae.httpStatus()
	if status >= 500 {
		q.api.logger.Warn("s3 request failed", "method", q.r.Method, "path", q.r.URL.Path, "error", err)
	}
	h := q.w.Header()
	h.Del("Content-Length")
	h.Del("ETag")
	if q.r.Method == http.MethodHead {
		q.w.WriteHeader(status)
		return
	}
	body := errorBody{Code: ae.Code, Message: ae.Message, BucketName: q.bucket, Key: q.key,
		Resource: q.r.URL.Path, RequestID: q.id}
	h.Set("Content-Type", "application/xml")
	q.w.WriteHeader(status)
	_, _ = io.WriteString(q.w, xml.Header)
	_ = xml.NewEncoder(q.w).Encode(body)
}

// writeXML answers a document with status 200.
func (q *request) writeXML(v any) error {
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(q.w, xml.Header)
	return xml.NewEncoder(q.w).Encode(v)
}

// isoTime formats unix nanoseconds as S3's timestamps.
func isoTime(ns int64) string { return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000Z") }

// quoteETag quotes an ETag for a header or a document.
func quoteETag(etag string) string { return `"` + etag + `"` }
