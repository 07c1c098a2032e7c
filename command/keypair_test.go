package command

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/stratus-cloud/stratus/api"
)

// devToken gets a project-scoped Keystone token for a dev user (whose
// password is its name) from a dev agent.
func devToken(t *testing.T, addr, user string) string {
	t.Helper()
	body := fmt.Sprintf(`{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":%q,"domain":{"id":"default"},"password":%q}}},
		"scope":{"project":{"name":%q,"domain":{"id":"default"}}}}}`, user, user, user)
	// Dev users are seeded with bcrypt hashes, slow under the race
	// detector: wait generously.
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Post(addr+"/identity/v3/auth/tokens", "application/json", strings.NewReader(body))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusCreated {
				return resp.Header.Get("X-Subject-Token")
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no token for %s: %v", user, err)
		}
	}
}

// TestKeyPairCommandsAgainstDevAgent generates, imports, lists, shows and
// deletes key pairs on a real agent, as a token's user and as an
// operator naming the user.
func TestKeyPairCommandsAgainstDevAgent(t *testing.T) {
	addr := devAgent(t)
	t.Setenv(api.EnvAddress, addr)
	t.Setenv(api.EnvToken, "")

	// Without a token a dev cloud's caller is its admin user, whose key
	// pairs these are (none yet).
	if _, stderr, code := run(t, "keypair", "list"); code != 0 {
		t.Fatalf("list without a token: code %d, %q", code, stderr)
	}

	t.Setenv(api.EnvToken, devToken(t, addr, "demo"))
	keyFile := filepath.Join(t.TempDir(), "ops.pem")
	out := runOK(t, "keypair", "create", "-private-key-file", keyFile, "ops")
	assertContains(t, "create", out, `Key pair "ops" created, fingerprint `, "Private key written to "+keyFile)
	pem, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatalf("generated private key: %v", err)
	}
	if st, _ := os.Stat(keyFile); st.Mode().Perm() != 0o600 {
		t.Fatalf("private key mode %v", st.Mode())
	}
	if _, stderr, code := run(t, "keypair", "create", "-private-key-file", keyFile, "again"); code != 1 || !strings.Contains(stderr, "could not be saved") {
		t.Fatalf("existing private key file: code %d, %q", code, stderr)
	}

	pubFile := filepath.Join(t.TempDir(), "id.pub")
	pub := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))) + " imported"
	if err := os.WriteFile(pubFile, []byte(pub+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runOK(t, "keypair", "create", "-public-key", pubFile, "imported")
	if _, stderr, code := run(t, "keypair", "create", "-public-key", pubFile, "imported"); code != 1 || !strings.Contains(stderr, "already exists") {
		t.Fatalf("duplicate: code %d, %q", code, stderr)
	}

	out = runOK(t, "keypair", "list", "-json")
	var kps []*api.KeyPair
	if err := json.Unmarshal([]byte(out), &kps); err != nil {
		t.Fatalf("-json: %v %q", err, out)
	}
	names := []string{}
	for _, kp := range kps {
		names = append(names, kp.Name)
	}
	if strings.Join(names, ",") != "again,imported,ops" || kps[1].Fingerprint != kps[2].Fingerprint {
		t.Fatalf("key pairs %+v", kps)
	}
	out = runOK(t, "keypair", "show", "imported")
	assertContains(t, "show", out, "Type        = ssh\n", pub+"\n")

	// An operator without a token names the user.
	t.Setenv(api.EnvToken, "")
	out = runOK(t, "keypair", "list", "-user", kps[0].UserID, "-t", "{{range .}}{{.Name}} {{end}}")
	if out != "again imported ops " {
		t.Fatalf("operator list %q", out)
	}
	runOK(t, "keypair", "delete", "-user", kps[0].UserID, "again")
	if _, stderr, code := run(t, "keypair", "show", "-user", kps[0].UserID, "again"); code != 1 || !strings.Contains(stderr, "not found") {
		t.Fatalf("show deleted: code %d, %q", code, stderr)
	}
}
