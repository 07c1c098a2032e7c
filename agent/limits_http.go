package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/agent/cinder"
	ec2api "github.com/stratus-cloud/stratus/agent/ec2"
	"github.com/stratus-cloud/stratus/agent/glance"
	"github.com/stratus-cloud/stratus/agent/native"
	"github.com/stratus-cloud/stratus/agent/neutron"
	"github.com/stratus-cloud/stratus/agent/nova"
	s3api "github.com/stratus-cloud/stratus/agent/s3"
	"github.com/stratus-cloud/stratus/internal/httpx"
)

// The request limits of the HTTP port are the daemon's, not an API's:
// they run before any API is chosen, for every API on the port (and the
// dedicated S3 and console listeners), and answer a refusal in the
// format of the API the path belongs to. The limiter itself is
// agent/ratelimit, which knows nothing of HTTP.

// apiInterface is which API a request belongs to, so a refusal is
// answered in that API's own error format.
type apiInterface string

// The interfaces of the HTTP port.
const (
	ifaceAuto     apiInterface = ""
	ifaceNative   apiInterface = "native"
	ifaceNova     apiInterface = "compute"
	ifaceNeutron  apiInterface = "network"
	ifaceGlance   apiInterface = "image"
	ifaceIdentity apiInterface = "identity"
	ifaceS3       apiInterface = "s3"
	ifaceEC2      apiInterface = "ec2"
	ifaceCinder   apiInterface = "volume"
)

// identityPrefix is where the Keystone-compatible API is mounted.
const identityPrefix = "/identity"

// classify says which API a request of the HTTP port is for and whether
// its body is streamed data (image data, S3 objects, snapshot restores)
// that the body size limit leaves alone.
func classify(r *http.Request, fixed apiInterface) (apiInterface, bool) {
	p := r.URL.Path
	under := func(prefix string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }
	iface := fixed
	if iface == ifaceAuto {
		switch {
		case under(nova.MountPath):
			iface = ifaceNova
		case under(neutron.MountPath):
			iface = ifaceNeutron
		case under(glance.MountPath):
			iface = ifaceGlance
		case under(identityPrefix):
			iface = ifaceIdentity
		case under(s3api.MountPath):
			iface = ifaceS3
		case under(ec2api.MountPath):
			iface = ifaceEC2
		case under(cinder.MountPath):
			iface = ifaceCinder
		default:
			iface = ifaceNative
		}
	}
	switch iface {
	case ifaceGlance:
		return iface, strings.HasSuffix(p, "/file") || strings.HasSuffix(p, "/stage")
	case ifaceS3:
		// Objects and parts are streamed; the S3 API bounds its XML
		// request documents itself (1 MiB: a multipart upload's
		// completion lists up to 10,000 parts).
		return iface, true
	case ifaceNative:
		return iface, p == "/v1/operator/snapshot" || (strings.HasPrefix(p, "/v1/images/") && strings.HasSuffix(p, "/data"))
	}
	return iface, false
}

