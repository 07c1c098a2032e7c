package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// ec2Raw sends a form to /ec2/ signed with the SDK's own signer as of
// at for service, and answers the status and EC2's error code (""
// without one).
func ec2Raw(t *testing.T, a *Agent, c s3Cred, form url.Values, service string, at time.Time) (int, string) {
	t.Helper()
	body := form.Encode()
	req, err := http.NewRequest(http.MethodPost, a.url("/ec2/"), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	sum := sha256.Sum256([]byte(body))
	creds := aws.Credentials{AccessKeyID: c.Access, SecretAccessKey: c.Secret}
	if c.Access != "" {
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, a.config.Region, at); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, ""
	}
	var doc struct {
		XMLName   xml.Name                         `xml:"Response"`
		Errors    []struct{ Code, Message string } `xml:"Errors>Error"`
		RequestID string                           `xml:"RequestID"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil || len(doc.Errors) != 1 || doc.RequestID == "" {
		t.Fatalf("error document %s: %v", raw, err)
	}
	return resp.StatusCode, doc.Errors[0].Code
}

// TestEC2AuthErrors: a wrong signature, a stale request time, an unknown
// access key, a signature for another service, an unsigned request, an
// unknown action and a reader's change each get EC2's code.
func TestEC2AuthErrors(t *testing.T) {
	t.Parallel()
	on := true
	a := testAgent(t, func(c *Config) { c.ACL = &ACLConfig{Enabled: &on} })
	admin, demo := keystoneToken(t, a, "admin"), keystoneToken(t, a, "demo")
	userID, projectID := whoami(t, a, demo)
	cred := ec2Credential(t, a, demo, userID, projectID)
	describe := url.Values{"Action": {"DescribeInstances"}, "Version": {"2016-11-15"}}
	now := time.Now()

	if st, code := ec2Raw(t, a, cred, describe, "ec2", now); st != http.StatusOK || code != "" {
		t.Fatalf("a good request: %d %s", st, code)
	}
	wrong := cred
	wrong.Secret += "x"
	for _, c := range []struct {
		name    string
		cred    s3Cred
		form    url.Values
		service string
		at      time.Time
		status  int
		code    string
	}{
		{"wrong secret", wrong, describe, "ec2", now, http.StatusForbidden, "SignatureDoesNotMatch"},
		{"16 minutes old", cred, describe, "ec2", now.Add(-16 * time.Minute), http.StatusBadRequest, "RequestExpired"},
		{"16 minutes ahead", cred, describe, "ec2", now.Add(16 * time.Minute), http.StatusBadRequest, "RequestExpired"},
		{"unknown key", s3Cred{Access: "AKIDUNKNOWN0000000000", Secret: "x"}, describe, "ec2", now, http.StatusUnauthorized, "AuthFailure"},
		{"signed for s3", cred, describe, "s3", now, http.StatusBadRequest, "IncompleteSignature"},
		{"unsigned", s3Cred{}, describe, "ec2", now, http.StatusUnauthorized, "AuthFailure"},
		{"unknown action", cred, url.Values{"Action": {"LaunchRockets"}, "Version": {"2016-11-15"}}, "ec2", now, http.StatusBadRequest, "InvalidAction"},
		{"no action", cred, url.Values{"Version": {"2016-11-15"}}, "ec2", now, http.StatusBadRequest, "MissingAction"},
		{"malformed id", cred, url.Values{"Action": {"StopInstances"}, "Version": {"2016-11-15"}, "InstanceId.1": {"vm-1"}}, "ec2", now,
			http.StatusBadRequest, "InvalidInstanceID.Malformed"},
		{"missing id", cred, url.Values{"Action": {"StopInstances"}, "Version": {"2016-11-15"}, "InstanceId.1": {"i-0123456789abcdef0"}}, "ec2", now,
			http.StatusBadRequest, "InvalidInstanceID.NotFound"},
		{"no ids", cred, url.Values{"Action": {"StopInstances"}, "Version": {"2016-11-15"}}, "ec2", now, http.StatusBadRequest, "MissingParameter"},
	} {
		if st, code := ec2Raw(t, a, c.cred, c.form, c.service, c.at); st != c.status || code != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, st, code, c.status, c.code)
		}
	}

	// A reader may describe, not change.
	reader := readerUser(t, a, admin, projectID)
	if st, code := ec2Raw(t, a, reader, describe, "ec2", now); st != http.StatusOK {
		t.Fatalf("a reader's describe: %d %s", st, code)
	}
	run := url.Values{"Action": {"RunInstances"}, "Version": {"2016-11-15"}, "ImageId": {"ami-6a9b7e2c5d1f4c3b9"}}
	if st, code := ec2Raw(t, a, reader, run, "ec2", now); st != http.StatusForbidden || code != "UnauthorizedOperation" {
		t.Fatalf("a reader's run: %d %s", st, code)
	}
}

// readerUser has an admin create a user with the reader role on
// project, and answers its EC2 credential.
func readerUser(t *testing.T, a *Agent, admin, projectID string) s3Cred {
	t.Helper()
	var u struct{ User struct{ ID string } }
	keystone(t, a, "POST", "/users", admin, map[string]any{"user": map[string]any{"name": "ec2reader", "password": "ec2reader"}}, http.StatusCreated, &u)
	var roles struct{ Roles []struct{ ID string } }
	keystone(t, a, "GET", "/roles?name=reader", admin, nil, http.StatusOK, &roles)
	if len(roles.Roles) != 1 {
		t.Fatalf("roles %+v", roles)
	}
	keystone(t, a, "PUT", "/projects/"+projectID+"/users/"+u.User.ID+"/roles/"+roles.Roles[0].ID, admin, nil, http.StatusNoContent, nil)
	return ec2Credential(t, a, admin, u.User.ID, projectID)
}
