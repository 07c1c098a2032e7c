package s3

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"hash"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/stratus-cloud/stratus/internal/sigv4"
)

// The examples of Amazon's "Signature Calculations for the
// Authorization Header" and "Query String" pages.
const (
	exampleAccess = "AKIAIOSFODNN7EXAMPLE"
	exampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

func readRequest(t testing.TB, raw string) *http.Request {
	t.Helper()
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(strings.ReplaceAll(raw, "\n", "\r\n"))))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSigV4AmazonHeaderExample(t *testing.T) {
	r := readRequest(t, `GET /test.txt HTTP/1.1
Host: examplebucket.s3.amazonaws.com
Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41
Range: bytes=0-9
x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
x-amz-date: 20130524T000000Z

`)
	sig, ok, err := parseSigV4(r)
	if err != nil || !ok {
		t.Fatalf("parse: %v %v", ok, err)
	}
	if sig.AccessKey != exampleAccess || sig.Region != "us-east-1" || sig.Presigned {
		t.Fatalf("parsed %+v", sig)
	}
	if _, err := sig.Verify(r, exampleSecret); err != nil {
		t.Fatalf("Amazon's example does not verify: %v\ncanonical request:\n%s", err, sig.CanonicalRequest(r))
	}
	if _, err := sig.Verify(r, exampleSecret+"x"); codeOf(err) != codeSignatureDoesNotMatch {
		t.Fatalf("wrong secret: %v", err)
	}
	r.Header.Set("Range", "bytes=0-10")
	if _, err := sig.Verify(r, exampleSecret); codeOf(err) != codeSignatureDoesNotMatch {
		t.Fatalf("changed signed header: %v", err)
	}
	// The clock: within 15 minutes of the request's date only.
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	if err := sig.CheckTime(at.Add(14 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, now := range []time.Time{at.Add(16 * time.Minute), at.Add(-16 * time.Minute)} {
		if err := sig.CheckTime(now); codeOf(err) != codeRequestTimeTooSkewed {
			t.Fatalf("skewed by %v: %v", now.Sub(at), err)
		}
	}
}

func TestSigV4AmazonPresignedExample(t *testing.T) {
	r := readRequest(t, `GET /test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404 HTTP/1.1
Host: examplebucket.s3.amazonaws.com

`)
	sig, ok, err := parseSigV4(r)
	if err != nil || !ok || !sig.Presigned || sig.Expires != 24*time.Hour {
		t.Fatalf("parse: %+v %v %v", sig, ok, err)
	}
	if _, err := sig.Verify(r, exampleSecret); err != nil {
		t.Fatalf("Amazon's presigned example does not verify: %v\ncanonical request:\n%s", err, sig.CanonicalRequest(r))
	}
	at := time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)
	if err := sig.CheckTime(at.Add(23 * time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := sig.CheckTime(at.Add(25 * time.Hour)); codeOf(err) != codeAccessDenied {
		t.Fatalf("expired: %v", err)
	}
}

func codeOf(err error) string {
	var ae *apiError
	var se *sigv4.Error
	if errors.As(err, &ae) || errors.As(err, &se) {
		return toAPIError(err).Code
	}
	return "not an S3 error"
}

func TestSigV4Malformed(t *testing.T) {
	for name, auth := range map[string]string{
		"v2":            "AWS AKID:c2lnbmF0dXJl",
		"no credential": "AWS4-HMAC-SHA256 SignedHeaders=host,Signature=" + strings.Repeat("0", 64),
		"bad service":   "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/ec2/aws4_request,SignedHeaders=host,Signature=" + strings.Repeat("0", 64),
		"host unsigned": "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,SignedHeaders=x-amz-date,Signature=" + strings.Repeat("0", 64),
		"short sig":     "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=abc",
	} {
		r, _ := http.NewRequest("GET", "http://h/b/k", nil)
		r.Header.Set("Authorization", auth)
		r.Header.Set("X-Amz-Date", "20130524T000000Z")
		r.Header.Set("X-Amz-Content-Sha256", unsignedPayload)
		if _, ok, err := parseSigV4(r); !ok || err == nil {
			t.Errorf("%s: accepted (%v)", name, err)
		}
	}
	r, _ := http.NewRequest("GET", "http://h/b/k", nil)
	if _, ok, err := parseSigV4(r); ok || err != nil {
		t.Fatalf("an unsigned request: %v %v", ok, err)
	}
}

// streamingRequest signs a PUT of data with minio's streaming signer,
// an implementation independent of this package's.
func streamingRequest(t *testing.T, data []byte, trailer http.Header) *http.Request {
	t.Helper()
	r, _ := http.NewRequest("PUT", "http://127.0.0.1:9000/bucket/key", bytes.NewReader(data))
	r.Trailer = trailer
	r = signer.StreamingSignV4(r, exampleAccess, exampleSecret, "", "us-east-1", int64(len(data)), time.Now().UTC(), sha256Hasher{sha256.New()})
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	// As the server receives it.
	r.Body = io.NopCloser(bytes.NewReader(raw))
	r.Host = r.URL.Host
	return r
}

// sha256Hasher is the hasher minio's signer takes.
type sha256Hasher struct{ hash.Hash }

func (sha256Hasher) Close() {}

func decodeStreaming(r *http.Request) ([]byte, error) {
	sig, _, err := parseSigV4(r)
	if err != nil {
		return nil, err
	}
	key, err := sig.Verify(r, exampleSecret)
	if err != nil {
		return nil, err
	}
	trailer := sig.PayloadHash == streamingPayloadTrail
	cr := newChunkedReader(r.Body, sig, key, true, trailer)
	var body io.Reader = cr
	if name := r.Header.Get("X-Amz-Trailer"); name != "" {
		alg := strings.TrimPrefix(name, "x-amz-checksum-")
		body = &checksumReader{r: cr, name: alg, h: newChecksum(alg), wantFn: func() string { return cr.Trailers[name] }}
	}
	return io.ReadAll(body)
}

func TestStreamingChunksVerify(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 20_000) // several 64 KiB chunks
	r := streamingRequest(t, data, nil)
	if r.Header.Get("X-Amz-Content-Sha256") != streamingPayload {
		t.Fatalf("payload mode %q", r.Header.Get("X-Amz-Content-Sha256"))
	}
	got, err := decodeStreaming(r)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("decoded %d bytes, err %v", len(got), err)
	}

	// One flipped byte of data fails its chunk.
	r = streamingRequest(t, data, nil)
	raw, _ := io.ReadAll(r.Body)
	i := bytes.Index(raw, []byte("0123456789")) + 70_000
	raw[i] ^= 1
	r.Body = io.NopCloser(bytes.NewReader(raw))
	if _, err := decodeStreaming(r); codeOf(err) != codeSignatureDoesNotMatch {
		t.Fatalf("tampered chunk: %v", err)
	}

	// A stream cut short is incomplete, never complete.
	r = streamingRequest(t, data, nil)
	raw, _ = io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(raw[:len(raw)-100]))
	if _, err := decodeStreaming(r); err == nil {
		t.Fatal("a truncated stream decoded")
	}
}

