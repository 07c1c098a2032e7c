package s3

import (
	"encoding/base64"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/stratus-cloud/stratus/structs"
)

// maxListKeys is S3's largest page.
const maxListKeys = 1000

type bucketXML struct {
	Name         string `xml:"Name"`
	CreationDate string `xml:"CreationDate"`
}

type ownerXML struct {
	ID          string `xml:"ID"`
	DisplayName string `xml:"DisplayName"`
}

type listBucketsResult struct {
	XMLName xml.Name    `xml:"ListAllMyBucketsResult"`
	Xmlns   string      `xml:"xmlns,attr"`
	Owner   ownerXML    `xml:"Owner"`
	Buckets []bucketXML `xml:"Buckets>Bucket"`
}

// listBuckets answers the buckets of the caller's project.
func (a *API) listBuckets(q *request) error {
	var resp structs.S3BucketListResponse
	if err := q.call("S3.BucketList", &structs.S3BucketListRequest{ProjectID: q.caller.ProjectID}, &resp); err != nil {
		return err
	}
	out := listBucketsResult{Xmlns: xmlns, Owner: ownerXML{ID: q.caller.ProjectID, DisplayName: q.caller.ProjectID}, Buckets: []bucketXML{}}
	for _, b := range resp.Buckets {
		out.Buckets = append(out.Buckets, bucketXML{Name: b.Name, CreationDate: isoTime(b.CreatedAt)})
	}
	return q.writeXML(out)
}

// createBucket creates a bucket for the caller's project. A
// CreateBucketConfiguration body (a location constraint) is read and
// ignored: the region is the agent's.
func (a *API) createBucket(q *request) error {
	if _, err := q.smallBody(); err != nil {
		return err
	}
	var resp structs.S3BucketResponse
	if err := q.call("S3.BucketCreate", &structs.S3BucketRequest{Name: q.bucket, Caller: q.caller}, &resp); err != nil {
		return err
	}
	q.w.Header().Set("Location", "/"+q.bucket)
	q.w.WriteHeader(http.StatusOK)
	return nil
}

// bucket reads the request's bucket and checks the caller may use it.
func (q *request) bucketRecord() (*structs.S3Bucket, error) {
	var resp structs.S3BucketResponse
	if err := q.call("S3.BucketGet", &structs.S3BucketGetRequest{Name: q.bucket}, &resp); err != nil {
		return nil, err
	}
	if !q.caller.CanAccess(resp.Bucket.ProjectID) {
		return nil, s3Error(codeAccessDenied, "Access Denied")
	}
	return resp.Bucket, nil
}

func (a *API) headBucket(q *request) error {
	if _, err := q.bucketRecord(); err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusOK)
	return nil
}