// middleware applies the per-client rate limit and the body limits, then
// hands the request on.
func (l *httpLimits) middleware(next http.Handler, fixed apiInterface) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		iface, streamed := classify(r, fixed)
		if l.limiter != nil {
			if ok, wait := l.limiter.Allow(rateKey(r)); !ok {
				secs := int(math.Ceil(wait.Seconds()))
				if secs < 1 {
					secs = 1
				}
				l.logger.Debug("http request rate limited", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
				if l.onLimited != nil {
					l.onLimited(iface)
				}
				writeOverLimit(w, r, iface, http.StatusTooManyRequests, secs)
				return
			}
		}
		if r.Body != nil && r.Body != http.NoBody {
			limit := l.maxBody
			if iface == ifaceNative {
				limit = l.maxNative
			}
			if !streamed && r.ContentLength > limit {
				// Refused from the declared length alone: the body is
				// never read, and the connection is closed after.
				w.Header().Set("Connection", "close")
				writeOverLimit(w, r, iface, http.StatusRequestEntityTooLarge, 0)
				return
			}
			r.Body = &idleReadBody{ReadCloser: r.Body, rc: http.NewResponseController(w), timeout: l.bodyRead}
			if !streamed {
				r.Body = http.MaxBytesReader(w, r.Body, limit)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// idleReadBody cuts off a client that stops sending its body: each read
// must make progress within timeout. Once the body is done the deadline
// is lifted, so a long handler (a blocking query) is not cut off.
type idleReadBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
}

func (b *idleReadBody) Read(p []byte) (int, error) {
	_ = b.rc.SetReadDeadline(time.Now().Add(b.timeout))
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// rateKey is the bucket a request draws from: its credential when it
// presents one (hashed, so no token is kept in memory), else the
// client's address. Credentials are not verified here; a forged one
// still fails authentication after one token's worth of work.
func rateKey(r *http.Request) string {
	cred := r.Header.Get("X-Auth-Token")
	if cred == "" {
		cred = r.Header.Get("X-Stratus-Token")
	}
	if cred == "" {
		cred = credentialOf(r.Header.Get("Authorization"))
	}
	if cred == "" {
		if c := r.URL.Query().Get("X-Amz-Credential"); c != "" {
			akid, _, _ := strings.Cut(c, "/")
			cred = "s3:" + akid
		}
	}
	if cred == "" {
		// Behind a trusted proxy, the client it forwarded for: not the
		// proxy, which every client would share.
		return "ip:" + httpx.ClientAddr(r)
	}
	sum := sha256.Sum256([]byte(cred))
	return "cred:" + hex.EncodeToString(sum[:16])
}

// credentialOf is the credential of an Authorization header: a bearer
// token, or an S3 access key (SigV4's Credential=AKID/…, SigV2's
// "AWS AKID:signature").
func credentialOf(auth string) string {
	scheme, rest, _ := strings.Cut(strings.TrimSpace(auth), " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		return strings.TrimSpace(rest)
	case scheme == "AWS4-HMAC-SHA256":
		if _, after, ok := strings.Cut(rest, "Credential="); ok {
			akid, _, _ := strings.Cut(after, "/")
			return "s3:" + akid
		}
	case scheme == "AWS":
		akid, _, _ := strings.Cut(rest, ":")
		return "s3:" + akid
	}
	return ""
}

// limitMessages are the refusals' messages by status.
var limitMessages = map[int]string{
	http.StatusTooManyRequests:       "This request was rate-limited.",
	http.StatusRequestEntityTooLarge: "Request is too large.",
}

// writeOverLimit answers a refused request in its API's error format:
// 429 (with Retry-After) for the rate limit, 413 for a body too large.
func writeOverLimit(w http.ResponseWriter, r *http.Request, iface apiInterface, status, retryAfter int) {
	msg := limitMessages[status]
	h := w.Header()
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
		msg = fmt.Sprintf("%s Retry after %d seconds.", msg, retryAfter)
	}
	var body any
	switch iface {
	case ifaceNova, ifaceCinder:
		// Cinder's fault wrapper has Nova's shape: {"overLimit": {…}}.
		body = nova.OverLimitBody(status, msg, retryAfter)
	case ifaceIdentity:
		body = map[string]any{"error": map[string]any{"code": status, "message": msg, "title": http.StatusText(status)}}
	case ifaceGlance:
		body = map[string]any{"message": msg + "<br /><br />\n\n\n", "code": fmt.Sprintf("%d %s", status, http.StatusText(status)),
			"title": http.StatusText(status)}
	case ifaceNeutron:
		typ := "HTTPTooManyRequests"
		if status == http.StatusRequestEntityTooLarge {
			typ = "HTTPRequestEntityTooLarge"
		}
		body = map[string]any{"NeutronError": map[string]any{"type": typ, "message": msg, "detail": ""}}
	case ifaceS3:
		writeS3SlowDown(w, r)
		return
	case ifaceEC2:
		writeEC2OverLimit(w, r, status, msg)
		return
	default:
		kind := "rate limited"
		if status == http.StatusRequestEntityTooLarge {
			kind = string(native.KindTooLarge)
		}
		body = native.ErrorBody{Error: msg, Kind: kind}
	}
	data, _ := json.Marshal(body)
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}

// s3LimitError is S3's error document.
type s3LimitError struct {
	XMLName  xml.Name `xml:"Error"`
	Code     string   `xml:"Code"`
	Message  string   `xml:"Message"`
	Resource string   `xml:"Resource"`
}

// writeS3SlowDown answers the rate limit as S3 does: 503 SlowDown. (S3
// bodies are all exempt from the body limit, see classify.)
func writeS3SlowDown(w http.ResponseWriter, r *http.Request) {
	e := s3LimitError{Code: "SlowDown", Message: "Please reduce your request rate.", Resource: r.URL.Path}
	data, _ := xml.Marshal(e)
	data = append([]byte(xml.Header), data...)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}

// writeEC2OverLimit answers a refusal as the EC2 API does: the rate
// limit is RequestLimitExceeded with 503, which the AWS SDKs and CLI
// take for throttling and retry with backoff; a body too large is 413.
func writeEC2OverLimit(w http.ResponseWriter, r *http.Request, status int, msg string) {
	code := "RequestLimitExceeded"
	if status == http.StatusTooManyRequests {
		status, msg = http.StatusServiceUnavailable, "Request limit exceeded. "+msg
	} else {
		code = "InvalidParameterValue"
	}
	data := ec2api.ErrorDocument(code, msg)
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}
