package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHTTPSEndToEnd: an agent with tls { http = true } and a CA and
// certificates made with `cloudctl tls`: cloudctl reaches it with
// -ca-cert (and refuses it without), `cloudctl openrc` hands the CA to
// OpenStack clients as OS_CACERT, and the unmodified openstack CLI works
// over HTTPS, its catalog's links https too.
func TestHTTPSEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tlsCmd := func(args ...string) {
		t.Helper()
		cmd := exec.Command(cloudctlBin, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("cloudctl %v: %v: %s", args, err, out)
		}
	}
	tlsCmd("tls", "ca", "create")
	tlsCmd("tls", "cert", "create", "-server")
	ca := filepath.Join(dir, "stratus-agent-ca.pem")
	cert, key := filepath.Join(dir, "global-server-stratus-0.pem"), filepath.Join(dir, "global-server-stratus-0-key.pem")
	for _, f := range []string{ca, cert, key} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("cloudctl tls wrote no %s: %v", filepath.Base(f), err)
		}
	}
	config := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`
tls {
  http      = true
  ca_file   = %q
  cert_file = %q
  key_file  = %q
}
`, ca, cert, key)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startAgent(t, "https", "--dev", "-acl=false", "--config", config)
	if !strings.HasPrefix(p.http, "https://") {
		t.Fatalf("the banner's HTTP address is %s, want https://", p.http)
	}
	env := append(os.Environ(), "CLOUDCTL_ADDR="+p.http)
	eventually(t, "flavors over HTTPS", 60*time.Second, func() error {
		out, errOut, code := runCmd(t, cloudctlBin, env, "flavor", "list", "-ca-cert", ca)
		if code != 0 || !strings.Contains(out, "m1.tiny") {
			return fmt.Errorf("flavor list: %s %s", out, errOut)
		}
		return nil
	})
	if _, errOut, code := runCmd(t, cloudctlBin, env, "flavor", "list"); code == 0 || !strings.Contains(errOut, "certificate") {
		t.Errorf("without the CA cloudctl answered %d: %s", code, errOut)
	}
	rc, errOut, code := runCmd(t, cloudctlBin, append(env, "CLOUDCTL_CACERT="+ca), "openrc", "-user", "admin")
	if code != 0 || !strings.Contains(rc, "export OS_CACERT='"+ca+"'") || !strings.Contains(rc, "OS_AUTH_URL='https://") {
		t.Fatalf("openrc: %d %s %s", code, rc, errOut)
	}

	bin := requireCLI(t, "openstack")
	osenv := append(osEnv(t, p.http, "admin"), "OS_CACERT="+ca)
	out := mustOS(t, bin, osenv, "flavor", "list", "-f", "value", "-c", "Name")
	if !strings.Contains(out, "m1.tiny") {
		t.Fatalf("openstack flavor list over HTTPS: %s", out)
	}
	out = mustOS(t, bin, osenv, "catalog", "list", "-f", "json")
	if strings.Contains(out, "http://") || !strings.Contains(out, "https://") {
		t.Errorf("the catalog over HTTPS has plain links: %s", out)
	}
}
