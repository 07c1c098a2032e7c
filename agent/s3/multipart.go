package s3

import (
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

type initiateResult struct {
	XMLName  xml.Name `xml:"InitiateMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	UploadID string   `xml:"UploadId"`
}

// createUpload starts a multipart upload (CreateMultipartUpload).
func (a *API) createUpload(q *request) error {
	if err := structs.ValidateS3Key(q.key); err != nil {
		return err
	}
	meta, err := userMetadata(q.r.Header)
	if err != nil {
		return err
	}
	up := &structs.S3Object{Bucket: q.bucket, Key: q.key, ContentType: q.r.Header.Get("Content-Type"), Metadata: meta}
	var resp structs.S3ObjectResponse
	if err := q.call("S3.UploadCreate", &structs.S3UploadCreateRequest{Upload: up, Caller: q.caller}, &resp); err != nil {
		return err
	}
	return q.writeXML(initiateResult{Xmlns: xmlns, Bucket: q.bucket, Key: q.key, UploadID: resp.Object.UploadID})
}

// uploadPart stores one part (UploadPart).
func (a *API) uploadPart(q *request) error {
	v := q.r.URL.Query()
	if q.r.Header.Get("X-Amz-Copy-Source") != "" {
		return s3Error(codeNotImplemented, "UploadPartCopy is not implemented.")
	}
	n, err := strconv.Atoi(v.Get("partNumber"))
	if err != nil || n < 1 || n > structs.S3MaxPartNumber {
		return s3Error(codeInvalidArgument, "Part number must be an integer between 1 and %d, inclusive", structs.S3MaxPartNumber)
	}
	req, body, err := q.putRequest()
	if err != nil {
		return err
	}
	req.UploadID, req.PartNumber = v.Get("uploadId"), n
	res, err := a.data.Put(req, body)
	if err != nil {
		return err
	}
	q.w.Header().Set("ETag", quoteETag(res.Part.ETag))
	q.w.WriteHeader(http.StatusOK)
	return nil
}

type partXML struct {
	PartNumber   int    `xml:"PartNumber"`
	LastModified string `xml:"LastModified,omitempty"`
	ETag         string `xml:"ETag"`
	Size         int64  `xml:"Size,omitempty"`
}

type listPartsResult struct {
	XMLName              xml.Name  `xml:"ListPartsResult"`
	Xmlns                string    `xml:"xmlns,attr"`
	Bucket               string    `xml:"Bucket"`
	Key                  string    `xml:"Key"`
	UploadID             string    `xml:"UploadId"`
	Initiator            ownerXML  `xml:"Initiator"`
	Owner                ownerXML  `xml:"Owner"`
	StorageClass         string    `xml:"StorageClass"`
	PartNumberMarker     int       `xml:"PartNumberMarker"`
	NextPartNumberMarker int       `xml:"NextPartNumberMarker"`
	MaxParts             int       `xml:"MaxParts"`
	IsTruncated          bool      `xml:"IsTruncated"`
	Parts                []partXML `xml:"Part"`
}

// listParts lists an upload's parts (ListParts).
func (a *API) listParts(q *request) error {
	v := q.r.URL.Query()
	maxParts, marker := 1000, 0
	if s := v.Get("max-parts"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return s3Error(codeInvalidArgument, "max-parts must be a non-negative integer")
		}
		maxParts = min(n, 1000)
	}
	if s := v.Get("part-number-marker"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return s3Error(codeInvalidArgument, "part-number-marker must be a non-negative integer")
		}
		marker = n
	}
	if _, err := q.bucketRecord(); err != nil {
		return err
	}
	var resp structs.S3ObjectResponse
	if err := q.call("S3.ObjectGet", &structs.S3ObjectGetRequest{Bucket: q.bucket, Key: q.key, UploadID: v.Get("uploadId")}, &resp); err != nil {
		return err
	}
	u := resp.Object
	owner := ownerXML{ID: u.ProjectID, DisplayName: u.ProjectID}
	out := listPartsResult{Xmlns: xmlns, Bucket: q.bucket, Key: q.key, UploadID: u.UploadID, Initiator: owner, Owner: owner,
		StorageClass: "STANDARD", PartNumberMarker: marker, MaxParts: maxParts}
	for _, p := range u.Parts {
		if p.Number <= marker {
			continue
		}
		if len(out.Parts) == maxParts {
			out.IsTruncated = true
			break
		}
		out.Parts = append(out.Parts, partXML{PartNumber: p.Number, LastModified: isoTime(p.At), ETag: quoteETag(p.ETag), Size: p.Size})
		out.NextPartNumberMarker = p.Number
	}
	return q.writeXML(out)
}

type completeRequest struct {
	XMLName xml.Name  `xml:"CompleteMultipartUpload"`
	Parts   []partXML `xml:"Part"`
}

type completeResult struct {
	XMLName  xml.Name `xml:"CompleteMultipartUploadResult"`
	Xmlns    string   `xml:"xmlns,attr"`
	Location string   `xml:"Location"`
	Bucket   string   `xml:"Bucket"`
	Key      string   `xml:"Key"`
	ETag     string   `xml:"ETag"`
}

// completeUpload assembles the listed parts into the object
// (CompleteMultipartUpload).
func (a *API) completeUpload(q *request) error {
	raw, err := q.smallBody()
	if err != nil {
		return err
	}
	var body completeRequest
	if err := xml.Unmarshal(raw, &body); err != nil {
		return s3Error(codeMalformedXML, "The XML you provided was not well-formed or did not validate against our published schema.")
	}
	req := &structs.S3CompleteRequest{Bucket: q.bucket, Key: q.key, UploadID: q.r.URL.Query().Get("uploadId"), Caller: q.caller, AuthToken: q.token}
	for _, p := range body.Parts {
		req.Parts = append(req.Parts, structs.S3CompletePart{Number: p.PartNumber, ETag: strings.Trim(strings.TrimSpace(p.ETag), `"`)})
	}
	obj, err := a.data.Complete(req)
	if err != nil {
		return err
	}
	return q.writeXML(completeResult{Xmlns: xmlns, Location: q.url("/" + q.bucket + "/" + q.key), Bucket: q.bucket, Key: q.key, ETag: quoteETag(obj.ETag)})
}

// abortUpload discards an upload and its parts (AbortMultipartUpload).
func (a *API) abortUpload(q *request) error {
	var resp structs.GenericResponse
	err := q.call("S3.ObjectDelete", &structs.S3ObjectDeleteRequest{Bucket: q.bucket, Key: q.key,
		UploadID: q.r.URL.Query().Get("uploadId"), Caller: q.caller}, &resp)
	if err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}
