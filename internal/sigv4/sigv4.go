// Package sigv4 parses AWS Signature Version 4 as the agent's AWS-style
// APIs (agent/s3, agent/ec2) receive it: the Authorization header form
// and the presigned query form, the canonical request and the string to
// sign. Errors are *Error values carrying Amazon's code, which each API
// maps to its own error shape.
//
// It never holds or looks up secrets: live requests are verified by the
// servers (S3.Verify, server/s3_verify_endpoint.go), which alone hold
// them; Verify here is the same check, for tests and fuzzing against
// Amazon's published examples.
package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	// Algorithm is the only signing algorithm served.
	Algorithm = "AWS4-HMAC-SHA256"
	// DateFormat is X-Amz-Date's layout.
	DateFormat = "20060102T150405Z"
	// MaxSkew is how far a request's date may be from the agent's clock.
	MaxSkew = 15 * time.Minute
	// maxPresignExpiry is S3's longest presigned URL (7 days).
	maxPresignExpiry = 7 * 24 * time.Hour
)

// Amazon's error codes of signature parsing and checks.
const (
	CodeAccessDenied          = "AccessDenied"
	CodeSignatureDoesNotMatch = "SignatureDoesNotMatch"
	CodeRequestTimeTooSkewed  = "RequestTimeTooSkewed"
	CodeAuthHeaderMalformed   = "AuthorizationHeaderMalformed"
	CodeAuthQueryMalformed    = "AuthorizationQueryParametersError"
	CodeInvalidArgument       = "InvalidArgument"
	CodeInvalidRequest        = "InvalidRequest"
)

// Error is a signature that is malformed, wrong or out of time, with
// Amazon's code for it.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func errorf(code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Payload hash values with a meaning of their own.
const (
	UnsignedPayload        = "UNSIGNED-PAYLOAD"
	StreamingPayload       = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingPayloadTrail  = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedTrail = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	EmptySHA256            = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// Request is a parsed SigV4 signature: the credential scope, what was
// signed and the signature, before any key is known.
type Request struct {
	AccessKey     string
	Date          string // yyyymmdd of the scope
	Region        string
	Service       string
	SignedHeaders []string
	Signature     string
	// AmzDate is the request's time (X-Amz-Date).
	AmzDate time.Time
	// Presigned requests carry everything in the query and expire.
	Presigned bool
	Expires   time.Duration
	// PayloadHash is the x-amz-content-sha256 value (UNSIGNED-PAYLOAD
	// for presigned requests).
	PayloadHash string
}

// Scope is the credential scope: date/region/service/aws4_request.
func (s *Request) Scope() string {
	return s.Date + "/" + s.Region + "/" + s.Service + "/aws4_request"
}

// Parse reads a request's signature for service ("s3", "ec2"): from the
// Authorization header, or from the query of a presigned URL. ok is false
// when the request is not signed with SigV4 at all. PayloadHash is the
// x-amz-content-sha256 header, "" when absent (S3 requires it; other
// services hash the body).
func Parse(r *http.Request, service string) (sig *Request, ok bool, err error) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		sig, err := parseAuthHeader(auth, service)
		if err != nil {
			return nil, true, err
		}
		if sig.AmzDate, err = requestDate(r); err != nil {
			return nil, true, err
		}
		sig.PayloadHash = r.Header.Get("X-Amz-Content-Sha256")
		return sig, true, nil
	}
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") == "" {
		return nil, false, nil
	}
	sig, err = parsePresigned(q, service)
	return sig, true, err
}

// parseAuthHeader parses "AWS4-HMAC-SHA256 Credential=AK/20250101/
// us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date,
// Signature=hex".
func parseAuthHeader(auth, service string) (*Request, error) {
	alg, rest, _ := strings.Cut(auth, " ")
	if alg != Algorithm {
		if strings.HasPrefix(auth, "AWS ") {
			return nil, errorf(CodeInvalidRequest, "Signature Version 2 is not supported; use AWS4-HMAC-SHA256.")
		}
		return nil, errorf(CodeInvalidArgument, "Unsupported Authorization Type")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			return nil, errorf(CodeAuthHeaderMalformed, "The authorization header is malformed: %q is not key=value.", part)
		}
		fields[k] = v
	}
	sig := &Request{Signature: fields["Signature"]}
	if err := sig.setCredential(fields["Credential"], service); err != nil {
		return nil, err
	}
	if err := sig.setSignedHeaders(fields["SignedHeaders"]); err != nil {
		return nil, err
	}
	if !IsHexSig(sig.Signature) {
		return nil, errorf(CodeAuthHeaderMalformed, "The authorization header is malformed: the signature is not 64 hex digits.")
	}
	return sig, nil
}

