package s3

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4, as S3 checks it: the Authorization header
// form and the presigned query form, and the chunk signatures of
// STREAMING-AWS4-HMAC-SHA256-PAYLOAD bodies (chunked.go).

const (
	sigAlgorithm = "AWS4-HMAC-SHA256"
	amzDateFmt   = "20060102T150405Z"
	// maxSkew is how far a request's date may be from the agent's clock.
	maxSkew = 15 * time.Minute
	// maxPresignExpiry is S3's longest presigned URL (7 days).
	maxPresignExpiry = 7 * 24 * time.Hour
)

// Payload hash values with a meaning of their own.
const (
	unsignedPayload        = "UNSIGNED-PAYLOAD"
	streamingPayload       = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	streamingPayloadTrail  = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	streamingUnsignedTrail = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	emptySHA256            = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// sigRequest is a parsed SigV4 signature: the credential scope, what was
// signed and the signature, before any key is known.
type sigRequest struct {
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

// scope is the credential scope: date/region/service/aws4_request.
func (s *sigRequest) scope() string {
	return s.Date + "/" + s.Region + "/" + s.Service + "/aws4_request"
}

// parseSigV4 reads a request's signature: from the Authorization header,
// or from the query of a presigned URL. ok is false when the request is
// not signed with SigV4 at all.
func parseSigV4(r *http.Request) (sig *sigRequest, ok bool, err error) {
	if auth := r.Header.Get("Authorization"); auth != "" {
		sig, err := parseAuthHeader(auth)
		if err != nil {
			return nil, true, err
		}
		if sig.AmzDate, err = requestDate(r); err != nil {
			return nil, true, err
		}
		sig.PayloadHash = r.Header.Get("X-Amz-Content-Sha256")
		if sig.PayloadHash == "" {
			return nil, true, s3Error(codeInvalidRequest, "Missing required header for this request: x-amz-content-sha256")
		}
		return sig, true, nil
	}
	q := r.URL.Query()
	if q.Get("X-Amz-Algorithm") == "" {
		return nil, false, nil
	}
	sig, err = parsePresigned(q)
	return sig, true, err
}

// parseAuthHeader parses "AWS4-HMAC-SHA256 Credential=AK/20250101/
// us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date,
// Signature=hex".
func parseAuthHeader(auth string) (*sigRequest, error) {
	alg, rest, _ := strings.Cut(auth, " ")
	if alg != sigAlgorithm {
		if strings.HasPrefix(auth, "AWS ") {
			return nil, s3Error(codeInvalidRequest, "Signature Version 2 is not supported; use AWS4-HMAC-SHA256.")
		}
		return nil, s3Error(codeInvalidArgument, "Unsupported Authorization Type")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found {
			return nil, s3Error(codeAuthHeaderMalformed, "The authorization header is malformed: %q is not key=value.", part)
		}
		fields[k] = v
	}
	sig := &sigRequest{Signature: fields["Signature"]}
	if err := sig.setCredential(fields["Credential"]); err != nil {
		return nil, err
	}
	if err := sig.setSignedHeaders(fields["SignedHeaders"]); err != nil {
		return nil, err
	}
	if !isHexSig(sig.Signature) {
		return nil, s3Error(codeAuthHeaderMalformed, "The authorization header is malformed: the signature is not 64 hex digits.")
	}
	return sig, nil
}

// parsePresigned reads the X-Amz-* query parameters of a presigned URL.
func parsePresigned(q url.Values) (*sigRequest, error) {
	if q.Get("X-Amz-Algorithm") != sigAlgorithm {
		return nil, s3Error(codeInvalidArgument, "X-Amz-Algorithm only supports \"%s\"", sigAlgorithm)
	}
	sig := &sigRequest{Signature: q.Get("X-Amz-Signature"), Presigned: true, PayloadHash: unsignedPayload}
	if err := sig.setCredential(q.Get("X-Amz-Credential")); err != nil {
		return nil, err
	}
	if err := sig.setSignedHeaders(q.Get("X-Amz-SignedHeaders")); err != nil {
		return nil, err
	}
	if !isHexSig(sig.Signature) {
		return nil, s3Error(codeAuthQueryMalformed, "X-Amz-Signature must be 64 hex digits.")
	}
	t, err := time.Parse(amzDateFmt, q.Get("X-Amz-Date"))
	if err != nil {
		return nil, s3Error(codeAuthQueryMalformed, "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
	}
	sig.AmzDate = t
	secs, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if err != nil || secs < 0 {
		return nil, s3Error(codeAuthQueryMalformed, "X-Amz-Expires should be a number of seconds")
	}
	if time.Duration(secs)*time.Second > maxPresignExpiry {
		return nil, s3Error(codeAuthQueryMalformed, "X-Amz-Expires must be less than a week (in seconds) that is 604800")
	}
	sig.Expires = time.Duration(secs) * time.Second
	if v := q.Get("X-Amz-Content-Sha256"); v != "" {
		sig.PayloadHash = v
	}
	return sig, nil
}

func isHexSig(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// setCredential parses AK/yyyymmdd/region/service/aws4_request.
func (s *sigRequest) setCredential(cred string) error {
	parts := strings.Split(cred, "/")
	if len(parts) != 5 || parts[0] == "" || parts[4] != "aws4_request" {
		return s3Error(codeAuthHeaderMalformed, "The Credential %q is malformed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".", cred)
	}
	if _, err := time.Parse("20060102", parts[1]); err != nil {
		return s3Error(codeAuthHeaderMalformed, "The Credential date %q is not YYYYMMDD.", parts[1])
	}
	if parts[3] != "s3" {
		return s3Error(codeAuthHeaderMalformed, "The Credential service %q is wrong; expecting \"s3\".", parts[3])
	}
	s.AccessKey, s.Date, s.Region, s.Service = parts[0], parts[1], parts[2], parts[3]
	return nil
}

// setSignedHeaders parses the ;-separated, lowercase header list, which
// must include host.
func (s *sigRequest) setSignedHeaders(list string) error {
	if list == "" {
		return s3Error(codeAuthHeaderMalformed, "SignedHeaders is missing.")
	}
	s.SignedHeaders = strings.Split(list, ";")
	for _, h := range s.SignedHeaders {
		if h == "" || h != strings.ToLower(h) {
			return s3Error(codeAuthHeaderMalformed, "SignedHeaders %q must be lowercase names separated by ';'.", list)
		}
	}
	for _, h := range s.SignedHeaders {
		if h == "host" {
			return nil
		}
	}
	return s3Error(codeAccessDenied, "There were headers present in the request which were not signed: host")
}

// requestDate is X-Amz-Date, or the Date header.
func requestDate(r *http.Request) (time.Time, error) {
	if v := r.Header.Get("X-Amz-Date"); v != "" {
		t, err := time.Parse(amzDateFmt, v)
		if err != nil {
			return time.Time{}, s3Error(codeAccessDenied, "AWS authentication requires a valid Date or x-amz-date header")
		}
		return t, nil
	}
	if v := r.Header.Get("Date"); v != "" {
		if t, err := http.ParseTime(v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, s3Error(codeAccessDenied, "AWS authentication requires a valid Date or x-amz-date header")
}

// checkTime refuses a request whose date is too far from now (header
// signatures) or whose presigned URL expired.
func (s *sigRequest) checkTime(now time.Time) error {
	if s.AmzDate.Format("20060102") != s.Date {
		return s3Error(codeSignatureDoesNotMatch, "The date of the credential scope does not match the request's date.")
	}
	if s.Presigned {
		if now.Before(s.AmzDate.Add(-maxSkew)) {
			return s3Error(codeRequestNotYetValid, "Request is not valid yet")
		}
		if now.After(s.AmzDate.Add(s.Expires)) {
			return s3Error(codeAccessDenied, "Request has expired")
		}
		return nil
	}
	if d := now.Sub(s.AmzDate); d > maxSkew || d < -maxSkew {
		return s3Error(codeRequestTimeTooSkewed, "The difference between the request time and the server's time is too large.")
	}
	return nil
}

// canonicalRequest builds SigV4's canonical request for r.
func (s *sigRequest) canonicalRequest(r *http.Request) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(uriEncode(r.URL.Path, false))
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
		pairs = append(pairs, kv{uriEncode(dk, true), uriEncode(dv, true)})
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

// uriEncode percent-encodes every byte but the unreserved ones
// (A-Z a-z 0-9 - . _ ~), and '/' too unless encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
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

// stringToSign is SigV4's string to sign for a canonical request.
func (s *sigRequest) stringToSign(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return sigAlgorithm + "\n" + s.AmzDate.Format(amzDateFmt) + "\n" + s.scope() + "\n" + hex.EncodeToString(sum[:])
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// signingKey derives the scope's key from the secret.
func (s *sigRequest) signingKey(secret string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), s.Date)
	k = hmacSHA256(k, s.Region)
	k = hmacSHA256(k, s.Service)
	return hmacSHA256(k, "aws4_request")
}

// verify checks the request's signature with the secret, in constant
// time, and returns the signing key. Live requests are verified by the
// servers (S3.Verify, server/s3_verify_endpoint.go), which alone hold
// secrets; this is the same check on the agent's canonical request, which
// the tests and the fuzz target run against AWS's examples.
func (s *sigRequest) verify(r *http.Request, secret string) ([]byte, error) {
	key := s.signingKey(secret)
	want := hmacSHA256(key, s.stringToSign(s.canonicalRequest(r)))
	got, err := hex.DecodeString(s.Signature)
	if err != nil || !hmac.Equal(want, got) {
		return nil, s3Error(codeSignatureDoesNotMatch,
			"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
	}
	return key, nil
}
