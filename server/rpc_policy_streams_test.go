package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// s3Sign signs a canonical request with an EC2 credential's secret, as
// an S3 client does, and asks the server to verify it.
func s3Sign(r *remote, cred *structs.EC2Credential, secret, canonical string, at time.Time) (*structs.S3VerifyResponse, error) {
	date := at.UTC().Format("20060102")
	amz := at.UTC().Format(s3DateFormat)
	key := s3SigningKey(secret, date, "us-east-1", "s3")
	sum := sha256.Sum256([]byte(canonical))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(s3Algorithm + "\n" + amz + "\n" + date + "/us-east-1/s3/aws4_request\n" + hex.EncodeToString(sum[:])))
	var out structs.S3VerifyResponse
	err := r.call("S3.Verify", &structs.S3VerifyRequest{Access: cred.Access, AmzDate: amz, ScopeDate: date, Region: "us-east-1",
		Service: "s3", CanonicalRequest: canonical, Signature: hex.EncodeToString(mac.Sum(nil))}, &out)
	return &out, err
}

// ec2Credential issues an EC2 credential to a token's user on its
// project, as that user.
func ec2Credential(t *testing.T, r *remote, tok *structs.TokenIssueResponse) *structs.EC2Credential {
	t.Helper()
	var out structs.EC2CredentialResponse
	if err := r.call("S3.CredentialCreate", &structs.EC2CredentialCreateRequest{UserID: tok.Claims.UserID,
		ProjectID: tok.Claims.ProjectID, WriteRequest: structs.WriteRequest{AuthToken: tok.Token}}, &out); err != nil {
		t.Fatal(err)
	}
	return out.Credential
}

const canonicalList = "GET\n/\n\nhost:127.0.0.1\nx-amz-date:X\n\nhost;x-amz-date\nUNSIGNED-PAYLOAD"

// TestS3RequestsActAsTheSigner checks S3.Verify and the S3 rules: a
// verified signature yields a token of the credential's user that
// reaches its project's buckets only, and nothing beyond the S3 store; a
// node secret reaches no bucket or object; a wrong signature or an old
// request is refused.
func TestS3RequestsActAsTheSigner(t *testing.T) {
	s := aclServer(t)
	r := newRemote(t, s)
	pool := testPool(t)
	admin, demo := r.token("admin", "admin"), r.token("demo", "demo")
	if err := registerWithSecret(s, testHost("h1", 8, 16384), secretA); err != nil {
		t.Fatal(err)
	}
	adminCred, demoCred := ec2Credential(t, r, admin), ec2Credential(t, r, demo)

	adminS3, err := s3Sign(r, adminCred, adminCred.Secret, canonicalList, time.Now())
	if err != nil || adminS3.Token == "" || adminS3.ProjectID != admin.Claims.ProjectID || adminS3.SigningKey != nil {
		t.Fatalf("verify admin's request: %+v %v", adminS3, err)
	}
	demoS3, err := s3Sign(r, demoCred, demoCred.Secret, canonicalList, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s3Sign(r, adminCred, demoCred.Secret, canonicalList, time.Now()); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("a wrong signature: %v", err)
	}
	if _, err := s3Sign(r, adminCred, adminCred.Secret, canonicalList, time.Now().Add(-time.Hour)); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("an hour-old request: %v", err)
	}
	chunked, err := s3Sign(r, adminCred, adminCred.Secret, "PUT\n/b/k\n\nhost:h\n\nhost\nSTREAMING-AWS4-HMAC-SHA256-PAYLOAD", time.Now())
	if err != nil || len(chunked.SigningKey) == 0 {
		t.Fatalf("a chunk-signed upload gets the scope's key: %+v %v", chunked, err)
	}

	adminCaller := structs.S3Caller{ProjectID: admin.Claims.ProjectID, UserID: admin.Claims.UserID, Admin: true}
	demoCaller := structs.S3Caller{ProjectID: demo.Claims.ProjectID, UserID: demo.Claims.UserID}
	if err := r.call("S3.BucketCreate", &structs.S3BucketRequest{Name: "admins", Caller: adminCaller,
		WriteRequest: structs.WriteRequest{AuthToken: adminS3.Token}}, &structs.S3BucketResponse{}); err != nil {
		t.Fatal(err)
	}
	data := randomData(70_000)
	put := func(token string, caller structs.S3Caller) (*structs.S3PutResult, error) {
		return s3Put(t, pool, s.RPCAddr(), &structs.S3PutRequest{Bucket: "admins", Key: "k", Size: int64(len(data)),
			Caller: caller, AuthToken: token}, data)
	}
	res, err := put(adminS3.Token, adminCaller)
	if err != nil {
		t.Fatal(err)
	}
	hash := res.Object.HashValue
	getObject := func(token string) error {
		return r.call("S3.ObjectGet", &structs.S3ObjectGetRequest{Bucket: "admins", Key: "k",
			QueryOptions: structs.QueryOptions{AuthToken: token}}, &structs.S3ObjectResponse{})
	}
	listObjects := func(token string, caller structs.S3Caller) error {
		return r.call("S3.ObjectList", &structs.S3ObjectListRequest{Bucket: "admins", Caller: caller,
			QueryOptions: structs.QueryOptions{AuthToken: token}}, &structs.S3ObjectListResponse{})
	}
	readBlob := func(token string) error {
		got, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: hash, Length: -1, AuthToken: token})
		if err == nil && !bytes.Equal(got, data) {
			return fmt.Errorf("read %d bytes, not the object's", len(got))
		}
		return err
	}
	if err := getObject(adminS3.Token); err != nil {
		t.Fatalf("the owner reads its object: %v", err)
	}
	if err := readBlob(adminS3.Token); err != nil {
		t.Fatalf("the owner reads its object's data: %v", err)
	}

	for name, call := range map[string]func() error{
		"node secret: list buckets": func() error {
			return r.call("S3.BucketList", &structs.S3BucketListRequest{ProjectID: admin.Claims.ProjectID,
				QueryOptions: structs.QueryOptions{AuthToken: secretA}}, &structs.S3BucketListResponse{})
		},
		"node secret: list objects":  func() error { return listObjects(secretA, adminCaller) },
		"node secret: get object":    func() error { return getObject(secretA) },
		"node secret: put object":    func() error { _, err := put(secretA, adminCaller); return err },
		"node secret: object data":   func() error { return readBlob(secretA) },
		"no credential: object data": func() error { return readBlob("") },
		"other project: get object":  func() error { return getObject(demoS3.Token) },
		"other project: list":        func() error { return listObjects(demoS3.Token, demoCaller) },
		"other project: list as owner": func() error {
			return listObjects(demoS3.Token, structs.S3Caller{ProjectID: admin.Claims.ProjectID, UserID: demo.Claims.UserID})
		},
		"other project: put":                      func() error { _, err := put(demoS3.Token, demoCaller); return err },
		"other project: object data":              func() error { return readBlob(demoS3.Token) },
		"other project's user token: object data": func() error { return readBlob(demo.Token) },
		"S3 token: outside the S3 store": func() error {
			return r.call("Instance.List", &structs.InstanceListRequest{QueryOptions: structs.QueryOptions{AuthToken: adminS3.Token}},
				&structs.InstanceListResponse{})
		},
		"S3 token: exchanged": func() error {
			return r.call("Identity.IssueToken", &structs.TokenIssueRequest{Method: "token", Token: adminS3.Token},
				&structs.TokenIssueResponse{})
		},
	} {
		if err := call(); err == nil {
			t.Errorf("%s: allowed", name)
		} else if k := structs.KindOf(err); k != structs.KindPermission && k != structs.KindUnauthenticated && k != structs.KindNotFound {
			t.Errorf("%s: refused with %v, want permission denied, unauthenticated or not found", name, err)
		}
	}
}

