package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"golang.org/x/crypto/ssh"
)

// requireTofu finds OpenTofu and the Terraform OpenStack provider that
// scripts/tofu-setup.sh builds (into $STRATUS_TOFU_DIR, else
// ~/.cache/stratus/tofu). Under CI=true missing ones fail the test
// instead of skipping it.
func requireTofu(t *testing.T) (tofu, providerDir string) {
	t.Helper()
	dir := os.Getenv("STRATUS_TOFU_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatalf("cache dir: %v", err)
		}
		dir = filepath.Join(cache, "stratus", "tofu")
	}
	tofu = filepath.Join(dir, "bin", "tofu")
	providerDir = filepath.Join(dir, "provider")
	for _, f := range []string{tofu, filepath.Join(providerDir, "terraform-provider-openstack")} {
		if _, err := os.Stat(f); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required in CI (scripts/ci-deps.sh runs scripts/tofu-setup.sh): %v", f, err)
			}
			t.Skipf("%s not built; run scripts/tofu-setup.sh", f)
		}
	}
	return tofu, providerDir
}

// tofuConfig is the smoke test's configuration: a key pair, a network,
// a subnet and a server on it, with the provider authenticating with an
// application credential, as automation should.
const tofuConfig = `
terraform {
  required_providers {
    openstack = {
      source = "terraform-provider-openstack/openstack"
    }
  }
}

variable "auth_url" {}
variable "app_cred_id" {}
variable "app_cred_secret" {
  sensitive = true
}
variable "public_key" {}

provider "openstack" {
  auth_url                      = var.auth_url
  application_credential_id     = var.app_cred_id
  application_credential_secret = var.app_cred_secret
  region                        = "RegionOne"
}

resource "openstack_compute_keypair_v2" "kp" {
  name       = "tofu-kp"
  public_key = var.public_key
}

resource "openstack_networking_network_v2" "net" {
  name           = "tofu-net"
  admin_state_up = true
}

resource "openstack_networking_subnet_v2" "sub" {
  name       = "tofu-sub"
  network_id = openstack_networking_network_v2.net.id
  cidr       = "192.168.77.0/24"
  ip_version = 4
}

resource "openstack_compute_instance_v2" "vm" {
  name        = "tofu-vm"
  image_name  = "cirros"
  flavor_name = "m1.tiny"
  key_pair    = openstack_compute_keypair_v2.kp.name
  network {
    uuid = openstack_networking_network_v2.net.id
  }
  depends_on = [openstack_networking_subnet_v2.sub]
}

output "network_id" {
  value = openstack_networking_network_v2.net.id
}
output "subnet_id" {
  value = openstack_networking_subnet_v2.sub.id
}
output "server_id" {
  value = openstack_compute_instance_v2.vm.id
}
output "server_ip" {
  value = openstack_compute_instance_v2.vm.access_ip_v4
}
`

// TestTofuSmoke applies a configuration with OpenTofu and the Terraform
// OpenStack provider against a dev cloud, checks what it created through
// the API, destroys it and checks it is gone.
func TestTofuSmoke(t *testing.T) {
	t.Parallel()
	tofu, providerDir := requireTofu(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dev := startAgent(t, "tofu", "--dev")
	compute, provider := computeClient(t, ctx, dev.http, "demo")
	identity, err := openstack.NewIdentityV3(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	network, err := openstack.NewNetworkV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := provider.GetAuthResult().(tokens.CreateResult).ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	ac, err := applicationcredentials.Create(ctx, identity, user.ID, applicationcredentials.CreateOpts{Name: "tofu"}).Extract()
	if err != nil {
		t.Fatalf("application credential: %v", err)
	}

	work := t.TempDir()
	cliConfig := filepath.Join(work, "tofurc")
	writeFile(t, cliConfig, fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n}\n",
		"terraform-provider-openstack/openstack", providerDir))
	writeFile(t, filepath.Join(work, "main.tf"), tofuConfig)
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	publicKey := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub)))
	env := append(os.Environ(), "TF_CLI_CONFIG_FILE="+cliConfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
		"TF_DATA_DIR="+filepath.Join(work, ".tofu"), "TF_VAR_auth_url="+dev.http+"/identity/v3",
		"TF_VAR_app_cred_id="+ac.ID, "TF_VAR_app_cred_secret="+ac.Secret, "TF_VAR_public_key="+publicKey)
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := runCmdIn(t, work, tofu, env, append(args, "-no-color")...)
		if code != 0 {
			t.Fatalf("tofu %s: exit %d\n%s\n%s", strings.Join(args, " "), code, out, errOut)
		}
		return out
	}
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			// Leave nothing behind on a failure half-way.
			_, _, _ = runCmdIn(t, work, tofu, env, "destroy", "-auto-approve", "-input=false", "-no-color")
		}
	})

	start := time.Now()
	run("apply", "-auto-approve", "-input=false")
	t.Logf("tofu apply took %s", time.Since(start).Round(time.Millisecond))
	var outputs map[string]struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal([]byte(run("output", "-json")), &outputs); err != nil {
		t.Fatalf("tofu output: %v", err)
	}
	netID, subID, serverID := outputs["network_id"].Value, outputs["subnet_id"].Value, outputs["server_id"].Value

	// What OpenTofu created, seen through the API as the user.
	kp, err := keypairs.Get(ctx, compute, "tofu-kp", nil).Extract()
	if err != nil || kp.PublicKey != publicKey {
		t.Fatalf("key pair: %+v %v", kp, err)
	}
	n, err := networks.Get(ctx, network, netID).Extract()
	if err != nil || n.Name != "tofu-net" || len(n.Subnets) != 1 || n.Subnets[0] != subID || n.ProjectID != ac.ProjectID {
		t.Fatalf("network: %+v %v", n, err)
	}
	sub, err := subnets.Get(ctx, network, subID).Extract()
	if err != nil || sub.CIDR != "192.168.77.0/24" || sub.NetworkID != netID {
		t.Fatalf("subnet: %+v %v", sub, err)
	}
	srv, err := servers.Get(ctx, compute, serverID).Extract()
	if err != nil || srv.Status != "ACTIVE" || srv.KeyName != "tofu-kp" || len(serverAddrs(srv, "tofu-net")) != 1 ||
		!strings.HasPrefix(outputs["server_ip"].Value, "192.168.77.") {
		t.Fatalf("server: %+v %v (ip %q)", srv, err, outputs["server_ip"].Value)
	}
	// A second apply finds nothing to change: every read agrees with
	// what was written.
	if out := run("plan", "-detailed-exitcode", "-input=false"); !strings.Contains(out, "No changes") {
		t.Fatalf("plan after apply:\n%s", out)
	}

	start = time.Now()
	run("destroy", "-auto-approve", "-input=false")
	destroyed = true
	t.Logf("tofu destroy took %s", time.Since(start).Round(time.Millisecond))
	gone := func(what string, err error) {
		t.Helper()
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			t.Errorf("%s after destroy: %v", what, err)
		}
	}
	_, err = keypairs.Get(ctx, compute, "tofu-kp", nil).Extract()
	gone("key pair", err)
	_, err = networks.Get(ctx, network, netID).Extract()
	gone("network", err)
	_, err = subnets.Get(ctx, network, subID).Extract()
	gone("subnet", err)
	_, err = servers.Get(ctx, compute, serverID).Extract()
	gone("server", err)
}

// runCmdIn is runCmd in a working directory.
func runCmdIn(t testing.TB, dir, bin string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("run %s: %v", bin, err)
	}
	return out.String(), errb.String(), 0
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}