func (a *API) deleteBucket(q *request) error {
	var resp structs.GenericResponse
	if err := q.call("S3.BucketDelete", &structs.S3BucketRequest{Name: q.bucket, Caller: q.caller}, &resp); err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

type locationResult struct {
	XMLName xml.Name `xml:"LocationConstraint"`
	Xmlns   string   `xml:"xmlns,attr"`
	Region  string   `xml:",chardata"`
}

// bucketLocation answers an empty constraint (S3's us-east-1): clients
// then sign for any region, and the signature names which.
func (a *API) bucketLocation(q *request) error {
	if _, err := q.bucketRecord(); err != nil {
		return err
	}
	return q.writeXML(locationResult{Xmlns: xmlns})
}

type objectXML struct {
	Key          string `xml:"Key"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size"`
	StorageClass string `xml:"StorageClass"`
}

type prefixXML struct {
	Prefix string `xml:"Prefix"`
}

type listObjectsResult struct {
	XMLName               xml.Name    `xml:"ListBucketResult"`
	Xmlns                 string      `xml:"xmlns,attr"`
	Name                  string      `xml:"Name"`
	Prefix                string      `xml:"Prefix"`
	Marker                *string     `xml:"Marker,omitempty"`
	NextMarker            string      `xml:"NextMarker,omitempty"`
	StartAfter            string      `xml:"StartAfter,omitempty"`
	ContinuationToken     string      `xml:"ContinuationToken,omitempty"`
	NextContinuationToken string      `xml:"NextContinuationToken,omitempty"`
	KeyCount              *int        `xml:"KeyCount,omitempty"`
	MaxKeys               int         `xml:"MaxKeys"`
	Delimiter             string      `xml:"Delimiter,omitempty"`
	EncodingType          string      `xml:"EncodingType,omitempty"`
	IsTruncated           bool        `xml:"IsTruncated"`
	Contents              []objectXML `xml:"Contents"`
	CommonPrefixes        []prefixXML `xml:"CommonPrefixes"`
}

// listObjects answers ListObjectsV2 (list-type=2) or the original
// ListObjects: the caller's bucket's keys by prefix, delimiter, page.
func (a *API) listObjects(q *request) error {
	v := q.r.URL.Query()
	v2 := v.Get("list-type") == "2"
	maxKeys := maxListKeys
	if s := v.Get("max-keys"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return s3Error(codeInvalidArgument, "max-keys must be a non-negative integer")
		}
		maxKeys = min(n, maxListKeys)
	}
	encoding := v.Get("encoding-type")
	if encoding != "" && encoding != "url" {
		return s3Error(codeInvalidArgument, "Invalid Encoding Method specified in Request")
	}
	req := &structs.S3ObjectListRequest{Bucket: q.bucket, Prefix: v.Get("prefix"), Delimiter: v.Get("delimiter"),
		MaxKeys: maxKeys, Caller: q.caller}
	out := listObjectsResult{Xmlns: xmlns, Name: q.bucket, MaxKeys: maxKeys, EncodingType: encoding}
	if v2 {
		req.StartAfter = v.Get("start-after")
		if tok := v.Get("continuation-token"); tok != "" {
			raw, err := base64.RawURLEncoding.DecodeString(tok)
			if err != nil {
				return s3Error(codeInvalidArgument, "The continuation token provided is incorrect")
			}
			req.StartAfter = string(raw)
			out.ContinuationToken = tok
		}
	} else {
		req.StartAfter = v.Get("marker")
		marker := encode(encoding, req.StartAfter)
		out.Marker = &marker
	}
	var resp structs.S3ObjectListResponse
	if err := q.call("S3.ObjectList", req, &resp); err != nil {
		return err
	}
	out.Prefix, out.Delimiter = encode(encoding, req.Prefix), encode(encoding, req.Delimiter)
	out.IsTruncated = resp.Truncated
	for _, o := range resp.Objects {
		out.Contents = append(out.Contents, objectXML{Key: encode(encoding, o.Key), LastModified: isoTime(o.UpdatedAt),
			ETag: quoteETag(o.ETag), Size: o.Size, StorageClass: "STANDARD"})
	}
	for _, p := range resp.CommonPrefixes {
		out.CommonPrefixes = append(out.CommonPrefixes, prefixXML{Prefix: encode(encoding, p)})
	}
	if v2 {
		count := len(out.Contents) + len(out.CommonPrefixes)
		out.KeyCount = &count
		out.StartAfter = encode(encoding, v.Get("start-after"))
		if resp.Truncated {
			out.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(resp.NextStartAfter))
		}
	} else if resp.Truncated && req.Delimiter != "" {
		out.NextMarker = encode(encoding, resp.NextStartAfter)
	}
	return q.writeXML(out)
}

// encode applies encoding-type=url to a key or prefix of a listing.
func encode(encoding, s string) string {
	if encoding == "url" {
		return url.QueryEscape(s)
	}
	return s
}

// maxXMLBody bounds the XML bodies the API reads.
const maxXMLBody = 1 << 20

// smallBody reads a request's (XML) body, decoded and checked as its
// payload mode says.
func (q *request) smallBody() ([]byte, error) {
	body, _, err := q.payload(maxXMLBody)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(body, maxXMLBody+1))
}
