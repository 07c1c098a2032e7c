package agent

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/signer"
)

// s3Cred is an EC2 credential as Keystone's OS-EC2 API answers it.
type s3Cred struct {
	UserID   string `json:"user_id"`
	TenantID string `json:"tenant_id"`
	Access   string `json:"access"`
	Secret   string `json:"secret"`
}

// keystone sends a JSON request to the identity API and decodes the
// answer into out (when not nil), failing unless the status is want.
func keystone(t *testing.T, a *Agent, method, path, token string, body any, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.url("/identity/v3"+path), rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
}

// whoami reads the user and project ids of a token.
func whoami(t *testing.T, a *Agent, token string) (userID, projectID string) {
	t.Helper()
	req, _ := http.NewRequest("GET", a.url("/identity/v3/auth/tokens"), nil)
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("X-Subject-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Token struct {
			User    struct{ ID string } `json:"user"`
			Project struct{ ID string } `json:"project"`
		} `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return body.Token.User.ID, body.Token.Project.ID
}

// ec2Credential creates an EC2 credential through Keystone's OS-EC2 API.
func ec2Credential(t *testing.T, a *Agent, token, userID, projectID string) s3Cred {
	t.Helper()
	var out struct {
		Credential s3Cred `json:"credential"`
	}
	keystone(t, a, "POST", "/users/"+userID+"/credentials/OS-EC2", token, map[string]string{"tenant_id": projectID}, http.StatusCreated, &out)
	if out.Credential.Access == "" || out.Credential.Secret == "" || out.Credential.TenantID != projectID {
		t.Fatalf("credential %+v", out.Credential)
	}
	return out.Credential
}

// otherProjectUser has an admin create a project and a member user of it,
// and answers the user's EC2 credential.
func otherProjectUser(t *testing.T, a *Agent, admin string) s3Cred {
	t.Helper()
	var p struct{ Project struct{ ID string } }
	keystone(t, a, "POST", "/projects", admin, map[string]any{"project": map[string]any{"name": "other"}}, http.StatusCreated, &p)
	var u struct{ User struct{ ID string } }
	keystone(t, a, "POST", "/users", admin, map[string]any{"user": map[string]any{"name": "other", "password": "other"}}, http.StatusCreated, &u)
	var roles struct{ Roles []struct{ ID string } }
	keystone(t, a, "GET", "/roles?name=member", admin, nil, http.StatusOK, &roles)
	if len(roles.Roles) != 1 {
		t.Fatalf("roles %+v", roles)
	}
	keystone(t, a, "PUT", "/projects/"+p.Project.ID+"/users/"+u.User.ID+"/roles/"+roles.Roles[0].ID, admin, nil, http.StatusNoContent, nil)
	return ec2Credential(t, a, admin, u.User.ID, p.Project.ID)
}

func minioClient(t *testing.T, endpoint string, c s3Cred) *minio.Client {
	t.Helper()
	mc, err := minio.New(endpoint, &minio.Options{Creds: credentials.NewStaticV4(c.Access, c.Secret, ""), Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	return mc
}

// s3Code is the S3 error code of err.
func s3Code(err error) string {
	var r minio.ErrorResponse
	if errors.As(err, &r) {
		return r.Code
	}
	return fmt.Sprintf("not an S3 error: %v", err)
}

func TestS3WithARealClient(t *testing.T) {
	t.Parallel()
	// ACLs on: the servers verify each request's signature and the
	// calls carry the signer's token (S3.Verify).
	on := true
	a := testAgent(t, func(c *Config) { c.S3 = &S3Config{Listen: "127.0.0.1:0"}; c.ACL = &ACLConfig{Enabled: &on} })
	ctx := context.Background()
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	userID, projectID := whoami(t, a, demo)
	cred := ec2Credential(t, a, demo, userID, projectID)
	var listed struct{ Credentials []s3Cred }
	keystone(t, a, "GET", "/users/"+userID+"/credentials/OS-EC2", demo, nil, http.StatusOK, &listed)
	if len(listed.Credentials) != 1 || listed.Credentials[0].Access != cred.Access {
		t.Fatalf("credentials %+v", listed)
	}
	mc := minioClient(t, a.S3Addr(), cred)

	// Buckets.
	if err := mc.MakeBucket(ctx, "photos", minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := mc.MakeBucket(ctx, "photos", minio.MakeBucketOptions{}); s3Code(err) != "BucketAlreadyOwnedByYou" {
		t.Fatalf("second create: %v", err)
	}
	if err := mc.MakeBucket(ctx, "Bad_Name", minio.MakeBucketOptions{}); err == nil {
		t.Fatal("an invalid bucket name was accepted")
	}
	if ok, err := mc.BucketExists(ctx, "photos"); err != nil || !ok {
		t.Fatalf("exists: %v %v", ok, err)
	}
	if ok, err := mc.BucketExists(ctx, "nope"); err != nil || ok {
		t.Fatalf("missing bucket exists: %v %v", ok, err)
	}
	buckets, err := mc.ListBuckets(ctx)
	if err != nil || len(buckets) != 1 || buckets[0].Name != "photos" {
		t.Fatalf("buckets %+v %v", buckets, err)
	}

	// A small object (streaming signature over plain HTTP), with
	// metadata, then ranged and conditional reads.
	small := []byte("hello, object store")
	info, err := mc.PutObject(ctx, "photos", "2024/a.txt", bytes.NewReader(small), int64(len(small)),
		minio.PutObjectOptions{ContentType: "text/plain", UserMetadata: map[string]string{"color": "blue"}})
	if err != nil {
		t.Fatal(err)
	}
	if info.ETag != hexMD5(small) {
		t.Fatalf("etag %q, want %q", info.ETag, hexMD5(small))
	}
	st, err := mc.StatObject(ctx, "photos", "2024/a.txt", minio.StatObjectOptions{})
	if err != nil || st.Size != int64(len(small)) || st.ContentType != "text/plain" || st.UserMetadata["Color"] != "blue" {
		t.Fatalf("stat %+v %v", st, err)
	}
	opts := minio.GetObjectOptions{}
	_ = opts.SetRange(7, 12)
	if got := readObject(t, mc, "photos", "2024/a.txt", opts); string(got) != "object" {
		t.Fatalf("range read %q", got)
	}
	if got := readObject(t, mc, "photos", "2024/a.txt", minio.GetObjectOptions{}); !bytes.Equal(got, small) {
		t.Fatalf("read %q", got)
	}
	if _, err := mc.StatObject(ctx, "photos", "missing", minio.StatObjectOptions{}); s3Code(err) != "NoSuchKey" {
		t.Fatalf("stat missing: %v", err)
	}

	// A multipart object: 5 MiB parts.
	big := make([]byte, 11<<20+123)
	for i := range big {
		big[i] = byte(i * 7 / 5)
	}
	info, err = mc.PutObject(ctx, "photos", "2024/big.bin", bytes.NewReader(big), int64(len(big)),
		minio.PutObjectOptions{PartSize: 5 << 20, ContentType: "application/octet-stream"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(info.ETag, "-3") {
		t.Fatalf("multipart etag %q", info.ETag)
	}
	if got := readObject(t, mc, "photos", "2024/big.bin", minio.GetObjectOptions{}); !bytes.Equal(got, big) {
		t.Fatalf("multipart object read back %d bytes, differs", len(got))
	}
	opts = minio.GetObjectOptions{}
	_ = opts.SetRange(5<<20-3, 5<<20+2)
	if got := readObject(t, mc, "photos", "2024/big.bin", opts); !bytes.Equal(got, big[5<<20-3:5<<20+3]) {
		t.Fatalf("range across parts %v", got)
	}

	// The multipart calls one by one: list parts, a too-small part,
	// abort.
	core := minio.Core{Client: mc}
	uploadID, err := core.NewMultipartUpload(ctx, "photos", "parts.bin", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var done []minio.CompletePart
	for i, p := range [][]byte{[]byte("small first part"), []byte("second")} {
		part, err := core.PutObjectPart(ctx, "photos", "parts.bin", uploadID, i+1, bytes.NewReader(p), int64(len(p)), minio.PutObjectPartOptions{})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, minio.CompletePart{PartNumber: i + 1, ETag: part.ETag})
	}
	lp, err := core.ListObjectParts(ctx, "photos", "parts.bin", uploadID, 0, 1)
	if err != nil || len(lp.ObjectParts) != 1 || !lp.IsTruncated || lp.ObjectParts[0].Size != 16 || lp.NextPartNumberMarker != 1 {
		t.Fatalf("list parts %+v %v", lp, err)
	}
	if _, err := core.CompleteMultipartUpload(ctx, "photos", "parts.bin", uploadID, done, minio.PutObjectOptions{}); s3Code(err) != "EntityTooSmall" {
		t.Fatalf("complete with a small first part: %v", err)
	}
	if err := core.AbortMultipartUpload(ctx, "photos", "parts.bin", uploadID); err != nil {
		t.Fatal(err)
	}
	if _, err := core.ListObjectParts(ctx, "photos", "parts.bin", uploadID, 0, 10); s3Code(err) != "NoSuchUpload" {
		t.Fatalf("parts of an aborted upload: %v", err)
	}

	// Listings: prefix, delimiter, pages of two.
	for _, k := range []string{"2024/b.txt", "2024/sub/c.txt", "2025/d.txt", "top.txt"} {
		if _, err := mc.PutObject(ctx, "photos", k, strings.NewReader(k), int64(len(k)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := listKeys(t, mc, minio.ListObjectsOptions{Recursive: true, MaxKeys: 2}); !slices.Equal(got,
		[]string{"2024/a.txt", "2024/b.txt", "2024/big.bin", "2024/sub/c.txt", "2025/d.txt", "top.txt"}) {
		t.Fatalf("recursive listing %v", got)
	}
	if got := listKeys(t, mc, minio.ListObjectsOptions{MaxKeys: 1}); !slices.Equal(got, []string{"2024/", "2025/", "top.txt"}) {
		t.Fatalf("delimited listing %v", got)
	}
	if got := listKeys(t, mc, minio.ListObjectsOptions{Prefix: "2024/", MaxKeys: 2}); !slices.Equal(got,
		[]string{"2024/a.txt", "2024/b.txt", "2024/big.bin", "2024/sub/"}) {
		t.Fatalf("prefix listing %v", got)
	}

	// A presigned GET needs no credentials of the fetcher.
	u, err := mc.PresignedGetObject(ctx, "photos", "2024/a.txt", time.Minute, url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	if got := httpGet(t, u.String(), http.StatusOK); !bytes.Equal(got, small) {
		t.Fatalf("presigned read %q", got)
	}
	tampered := strings.Replace(u.String(), "a.txt", "b.txt", 1)
	if got := httpGet(t, tampered, http.StatusForbidden); !bytes.Contains(got, []byte("<Code>SignatureDoesNotMatch</Code>")) {
		t.Fatalf("tampered presigned URL: %s", got)
	}
	if got := httpGet(t, "http://"+a.S3Addr()+"/photos/2024/a.txt", http.StatusForbidden); !bytes.Contains(got, []byte("<Code>AccessDenied</Code>")) {
		t.Fatalf("anonymous read: %s", got)
	}

	// The same API at /s3 of the HTTP listener.
	req, _ := http.NewRequest("GET", a.url("/s3/photos/2024/a.txt"), nil)
	req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	req = signer.SignV4(*req, cred.Access, cred.Secret, "", "us-east-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, small) {
		t.Fatalf("/s3 read: %d %s", resp.StatusCode, got)
	}

	// A wrong secret; another project's bucket.
	wrong := cred
	wrong.Secret = strings.Repeat("x", len(cred.Secret))
	if _, err := minioClient(t, a.S3Addr(), wrong).ListBuckets(ctx); s3Code(err) != "SignatureDoesNotMatch" {
		t.Fatalf("wrong secret: %v", err)
	}
	unknown := cred
	unknown.Access = "AKIAUNKNOWN"
	if _, err := minioClient(t, a.S3Addr(), unknown).ListBuckets(ctx); s3Code(err) != "InvalidAccessKeyId" {
		t.Fatalf("unknown key: %v", err)
	}
	other := minioClient(t, a.S3Addr(), otherProjectUser(t, a, admin))
	if _, err := other.StatObject(ctx, "photos", "2024/a.txt", minio.StatObjectOptions{}); s3Code(err) != "AccessDenied" {
		t.Fatalf("other project's read: %v", err)
	}
	if _, err := other.PutObject(ctx, "photos", "x", strings.NewReader("x"), 1, minio.PutObjectOptions{}); s3Code(err) != "AccessDenied" {
		t.Fatalf("other project's write: %v", err)
	}
	if err := other.RemoveBucket(ctx, "photos"); s3Code(err) != "AccessDenied" {
		t.Fatalf("other project's bucket delete: %v", err)
	}
	if err := other.MakeBucket(ctx, "photos", minio.MakeBucketOptions{}); s3Code(err) != "BucketAlreadyExists" {
		t.Fatalf("other project's create of a taken name: %v", err)
	}

	// An object becomes an image: same bytes, no copy.
	r := gl(t, a, "POST", "/v2/images", demo, map[string]any{"name": "from-s3", "disk_format": "raw", "container_format": "bare",
		"stratus_s3_source": "photos/2024/big.bin"}).want(t, http.StatusCreated)
	if r.body["status"] != "active" || r.body["checksum"] != hexMD5(big) || r.body["os_hash_value"] != hexSHA512(big) || r.body["size"] != float64(len(big)) {
		t.Fatalf("image from s3 %s", r.raw)
	}
	dl := gl(t, a, "GET", "/v2/images/"+r.body["id"].(string)+"/file", demo, nil).want(t, http.StatusOK)
	if sum := md5.Sum(dl.raw); dl.header.Get("Content-Md5") != hexMD5(big) || !bytes.Equal(sum[:], md5Of(big)) {
		t.Fatalf("image download: %d bytes, Content-MD5 %q", len(dl.raw), dl.header.Get("Content-Md5"))
	}
	gl(t, a, "POST", "/v2/images", demo, map[string]any{"name": "x", "stratus_s3_source": "photos/none"}).want(t, http.StatusBadRequest)

	// Deletes: a bucket with objects stays.
	if err := mc.RemoveBucket(ctx, "photos"); s3Code(err) != "BucketNotEmpty" {
		t.Fatalf("delete of a full bucket: %v", err)
	}
	for obj := range mc.ListObjects(ctx, "photos", minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		if err := mc.RemoveObject(ctx, "photos", obj.Key, minio.RemoveObjectOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := mc.RemoveBucket(ctx, "photos"); err != nil {
		t.Fatal(err)
	}
	// The image keeps its data after the object is gone.
	gl(t, a, "GET", "/v2/images/"+r.body["id"].(string)+"/file", demo, nil).want(t, http.StatusOK)
	keystone(t, a, "DELETE", "/users/"+userID+"/credentials/OS-EC2/"+cred.Access, demo, nil, http.StatusNoContent, nil)
	if _, err := mc.ListBuckets(ctx); s3Code(err) != "InvalidAccessKeyId" {
		t.Fatalf("deleted key: %v", err)
	}
}

func md5Of(b []byte) []byte {
	s := md5.Sum(b)
	return s[:]
}

func readObject(t *testing.T, mc *minio.Client, bucket, key string, opts minio.GetObjectOptions) []byte {
	t.Helper()
	obj, err := mc.GetObject(context.Background(), bucket, key, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer obj.Close()
	data, err := io.ReadAll(obj)
	if err != nil {
		t.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return data
}

func listKeys(t *testing.T, mc *minio.Client, opts minio.ListObjectsOptions) []string {
	t.Helper()
	var out []string
	for obj := range mc.ListObjects(context.Background(), "photos", opts) {
		if obj.Err != nil {
			t.Fatal(obj.Err)
		}
		out = append(out, obj.Key)
	}
	return out
}

func httpGet(t *testing.T, u string, want int) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %s", u, resp.StatusCode, want, body)
	}
	return body
}
