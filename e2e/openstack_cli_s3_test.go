package e2e

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7/pkg/signer"
)

// s3Request sends a request to the agent's S3 API at /s3, signed with
// minio's SigV4 signer, and answers the status and body.
func s3Request(t *testing.T, access, secret, method, url string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	req = signer.SignV4(*req, access, secret, "", "us-east-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// TestOpenStackCLIEC2CredentialsAndS3 issues EC2 credentials with the
// real `openstack ec2 credentials` commands, stores an object with them,
// registers it as an image and downloads that with `openstack image
// save`.
func TestOpenStackCLIEC2CredentialsAndS3(t *testing.T) {
	bin, env, dev := devCLI(t, "s3cli")
	demo := osEnv(t, dev.http, "demo")
	var cred map[string]any
	osJSON(t, bin, demo, &cred, "ec2", "credentials", "create")
	access, _ := cred["access"].(string)
	secret, _ := cred["secret"].(string)
	if access == "" || secret == "" {
		t.Fatalf("ec2 credentials create: %v", cred)
	}
	if out := mustOS(t, bin, demo, "ec2", "credentials", "list", "-f", "value"); !strings.Contains(out, access) {
		t.Fatalf("ec2 credentials list: %s", out)
	}

	if code, body := s3Request(t, access, secret, "PUT", dev.http+"/s3/cli-bucket", nil); code != http.StatusOK {
		t.Fatalf("create bucket: %d %s", code, body)
	}
	data := bytes.Repeat([]byte("stratus s3 "), 50_000)
	if code, body := s3Request(t, access, secret, "PUT", dev.http+"/s3/cli-bucket/disk.raw", data); code != http.StatusOK {
		t.Fatalf("put object: %d %s", code, body)
	}
	if out, errOut, code := cli(t, dev.http, "image", "create", "-from-s3", "cli-bucket/disk.raw", "-disk-format", "raw", "from-s3"); code != 0 {
		t.Fatalf("cloudctl image create -from-s3: %s %s", out, errOut)
	}
	saved := filepath.Join(t.TempDir(), "saved.raw")
	mustOS(t, bin, env, "image", "save", "--file", saved, "from-s3")
	got, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	if md5.Sum(got) != md5.Sum(data) {
		t.Fatalf("saved image differs from the object (%d bytes, want %d)", len(got), len(data))
	}

	mustOS(t, bin, demo, "ec2", "credentials", "delete", access)
	if code, body := s3Request(t, access, secret, "GET", dev.http+"/s3/", nil); code != http.StatusForbidden || !bytes.Contains(body, []byte("InvalidAccessKeyId")) {
		t.Fatalf("deleted key: %d %s", code, body)
	}
}
