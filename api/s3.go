package api

import (
	"net/http"
	"net/url"
)

// S3 manages what the native API offers of the S3 object store: EC2
// credentials for the S3 API, and images made of objects.
type S3 struct{ c *Client }

// S3 returns a handle on the /v1/s3 endpoints.
func (c *Client) S3() *S3 { return &S3{c} }

// EC2Credential is an access key and its secret, issued to a user for a
// project; S3 clients sign requests with them (AWS Signature Version 4).
type EC2Credential struct {
	Access    string
	Secret    string
	UserID    string
	ProjectID string
	// CreatedAt is unix nanoseconds.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// CreateCredential issues a credential to a user (id or name) for a
// project (id or name).
func (s *S3) CreateCredential(user, project string) (*EC2Credential, *WriteMeta, error) {
	var out EC2Credential
	in := map[string]string{"User": user, "Project": project}
	wm, err := s.c.write(http.MethodPost, "/v1/s3/credentials", nil, in, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}

// Credentials lists a user's (id or name) credentials.
func (s *S3) Credentials(user string, q *QueryOptions) ([]*EC2Credential, error) {
	var out []*EC2Credential
	_, err := s.c.doJSON(&request{method: http.MethodGet, path: "/v1/s3/credentials", params: url.Values{"user": {user}}, query: q}, nil, &out)
	return out, err
}

// DeleteCredential deletes a credential by its access key.
func (s *S3) DeleteCredential(access string) (*WriteMeta, error) {
	return s.c.delete("/v1/s3/credentials/"+url.PathEscape(access), nil)
}

// ImportImage creates an active image whose data is the object key of
// bucket, without copying it. img carries the image's attributes (name,
// formats, visibility, owner).
func (s *S3) ImportImage(bucket, key string, img *Image) (*Image, *WriteMeta, error) {
	var out Image
	in := map[string]any{"Bucket": bucket, "Key": key, "Image": img}
	wm, err := s.c.write(http.MethodPost, "/v1/images/import", nil, in, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, wm, nil
}
