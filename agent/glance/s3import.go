package glance

import (
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// S3SourceKey is the create-body attribute that makes an image of an S3
// object: "bucket/key". The image is active at once, and its data is the
// object's blob (no copy).
const S3SourceKey = "stratus_s3_source"

// createFromS3 creates an active image from an object of a bucket of the
// caller's project.
func (a *API) createFromS3(q *request, img *structs.Image, source any) error {
	ref, ok := source.(string)
	bucket, key, found := strings.Cut(ref, "/")
	if !ok || !found || bucket == "" || key == "" {
		return schemaError("%s is not of the form 'bucket/key'", jsonText(source))
	}
	caller := structs.S3Caller{ProjectID: q.token.ProjectID, UserID: q.token.UserID, Admin: q.token.IsAdmin()}
	var resp structs.SingleImageResponse
	err := q.call("S3.ImageImport", &structs.S3ImageImportRequest{Bucket: bucket, Key: key, Image: img, Caller: caller}, &resp)
	if err != nil {
		return s3ImportError(err)
	}
	q.w.Header().Set("Location", baseURL(q.r)+"/v2/images/"+resp.Image.ID)
	return q.json(http.StatusCreated, imageView(resp.Image))
}

// s3ImportError words the S3 store's errors as Glance's.
func s3ImportError(err error) error {
	switch structs.ErrorType(err) {
	case structs.S3ErrNoSuchBucket, structs.S3ErrNoSuchKey:
		return errorf(http.StatusBadRequest, "%s: %s", S3SourceKey, structs.Message(err))
	case structs.S3ErrAccessDenied:
		return errorf(http.StatusForbidden, "%s: you may not read this object.", S3SourceKey)
	}
	return err
}
