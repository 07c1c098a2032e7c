package command

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/signer"

	"github.com/stratus-cloud/stratus/api"
)

// s3Do sends a request to the agent's S3 API at /s3, signed by minio's
// SigV4 signer with the credential.
func s3Do(t *testing.T, c *api.EC2Credential, method, url string, body []byte) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	req = signer.SignV4(*req, c.Access, c.Secret, "", "us-east-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestS3CommandsAgainstDevAgent issues a credential from the CLI, stores
// an object with it, makes an image of the object and deletes the
// credential.
func TestS3CommandsAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	addr := devAgent(t)
	t.Setenv(api.EnvAddress, addr)
	t.Setenv(api.EnvToken, "")
	var cred api.EC2Credential
	// Dev mode seeds its users in the background.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, errOut, code := run(t, "s3", "credentials", "create", "-json", "-user", "demo", "-project", "demo")
		if code == 0 {
			if err := json.Unmarshal([]byte(out), &cred); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("credentials create: %d %s %s", code, out, errOut)
		}
	}
	assertContains(t, "list", runOK(t, "s3", "credentials", "list", "-user", "demo"), cred.Access, cred.Secret)

	if resp := s3Do(t, &cred, "PUT", addr+"/s3/cmdbucket", nil); resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("create bucket: %d %s", resp.StatusCode, body)
	}
	data := bytes.Repeat([]byte("disk "), 100_000)
	resp := s3Do(t, &cred, "PUT", addr+"/s3/cmdbucket/disks/one.raw", data)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("put object: %d", resp.StatusCode)
	}
	sum := md5.Sum(data)
	out := runOK(t, "image", "create", "-from-s3", "cmdbucket/disks/one.raw", "-disk-format", "raw", "from-object")
	assertContains(t, "image create -from-s3", out, `Image "from-object" created with ID`, "MD5 "+hex.EncodeToString(sum[:]))
	var img api.Image
	if err := json.Unmarshal([]byte(runOK(t, "image", "show", "-json", "from-object")), &img); err != nil {
		t.Fatal(err)
	}
	if img.Status != "active" || img.Size != int64(len(data)) {
		t.Fatalf("image %+v", img)
	}
	if _, errOut, code := run(t, "image", "create", "-from-s3", "cmdbucket/none", "x"); code == 0 || !strings.Contains(errOut, "NoSuchKey") && !strings.Contains(errOut, "does not exist") {
		t.Fatalf("missing object: %d %s", code, errOut)
	}

	runOK(t, "s3", "credentials", "delete", cred.Access)
	assertContains(t, "list after delete", runOK(t, "s3", "credentials", "list", "-user", "demo"), "No credentials found")
	resp = s3Do(t, &cred, "GET", addr+"/s3/", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !bytes.Contains(body, []byte("InvalidAccessKeyId")) {
		t.Fatalf("deleted key: %d %s", resp.StatusCode, body)
	}
}
