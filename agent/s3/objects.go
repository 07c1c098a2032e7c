package s3

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// checksumAlgorithms are the x-amz-checksum-* S3 defines.
var checksumAlgorithms = []string{"crc32", "crc32c", "crc64nvme", "sha1", "sha256"}

// payload returns the request body decoded as its payload mode says
// (plain, or aws-chunked with or without signatures and trailers),
// wrapped so that reading it to the end checks the signed SHA-256 and
// any x-amz-checksum-*; and the data's size (-1 when not declared).
// limit, when positive, bounds the raw body.
func (q *request) payload(limit int64) (io.Reader, int64, error) {
	r := q.r
	var body io.Reader = r.Body
	if limit > 0 {
		body = http.MaxBytesReader(q.w, r.Body, limit)
	}
	size := r.ContentLength
	var chunked *chunkedReader
	switch ph := q.sig.PayloadHash; ph {
	case streamingPayload, streamingPayloadTrail, streamingUnsignedTrail:
		if q.sig.Presigned {
			return nil, 0, s3Error(codeInvalidRequest, "A presigned request cannot stream a chunked payload.")
		}
		n, err := strconv.ParseInt(r.Header.Get("X-Amz-Decoded-Content-Length"), 10, 64)
		if err != nil || n < 0 {
			return nil, 0, s3Error(codeMissingContentLength, "You must provide the x-amz-decoded-content-length HTTP header.")
		}
		size = n
		chunked = newChunkedReader(body, q.sig, q.signKey, ph != streamingUnsignedTrail, ph != streamingPayload)
		body = chunked
	case unsignedPayload:
	default:
		if !isHexSig(ph) {
			return nil, 0, s3Error(codeInvalidArgument,
				"x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD or a valid sha256 value.")
		}
		body = &sha256Reader{r: body, h: sha256.New(), want: ph}
	}
	for _, alg := range checksumAlgorithms {
		name := "x-amz-checksum-" + alg
		if v := r.Header.Get(name); v != "" {
			return &checksumReader{r: body, name: alg, h: newChecksum(alg), want: v}, size, nil
		}
		if chunked != nil && strings.EqualFold(strings.TrimSpace(r.Header.Get("X-Amz-Trailer")), name) {
			return &checksumReader{r: body, name: alg, h: newChecksum(alg), wantFn: func() string { return chunked.Trailers[name] }}, size, nil
		}
	}
	return body, size, nil
}

// sha256Reader fails the end of the body when its SHA-256 is not the
// signed x-amz-content-sha256.
type sha256Reader struct {
	r    io.Reader
	h    hash.Hash
	want string
}