// TestStreamRulesGuardImageData checks the stream hook on image data: a
// private image's data is refused without a credential, to a node
// secret whose hosts do not use it and to another project's member,
// and read by its project; uploads are its project's only.
func TestStreamRulesGuardImageData(t *testing.T) {
	s := aclServer(t)
	r := newRemote(t, s)
	pool := testPool(t)
	admin, demo := r.token("admin", "admin"), r.token("demo", "demo")
	if err := registerWithSecret(s, testHost("h1", 8, 16384), secretA); err != nil {
		t.Fatal(err)
	}
	data := randomData(100_000)
	img, err := s.RegisterImage(&structs.Image{ID: "0b6c5a2e-1d3f-4e5a-8b7c-9d0e1f2a3b4c", Name: "private", DiskFormat: "raw",
		ContainerFormat: "bare", Visibility: structs.ImagePrivate, Owner: admin.Claims.ProjectID}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	read := func(token string) error {
		got, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: img.HashValue, Length: -1, AuthToken: token})
		if err == nil && !bytes.Equal(got, data) {
			return fmt.Errorf("read %d bytes, not the image's", len(got))
		}
		return err
	}
	for name, token := range map[string]string{"no credential": "", "node secret": secretA, "forged node secret": forged,
		"other project's member": demo.Token, "malformed token": "v2.nope"} {
		if err := read(token); err == nil {
			t.Errorf("%s: read a private image's data", name)
		}
	}
	if err := read(admin.Token); err != nil {
		t.Fatalf("its project reads it: %v", err)
	}

	queued := createImage(t, s, &structs.Image{Name: "empty", DiskFormat: "raw", ContainerFormat: "bare",
		Visibility: structs.ImagePrivate, Owner: admin.Claims.ProjectID})
	upload := func(token string) error {
		conn, err := pool.Stream(s.RPCAddr(), structs.BlobPutStream)
		if err != nil {
			return err
		}
		defer conn.Close()
		if err := rpc.WriteFrame(conn, &structs.BlobPutRequest{ImageID: queued.ID, Size: 10, AuthToken: token}); err != nil {
			return err
		}
		var ready structs.BlobPutReady
		if err := rpc.ReadFrame(conn, &ready); err != nil {
			return err
		}
		if ready.Error != "" {
			return fmt.Errorf("%s", ready.Error)
		}
		return nil
	}
	for name, token := range map[string]string{"no credential": "", "node secret": secretA, "other project's member": demo.Token} {
		if err := upload(token); err == nil {
			t.Errorf("%s: uploaded another project's image data", name)
		}
	}
}