// parsePresigned reads the X-Amz-* query parameters of a presigned URL.
func parsePresigned(q url.Values, service string) (*Request, error) {
	if q.Get("X-Amz-Algorithm") != Algorithm {
		return nil, errorf(CodeInvalidArgument, "X-Amz-Algorithm only supports \"%s\"", Algorithm)
	}
	sig := &Request{Signature: q.Get("X-Amz-Signature"), Presigned: true, PayloadHash: UnsignedPayload}
	if err := sig.setCredential(q.Get("X-Amz-Credential"), service); err != nil {
		return nil, err
	}
	if err := sig.setSignedHeaders(q.Get("X-Amz-SignedHeaders")); err != nil {
		return nil, err
	}
	if !IsHexSig(sig.Signature) {
		return nil, errorf(CodeAuthQueryMalformed, "X-Amz-Signature must be 64 hex digits.")
	}
	t, err := time.Parse(DateFormat, q.Get("X-Amz-Date"))
	if err != nil {
		return nil, errorf(CodeAuthQueryMalformed, "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
	}
	sig.AmzDate = t
	secs, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if err != nil || secs < 0 {
		return nil, errorf(CodeAuthQueryMalformed, "X-Amz-Expires should be a number of seconds")
	}
	if time.Duration(secs)*time.Second > maxPresignExpiry {
		return nil, errorf(CodeAuthQueryMalformed, "X-Amz-Expires must be less than a week (in seconds) that is 604800")
	}
	sig.Expires = time.Duration(secs) * time.Second
	if v := q.Get("X-Amz-Content-Sha256"); v != "" {
		sig.PayloadHash = v
	}
	return sig, nil
}

// IsHexSig reports whether s is a signature: 64 hex digits.
func IsHexSig(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// setCredential parses AK/yyyymmdd/region/service/aws4_request.
func (s *Request) setCredential(cred, service string) error {
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[0] == "" || parts[4] != "aws4_request" {
		return errorf(CodeAuthHeaderMalformed, "The Credential %q is malformed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".", cred)
	}
	if _, err := time.Parse("20060102", parts[1]); err != nil {
		return errorf(CodeAuthHeaderMalformed, "The Credential date %q is not YYYYMMDD.", parts[1])
	}
	if parts[3] != service {
		return errorf(CodeAuthHeaderMalformed, "The Credential service %q is wrong; expecting %q.", parts[3], service)
	}
	s.AccessKey, s.Date, s.Region, s.Service = parts[0], parts[1], parts[2], parts[3]
	return nil
}

// setSignedHeaders parses the ;-separated, lowercase header list, which
// must include host.
func (s *Request) setSignedHeaders(list string) error {
	if list == "" {
		return errorf(CodeAuthHeaderMalformed, "SignedHeaders is missing.")
	}
	s.SignedHeaders = strings.Split(list, ";")
	for _, h := range s.SignedHeaders {
		if h == "" || h != strings.ToLower(h) {
			return errorf(CodeAuthHeaderMalformed, "SignedHeaders %q must be lowercase names separated by ';'.", list)
		}
	}
	for _, h := range s.SignedHeaders {
		if h == "host" {
			return nil
		}
	}
	return errorf(CodeAccessDenied, "There were headers present in the request which were not signed: host")
}

// requestDate is X-Amz-Date, or the Date header.
func requestDate(r *http.Request) (time.Time, error) {
	if v := r.Header.Get("X-Amz-Date"); v != "" {
		t, err := time.Parse(DateFormat, v)
		if err != nil {
			return time.Time{}, errorf(CodeAccessDenied, "AWS authentication requires a valid Date or x-amz-date header")
		}
		return t, nil
	}
	if v := r.Header.Get("Date"); v != "" {
		if t, err := http.ParseTime(v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errorf(CodeAccessDenied, "AWS authentication requires a valid Date or x-amz-date header")
}

// CheckTime refuses a request whose date is too far from now (header
// signatures) or whose presigned URL expired.
func (s *Request) CheckTime(now time.Time) error {
	if s.AmzDate.Format("20060102") != s.Date {
		return errorf(CodeSignatureDoesNotMatch, "The date of the credential scope does not match the request's date.")
	}
	if s.Presigned {
		if now.Before(s.AmzDate.Add(-MaxSkew)) {
			return errorf(CodeAccessDenied, "Request is not valid yet")
		}
		if now.After(s.AmzDate.Add(s.Expires)) {
			return errorf(CodeAccessDenied, "Request has expired")
		}
		return nil
	}
	if d := now.Sub(s.AmzDate); d > MaxSkew || d < -MaxSkew {
		return errorf(CodeRequestTimeTooSkewed, "The difference between the request time and the server's time is too large.")
	}
	return nil
}

// CanonicalRequest builds SigV4's canonical request for r.
func (s *Request) CanonicalRequest(r *http.Request) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(URIEncode(r.URL.Path, false))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery, s.Presigned))
	b.WriteByte('\n')
	for _, h := range s.SignedHeaders {
		b.WriteString(h)
		b.WriteByte(':')
		b.WriteString(headerValue(r, h))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(s.SignedHeaders, ";"))
	b.WriteByte('\n')
	b.WriteString(s.PayloadHash)
	return b.String()
}

// headerValue is a signed header's canonical value: its values joined
// by commas, each trimmed with inner runs of spaces collapsed.
func headerValue(r *http.Request, name string) string {
	var values []string
	switch name {
	case "host":
		values = []string{r.Host}
	case "content-length":
		if v := r.Header.Values("Content-Length"); len(v) > 0 {
			values = v
		} else if r.ContentLength >= 0 {
			values = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	case "transfer-encoding":
		values = r.TransferEncoding
	default:
		values = r.Header.Values(name)
	}
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = strings.Join(strings.Fields(v), " ")
	}
	return strings.Join(out, ",")
}

// canonicalQuery sorts the query's parameters by name, then value, each
// encoded as SigV4 encodes, leaving out X-Amz-Signature when presigned.
func canonicalQuery(raw string, presigned bool) string {
	type kv struct{ k, v string }
	var pairs []kv
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			dk, dv = k, v
		}
		if presigned && dk == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, kv{URIEncode(dk, true), URIEncode(dv, true)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.k + "=" + p.v
	}
	return strings.Join(parts, "&")
}

// URIEncode percent-encodes every byte but the unreserved ones
// (A-Z a-z 0-9 - . _ ~), and '/' too unless encodeSlash.
func URIEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' || (c == '/' && !encodeSlash) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// StringToSign is SigV4's string to sign for a canonical request.
func (s *Request) StringToSign(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return Algorithm + "\n" + s.AmzDate.Format(DateFormat) + "\n" + s.Scope() + "\n" + hex.EncodeToString(sum[:])
}

// HMACSHA256 is HMAC-SHA256 of data with key.
func HMACSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// SigningKey derives the scope's key from the secret.
func (s *Request) SigningKey(secret string) []byte {
	k := HMACSHA256([]byte("AWS4"+secret), s.Date)
	k = HMACSHA256(k, s.Region)
	k = HMACSHA256(k, s.Service)
	return HMACSHA256(k, "aws4_request")
}

// Verify checks the request's signature with the secret, in constant
// time, and returns the signing key. Live requests are verified by the
// servers (S3.Verify, server/s3_verify_endpoint.go), which alone hold
// secrets; this is the same check on the agent's canonical request, which
// the tests and the fuzz targets run against AWS's examples.
func (s *Request) Verify(r *http.Request, secret string) ([]byte, error) {
	key := s.SigningKey(secret)
	want := HMACSHA256(key, s.StringToSign(s.CanonicalRequest(r)))
	got, err := hex.DecodeString(s.Signature)
	if err != nil || !hmac.Equal(want, got) {
		return nil, errorf(CodeSignatureDoesNotMatch,
			"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	}
	return key, nil
}