func (s *sha256Reader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.h.Write(p[:n])
	if errors.Is(err, io.EOF) && hex.EncodeToString(s.h.Sum(nil)) != s.want {
		return n, s3Error(structs.S3ErrXAmzContentSHA256, "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	return n, err
}

// contentMD5 reads Content-MD5 (base64) as hex; "" when absent.
func contentMD5(r *http.Request) (string, error) {
	v := r.Header.Get("Content-MD5")
	if v == "" {
		return "", nil
	}
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(raw) != 16 {
		return "", s3Error(codeInvalidDigest, "The Content-MD5 you specified is not valid.")
	}
	return hex.EncodeToString(raw), nil
}

// userMetadata collects x-amz-meta-* headers, names lowercased.
func userMetadata(h http.Header) (map[string]string, error) {
	meta := map[string]string{}
	total := 0
	for name, values := range h {
		lower := strings.ToLower(name)
		if !strings.HasPrefix(lower, "x-amz-meta-") {
			continue
		}
		k := strings.TrimPrefix(lower, "x-amz-meta-")
		meta[k] = strings.Join(values, ",")
		total += len(k) + len(meta[k])
	}
	if total > structs.S3MaxMetadataSize {
		return nil, s3Error("MetadataTooLarge", "Your metadata headers exceed the maximum allowed metadata size of %d bytes.", structs.S3MaxMetadataSize)
	}
	return meta, nil
}

// putRequest builds the stream request of an object or part upload.
func (q *request) putRequest() (*structs.S3PutRequest, io.Reader, error) {
	body, size, err := q.payload(0)
	if err != nil {
		return nil, nil, err
	}
	if size < 0 {
		return nil, nil, s3Error(codeMissingContentLength, "You must provide the Content-Length HTTP header.")
	}
	if size > structs.S3MaxObjectSize {
		return nil, nil, s3Error(structs.S3ErrEntityTooLarge, "Your proposed upload exceeds the maximum allowed size.")
	}
	md5hex, err := contentMD5(q.r)
	if err != nil {
		return nil, nil, err
	}
	return &structs.S3PutRequest{Bucket: q.bucket, Key: q.key, Size: size, ContentMD5: md5hex, Caller: q.caller, AuthToken: q.token}, incompleteBody{body}, nil
}

// incompleteBody reports a body that broke off (the client went away
// mid-upload) as S3's IncompleteBody rather than an internal error.
type incompleteBody struct{ r io.Reader }

func (b incompleteBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	var ae *apiError
	if err != nil && !errors.Is(err, io.EOF) && !errors.As(err, &ae) {
		err = s3Error(codeIncompleteBody, "The request body ended early: %v", err)
	}
	return n, err
}

// putObject stores an object (PutObject).
func (a *API) putObject(q *request) error {
	if q.r.Header.Get("X-Amz-Copy-Source") != "" {
		return s3Error(codeNotImplemented, "CopyObject is not implemented.")
	}
	if err := structs.ValidateS3Key(q.key); err != nil {
		return err
	}
	req, body, err := q.putRequest()
	if err != nil {
		return err
	}
	if req.Metadata, err = userMetadata(q.r.Header); err != nil {
		return err
	}
	req.ContentType = q.r.Header.Get("Content-Type")
	res, err := a.data.Put(req, body)
	if err != nil {
		return err
	}
	q.w.Header().Set("ETag", quoteETag(res.Object.ETag))
	q.w.WriteHeader(http.StatusOK)
	return nil
}

// deleteObject deletes an object; a missing key is no error.
func (a *API) deleteObject(q *request) error {
	var resp structs.GenericResponse
	if err := q.call("S3.ObjectDelete", &structs.S3ObjectDeleteRequest{Bucket: q.bucket, Key: q.key, Caller: q.caller}, &resp); err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// objectRecord reads the request's object after checking its bucket is
// the caller's (so another project learns nothing of its keys).
func (q *request) objectRecord() (*structs.S3Object, error) {
	if _, err := q.bucketRecord(); err != nil {
		return nil, err
	}
	var resp structs.S3ObjectResponse
	if err := q.call("S3.ObjectGet", &structs.S3ObjectGetRequest{Bucket: q.bucket, Key: q.key}, &resp); err != nil {
		return nil, err
	}
	return resp.Object, nil
}

// getObject answers GetObject and HeadObject, with a Range.
func (a *API) getObject(q *request) error {
	o, err := q.objectRecord()
	if err != nil {
		return err
	}
	h := q.w.Header()
	etag := quoteETag(o.ETag)
	h.Set("ETag", etag)
	h.Set("Last-Modified", time.Unix(0, o.UpdatedAt).UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	ct := o.ContentType
	if ct == "" {
		ct = "binary/octet-stream"
	}
	h.Set("Content-Type", ct)
	for k, v := range o.Metadata {
		h.Set("X-Amz-Meta-"+k, v)
	}
	v := q.r.URL.Query()
	for param, header := range map[string]string{"response-content-type": "Content-Type", "response-content-disposition": "Content-Disposition",
		"response-cache-control": "Cache-Control", "response-content-encoding": "Content-Encoding", "response-expires": "Expires"} {
		if s := v.Get(param); s != "" {
			h.Set(header, s)
		}
	}
	if m := q.r.Header.Get("If-Match"); m != "" && m != "*" && m != etag {
		return s3Error("PreconditionFailed", "At least one of the pre-conditions you specified did not hold")
	}
	if m := q.r.Header.Get("If-None-Match"); m != "" && (m == "*" || m == etag) {
		q.w.WriteHeader(http.StatusNotModified)
		return nil
	}
	offset, length, partial, err := parseRange(q.r.Header.Get("Range"), o.Size)
	if err != nil {
		h.Set("Content-Range", "bytes */"+strconv.FormatInt(o.Size, 10))
		return err
	}
	status := http.StatusOK
	if partial {
		status = http.StatusPartialContent
		h.Set("Content-Range", "bytes "+strconv.FormatInt(offset, 10)+"-"+strconv.FormatInt(offset+length-1, 10)+"/"+strconv.FormatInt(o.Size, 10))
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	if q.r.Method == http.MethodHead || length == 0 {
		q.w.WriteHeader(status)
		return nil
	}
	rc, err := a.data.Open(q.token, o.HashValue, o.Locations, offset, length)
	if err != nil {
		return err
	}
	defer rc.Close()
	q.w.WriteHeader(status)
	if n, err := io.CopyBuffer(q.w, io.LimitReader(rc, length), make([]byte, 256<<10)); err != nil || n != length {
		a.logger.Debug("s3 download cut short", "bucket", q.bucket, "key", q.key, "sent", n, "error", err)
	}
	return nil
}

// parseRange reads a single "bytes=first-last", "bytes=first-" or
// "bytes=-suffix" range. A header that is absent, malformed or names
// several ranges selects the whole object, as S3 does; a range that
// starts past the end is InvalidRange.
func parseRange(header string, size int64) (offset, length int64, partial bool, err error) {
	spec, ok := strings.CutPrefix(header, "bytes=")
	if header == "" || !ok || strings.Contains(spec, ",") {
		return 0, size, false, nil
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return 0, size, false, nil
	}
	unsatisfiable := s3Error(codeInvalidRange, "The requested range is not satisfiable")
	if first == "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return 0, size, false, nil
		}
		if n == 0 || size == 0 {
			return 0, 0, false, unsatisfiable
		}
		n = min(n, size)
		return size - n, n, true, nil
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return 0, size, false, nil
	}
	end := size - 1
	if last != "" {
		if end, err = strconv.ParseInt(last, 10, 64); err != nil || end < start {
			return 0, size, false, nil
		}
		end = min(end, size-1)
	}
	if start >= size {
		return 0, 0, false, unsatisfiable
	}
	return start, end - start + 1, true, nil
}
