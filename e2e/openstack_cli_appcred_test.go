package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// appCredEnv is an environment authenticating with an application
// credential (keystoneauth's v3applicationcredential), without the
// user's password.
func appCredEnv(userEnv []string, id, secret string) []string {
	var env []string
	for _, kv := range userEnv {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "OS_USERNAME", "OS_PASSWORD", "OS_PROJECT_NAME", "OS_USER_DOMAIN_NAME", "OS_PROJECT_DOMAIN_NAME", "OS_AUTH_TYPE":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "OS_AUTH_TYPE=v3applicationcredential",
		"OS_APPLICATION_CREDENTIAL_ID="+id, "OS_APPLICATION_CREDENTIAL_SECRET="+secret)
}

// TestOpenStackCLIApplicationCredentials: `openstack application
// credential create/list/show/delete` as a user, and the client
// authenticating with the credential (OS_AUTH_TYPE=v3applicationcredential)
// until it is deleted.
func TestOpenStackCLIApplicationCredentials(t *testing.T) {
	bin, _, dev := devCLI(t, "appcredcli")
	demo := osEnv(t, dev.http, "demo")
	var ac map[string]any
	expires := time.Now().Add(24 * time.Hour).UTC().Format("2006-01-02T15:04:05")
	osJSON(t, bin, demo, &ac, "application", "credential", "create", "--description", "automation",
		"--role", "member", "--expiration", expires, "cli-automation")
	id, _ := ac["id"].(string)
	secret, _ := ac["secret"].(string)
	if id == "" || secret == "" || ac["name"] != "cli-automation" {
		t.Fatalf("application credential create: %v", ac)
	}
	if _, errOut, code := runOS(t, bin, demo, "application", "credential", "create", "cli-automation"); code == 0 {
		t.Fatal("a second credential of the same name was created")
	} else if !strings.Contains(errOut, "409") && !strings.Contains(strings.ToLower(errOut), "conflict") && !strings.Contains(errOut, "Duplicate") {
		t.Fatalf("duplicate name: %s", errOut)
	}
	if out := mustOS(t, bin, demo, "application", "credential", "list", "-f", "value", "-c", "ID"); !strings.Contains(out, id) {
		t.Fatalf("application credential list: %s", out)
	}
	var shown map[string]any
	osJSON(t, bin, demo, &shown, "application", "credential", "show", "cli-automation")
	if shown["id"] != id || shown["description"] != "automation" || !strings.Contains(fmt.Sprint(shown["roles"]), "member") ||
		!strings.HasPrefix(fmt.Sprint(shown["expires_at"]), expires) {
		t.Fatalf("application credential show: %v", shown)
	}

	// The client authenticates with it: the credential's project and
	// roles, without a password.
	acEnv := appCredEnv(demo, id, secret)
	var tok map[string]any
	osJSON(t, bin, acEnv, &tok, "token", "issue")
	if tok["user_id"] == nil || tok["project_id"] != shown["project_id"] {
		t.Fatalf("token issue with the credential: %v (project %v)", tok, shown["project_id"])
	}
	mustOS(t, bin, acEnv, "server", "list")
	mustOS(t, bin, acEnv, "keypair", "list")

	mustOS(t, bin, demo, "application", "credential", "delete", "cli-automation")
	if _, _, code := runOS(t, bin, acEnv, "server", "list"); code == 0 {
		t.Fatal("server list with a deleted application credential succeeded")
	}
	if out := mustOS(t, bin, demo, "application", "credential", "list", "-f", "value", "-c", "ID"); strings.Contains(out, id) {
		t.Fatalf("deleted credential listed: %s", out)
	}
}