func TestStreamingTrailerChecksum(t *testing.T) {
	data := bytes.Repeat([]byte("abc"), 50_000)
	h := newChecksum("crc32c")
	h.Write(data)
	trailer := http.Header{}
	trailer.Set("x-amz-checksum-crc32c", encodeChecksum(h.Sum(nil)))
	r := streamingRequest(t, data, trailer)
	if r.Header.Get("X-Amz-Content-Sha256") != streamingPayloadTrail {
		t.Fatalf("payload mode %q", r.Header.Get("X-Amz-Content-Sha256"))
	}
	got, err := decodeStreaming(r)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("decoded %d bytes, err %v", len(got), err)
	}
	trailer.Set("x-amz-checksum-crc32c", encodeChecksum([]byte{1, 2, 3, 4}))
	if _, err := decodeStreaming(streamingRequest(t, data, trailer)); codeOf(err) != codeBadDigest {
		t.Fatalf("wrong checksum: %v", err)
	}
}

func TestParseRange(t *testing.T) {
	for _, c := range []struct {
		h             string
		off, n        int64
		partial, fail bool
	}{
		{"", 0, 100, false, false},
		{"bytes=0-9", 0, 10, true, false},
		{"bytes=90-", 90, 10, true, false},
		{"bytes=-10", 90, 10, true, false},
		{"bytes=-1000", 0, 100, true, false},
		{"bytes=95-200", 95, 5, true, false},
		{"bytes=100-", 0, 0, false, true},
		{"bytes=5-2", 0, 100, false, false},
		{"bytes=0-1,5-6", 0, 100, false, false},
		{"items=0-1", 0, 100, false, false},
	} {
		off, n, partial, err := parseRange(c.h, 100)
		if off != c.off || n != c.n || partial != c.partial || (err != nil) != c.fail {
			t.Errorf("%q: %d %d %v %v", c.h, off, n, partial, err)
		}
	}
}
