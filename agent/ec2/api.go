// Package ec2 is the EC2 Query API the agent serves at /ec2/ (issue 29):
// Action=…&Version=2016-11-15 requests, form-encoded POST or GET,
// answered with EC2's XML documents and error shape, so the AWS CLI and
// SDKs (with a custom endpoint) drive a Stratus cloud. Requests are
// authenticated with AWS Signature Version 4 for service "ec2" against
// the EC2 credentials Keystone's OS-EC2 API issues, verified by the
// servers (S3.Verify, the path the S3 API uses); every call of a request
// then carries the token the servers answer for the credential's user
// and project, so a credential sees and acts on its project only.
//
// It must not hold state: EC2's ids are derived from Stratus's UUIDs
// (ids.go) and resolved against the servers' records, and every action
// is made with the same RPCs the Compute API makes.
package ec2

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/internal/route"
)

// MountPath is where the agent's HTTP listener serves the API.
const MountPath = "/ec2"

// APIVersion is the EC2 API version served; xmlns its namespace, on
// every answer document.
const (
	APIVersion = "2016-11-15"
	xmlns      = "http://ec2.amazonaws.com/doc/" + APIVersion + "/"
)

// maxBody bounds a request's form: EC2 requests are small (UserData, at
// most 16 KiB base64, is the largest field).
const maxBody = 1 << 20

// RPC reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// Config configures the API.
type Config struct {
	RPC RPC
	// Region is the Stratus region, EC2's region name.
	Region string
	// Zone is the agent's availability zone.
	Zone       string
	WriteRetry time.Duration
	// Consoles reads console logs; without it GetConsoleOutput is
	// refused as unsupported.
	Consoles ConsoleReader
	Logger   hclog.Logger
	// Now is the clock signatures are checked against; time.Now when
	// nil.
	Now func() time.Time
}

// API is the EC2 handler. It holds no state of its own.
type API struct {
	rpc        RPC
	region     string
	zone       string
	writeRetry time.Duration
	logger     hclog.Logger
	now        func() time.Time
	actions    map[string]action
	consoles   ConsoleReader
}

// ConsoleReader reads the console log of an instance, as the Compute
// API's os-getConsoleOutput does (GetConsoleOutput).
type ConsoleReader interface {
	Output(ctx context.Context, instanceID string, lines int) (string, error)
}

// New builds the API from its config.
func New(cfg Config) *API {
	a := &API{rpc: cfg.RPC, region: cfg.Region, zone: cfg.Zone, writeRetry: cfg.WriteRetry, logger: cfg.Logger, now: cfg.Now,
		consoles: cfg.Consoles}
	if a.logger == nil {
		a.logger = hclog.NewNullLogger()
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.actions = map[string]action{}
	for _, ac := range a.table() {
		a.actions[ac.Name] = ac
	}
	return a
}

// Handler serves the API under prefix (MountPath).
func (a *API) Handler(prefix string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { a.serve(w, r) })
}

// request is one API call as the handlers see it.
type request struct {
	api    *API
	w      http.ResponseWriter
	r      *http.Request
	id     string
	params url.Values
	// body is a POST's form, as signed.
	body   []byte
	caller caller
	// token is the servers' token of the credential's user for this
	// request (S3.Verify); every call of the request carries it.
	token string
}

// call makes one RPC of the request as its caller.
func (q *request) call(method string, args, reply any) error {
	return route.AsCaller(q.api.rpc, q.token).RPC(method, args, reply)
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func (a *API) serve(w http.ResponseWriter, r *http.Request) {
	q := &request{api: a, w: w, r: r, id: newRequestID()}
	w.Header().Set("Server", "Stratus")
	defer func() {
		if p := recover(); p != nil {
			a.logger.Error("ec2 handler panic", "path", r.URL.Path, "panic", p)
			q.fail(ec2Error(codeInternalError, "An internal error has occurred."))
		}
	}()
	if err := q.readParams(); err != nil {
		q.fail(err)
		return
	}
	if err := q.authenticate(); err != nil {
		q.fail(err)
		return
	}
	if err := q.dispatch(); err != nil {
		q.fail(err)
	}
}

// readParams reads the query and, for a POST, the form body, keeping
// the body for the signature's payload hash.
func (q *request) readParams() error {
	params := q.r.URL.Query()
	if q.r.Method == http.MethodPost {
		raw, err := io.ReadAll(http.MaxBytesReader(q.w, q.r.Body, maxBody))
		if err != nil {
			return ec2Error(codeInvalidParameterValue, "The request body could not be read: %v", err)
		}
		q.body = raw
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			return ec2Error(codeInvalidParameterValue, "The request body is not a form: %v", err)
		}
		for k, v := range form {
			params[k] = append(params[k], v...)
		}
	} else if q.r.Method != http.MethodGet {
		return ec2Error(codeInvalidAction, "The method %s is not served; use GET or POST.", q.r.Method)
	}
	q.params = params
	return nil
}

// fail answers an error as EC2 does.
func (q *request) fail(err error) {
	ae := toAPIError(err)
	status := ae.httpStatus()
	if status >= 500 {
		q.api.logger.Warn("ec2 request failed", "action", q.params.Get("Action"), "error", err)
	}
	body := errorResponse{RequestID: q.id}
	body.Errors.Error = []errorItem{{Code: ae.Code, Message: ae.Message}}
	q.w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	q.w.WriteHeader(status)
	_, _ = io.WriteString(q.w, xml.Header)
	_ = xml.NewEncoder(q.w).Encode(body)
}

// reply answers an action's document: v is a struct whose XMLName is
// the action's response element; its namespace and requestId are set
// here.
func (q *request) reply(v responder) error {
	v.setMeta(q.id)
	q.w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	q.w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(q.w, xml.Header)
	if err := xml.NewEncoder(q.w).Encode(v); err != nil {
		return fmt.Errorf("encode the answer: %w", err)
	}
	return nil
}

// responder is an answer document.
type responder interface{ setMeta(requestID string) }

// meta is the part every answer has: EC2's namespace and the request id.
type meta struct {
	Xmlns     string `xml:"xmlns,attr"`
	RequestID string `xml:"requestId"`
}

func (m *meta) setMeta(id string) { m.Xmlns, m.RequestID = xmlns, id }

// isoTime formats unix nanoseconds as EC2's timestamps.
func isoTime(ns int64) string {
	if ns == 0 {
		return ""
	}
	return time.Unix(0, ns).UTC().Format("2006-01-02T15:04:05.000Z")
}

// sortedKeys is a set's members, sorted.
func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
