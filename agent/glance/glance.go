package glance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent/identity"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// MountPath is where the agent serves the API; the catalog's image
// endpoint is <agent>/image, unversioned as Glance's is.
const MountPath = "/image"

// RPC reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// TokenVerifier validates a Keystone token (X-Auth-Token).
type TokenVerifier interface {
	Verify(token string) (*identity.Token, error)
}

// Data moves image data between the API and the servers' image stores.
type Data interface {
	// Upload streams body (size bytes, -1 when unknown) to a server as
	// the image's data and returns the image as recorded once the data
	// is stored (active). Errors carry structs kinds: conflict (the image
	// is not queued), too large, not found (deleted meanwhile).
	Upload(token, imageID string, size int64, body io.Reader) (*structs.Image, error)
	// Download opens length bytes (all the rest when negative) of the
	// image's data from offset. token is the caller's, which the
	// servers check again.
	Download(token string, img *structs.Image, offset, length int64) (io.ReadCloser, error)
}

// Config configures the API.
type Config struct {
	RPC      RPC
	Verifier TokenVerifier
	Data     Data
	Logger   hclog.Logger
}

// API is the Image API handler. It holds no state of its own.
type API struct {
	rpc      RPC
	verifier TokenVerifier
	data     Data
	logger   hclog.Logger
	table    *route.Table[handler]
}

// New builds the API from its config.
func New(cfg Config) *API {
	logger := cfg.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	a := &API{rpc: cfg.RPC, verifier: cfg.Verifier, data: cfg.Data, logger: logger}
	a.table = route.MustTable(a.routes())
	return a
}

// Handler returns the API's HTTP handler, to mount at MountPath and
// under it.
func (a *API) Handler() http.Handler { return http.HandlerFunc(a.serveHTTP) }

// request is one API call as the handlers see it.
type request struct {
	api *API
	w   http.ResponseWriter
	r   *http.Request
	// token is the caller's verified token; authToken its raw form.
	token     *identity.Token
	authToken string
	params    route.Params
	// wrote is set once a handler answered.
	wrote bool
}

// access is the caller as Glance's policy sees it.
func (q *request) access() structs.ImageAccess {
	return structs.ImageAccess{ProjectID: q.token.ProjectID, Admin: q.token.IsAdmin()}
}

func (q *request) isAdmin() bool { return q.token.IsAdmin() }

// isMember reports whether the caller may write in its project: Glance's
// defaults let members and admins create and change images, readers
// only read.
func (q *request) isMember() bool {
	return q.isAdmin() || q.token.HasRole("member") || q.token.HasRole("_member_")
}

// param returns a path parameter.
func (q *request) param(name string) string { return q.params.Get(name) }

// call makes an RPC on the caller's behalf: the request carries the
// caller's token, which the servers check.
func (q *request) call(method string, args, reply any) error {
	return route.AsCaller(q.api.rpc, q.authToken).RPC(method, args, reply)
}

// serveHTTP answers one request: request id, routing, token, error
// answers and panic containment.
func (a *API) serveHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := "req-" + uuid.NewString()
	w.Header().Set("X-Openstack-Request-Id", reqID)
	q := &request{api: a, w: w, r: r}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			a.logger.Error("image api handler panic", "request_id", reqID, "method", r.Method, "path", r.URL.Path, "panic", p)
			if !q.wrote {
				a.writeError(q, errorf(http.StatusInternalServerError, msgInternal))
			}
		}
	}()
	if err := a.dispatch(q); err != nil {
		if q.wrote {
			// The answer had begun (a download): cut the connection
			// so the client sees a short body, not a whole one.
			a.logger.Warn("image api answer interrupted", "request_id", reqID, "error", err)
			panic(http.ErrAbortHandler)
		}
		a.writeError(q, err)
	}
}

// authenticate verifies X-Auth-Token; Glance needs a project-scoped
// token.
func (q *request) authenticate() error {
	raw := q.r.Header.Get("X-Auth-Token")
	if raw == "" || q.api.verifier == nil {
		return errorf(http.StatusUnauthorized, msgUnauthorized)
	}
	tok, err := q.api.verifier.Verify(raw)
	if err != nil || tok == nil {
		return errorf(http.StatusUnauthorized, msgUnauthorized)
	}
	if tok.ProjectID == "" {
		return errorf(http.StatusForbidden, "A project-scoped token is required.")
	}
	q.token, q.authToken = tok, raw
	route.ObserveCaller(q.r.Context(), tok.UserID, tok.ProjectID)
	return nil
}

