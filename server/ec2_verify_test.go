package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// ec2Sign signs a canonical request for service with a secret, as an
// EC2 client does, and asks the server to verify it.
func ec2Sign(r *remote, cred *structs.EC2Credential, secret, service string) (*structs.S3VerifyResponse, error) {
	at := time.Now().UTC()
	date, amz := at.Format("20060102"), at.Format(s3DateFormat)
	canonical := "POST\n/ec2/\n\nhost:127.0.0.1\nx-amz-date:" + amz + "\n\nhost;x-amz-date\n" + hex.EncodeToString(make([]byte, 32))
	key := s3SigningKey(secret, date, "global", service)
	sum := sha256.Sum256([]byte(canonical))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(s3Algorithm + "\n" + amz + "\n" + date + "/global/" + service + "/aws4_request\n" + hex.EncodeToString(sum[:])))
	var out structs.S3VerifyResponse
	err := r.call("S3.Verify", &structs.S3VerifyRequest{Access: cred.Access, AmzDate: amz, ScopeDate: date, Region: "global",
		Service: service, CanonicalRequest: canonical, Signature: hex.EncodeToString(mac.Sum(nil))}, &out)
	return &out, err
}

// TestEC2RequestsActAsTheSigner: a request signed for service ec2 gets a
// token of the credential's user on its project that reaches what the
// user's own tokens reach (the Compute API's methods, bound to the
// project), is never exchangeable, and carries no signing key; a wrong
// secret or another service is refused.
func TestEC2RequestsActAsTheSigner(t *testing.T) {
	s := aclServer(t)
	r := newRemote(t, s)
	admin, demo := r.token("admin", "admin"), r.token("demo", "demo")
	demoCred := ec2Credential(t, r, demo)

	got, err := ec2Sign(r, demoCred, demoCred.Secret, "ec2")
	if err != nil || got.Token == "" || got.ProjectID != demo.Claims.ProjectID || got.SigningKey != nil {
		t.Fatalf("verify: %+v %v", got, err)
	}
	if _, err := ec2Sign(r, demoCred, demoCred.Secret+"x", "ec2"); structs.ErrorType(err) != structs.S3ErrSignatureDoesNotMatch {
		t.Fatalf("a wrong secret: %v", err)
	}
	if _, err := ec2Sign(r, demoCred, demoCred.Secret, "iam"); structs.ErrorType(err) != structs.S3ErrSignatureDoesNotMatch {
		t.Fatalf("another service: %v", err)
	}
	list := func(project string) error {
		return r.call("Instance.List", &structs.InstanceListRequest{ProjectID: project, QueryOptions: structs.QueryOptions{AuthToken: got.Token}},
			&structs.InstanceListResponse{})
	}
	if err := list(demo.Claims.ProjectID); err != nil {
		t.Fatalf("the EC2 token lists its project's instances: %v", err)
	}
	if err := list(admin.Claims.ProjectID); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("the EC2 token lists another project's instances: %v", err)
	}
	err = r.call("Identity.IssueToken", &structs.TokenIssueRequest{Method: "token", Token: got.Token}, &structs.TokenIssueResponse{})
	if err == nil {
		t.Fatal("an EC2 request's token was exchanged for another")
	}
}