// Glance's (webob's) fixed messages.
const (
	msgUnauthorized = "This server could not verify that you are authorized to access the document you requested. Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required."
	msgInternal     = "The server has either erred or is incapable of performing the requested operation."
)

// apiError is an answer with a status other than success.
type apiError struct {
	status int
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

// statuses are the HTTP statuses of the servers' error kinds: the kit's,
// but a quota reached is Glance's 413.
var statuses = route.Default.With(route.Statuses{structs.KindQuotaReached: http.StatusRequestEntityTooLarge})

// statusOf maps an error to Glance's status and message.
func statusOf(err error) (int, string) {
	var e *apiError
	if errors.As(err, &e) {
		return e.status, e.msg
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge, "Request body too large."
	}
	status, known := statuses.Of(err)
	if !known {
		return http.StatusInternalServerError, msgInternal
	}
	return status, structs.Message(err)
}

// writeError answers as webob does for Glance: JSON {"message", "code",
// "title"} when the client accepts JSON, HTML when it accepts HTML (or
// anything), plain text otherwise. Without an Accept header (or with an
// empty one, as openstacksdk sends on PATCH) it answers JSON, which
// clients turn into a message; webob would answer HTML or plain text.
func (a *API) writeError(q *request, err error) {
	status, msg := statusOf(err)
	if status >= 500 {
		a.logger.Error("image api request failed", "method", q.r.Method, "path", q.r.URL.Path, "error", err)
	}
	title := http.StatusText(status)
	code := fmt.Sprintf("%d %s", status, title)
	accept := q.r.Header.Get("Accept")
	h := q.w.Header()
	var body []byte
	switch {
	case strings.TrimSpace(accept) == "" || strings.Contains(accept, "json"):
		h.Set("Content-Type", "application/json")
		body, _ = json.Marshal(map[string]string{"message": msg + "<br /><br />\n\n\n", "code": code, "title": title})
	case strings.Contains(accept, "html") || strings.Contains(accept, "*/*"):
		h.Set("Content-Type", "text/html; charset=UTF-8")
		body = []byte(fmt.Sprintf("<html>\n <head>\n  <title>%s</title>\n </head>\n <body>\n  <h1>%s</h1>\n  %s<br /><br />\n\n\n\n </body>\n</html>",
			code, code, html.EscapeString(msg)))
	default:
		h.Set("Content-Type", "text/plain; charset=UTF-8")
		body = []byte(fmt.Sprintf("%s\n\n%s\n\n   ", code, msg))
	}
	q.wrote = true
	q.w.WriteHeader(status)
	if q.r.Method != http.MethodHead {
		_, _ = q.w.Write(body)
	}
}

// json answers status with body as JSON.
func (q *request) json(status int, body any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return err
	}
	q.w.Header().Set("Content-Type", "application/json")
	q.wrote = true
	q.w.WriteHeader(status)
	_, _ = q.w.Write(bytes.TrimRight(buf.Bytes(), "\n"))
	return nil
}

// noContent answers 204.
func (q *request) noContent() error {
	q.wrote = true
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// maxBody bounds JSON request bodies.
const maxBody = 1 << 20

// decodeJSON reads the request's JSON body into out; an empty or broken
// body is Glance's 400.
func (q *request) decodeJSON(out any) error {
	data, err := io.ReadAll(http.MaxBytesReader(q.w, q.r.Body, maxBody))
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return errorf(http.StatusBadRequest, "Body expected in request.")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return errorf(http.StatusBadRequest, "Malformed JSON in request body.")
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "Malformed JSON in request body.")
	}
	return nil
}

// contentType is the request's media type without parameters.
func (q *request) contentType() string {
	ct, _, _ := strings.Cut(q.r.Header.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(ct))
}

// requireJSON refuses a body declared as anything but JSON.
func (q *request) requireJSON() error {
	if ct := q.contentType(); ct != "" && ct != "application/json" {
		return errorf(http.StatusUnsupportedMediaType, "Content type %s not supported", ct)
	}
	return nil
}
