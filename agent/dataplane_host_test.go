package agent

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/client/dataplane"
	"github.com/stratus-cloud/stratus/structs"
)

// TestDataplaneConfigBlock parses client.dataplane.
func TestDataplaneConfigBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/agent.hcl"
	writeFile(t, path, `
data_dir = "`+dir+`"
client {
  enabled = true
  dataplane {
    enabled       = true
    metadata_ip   = "10.0.0.1"
    metadata_port = 9775
    table_prefix  = "cloud"
    netns         = "ns1"
  }
}
`)
	c, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dp := c.Client.Dataplane
	if dp == nil || !dp.Enabled || dp.MetadataIP != "10.0.0.1" || dp.MetadataPort != 9775 || dp.TablePrefix != "cloud" || dp.Netns != "ns1" {
		t.Fatalf("dataplane block %+v", dp)
	}
	// The tunnel endpoint defaults to the advertise address.
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if dp.TunnelIP != c.Advertise || dp.TunnelIP == "" {
		t.Fatalf("tunnel_ip %q, advertise %q", dp.TunnelIP, c.Advertise)
	}
}

// TestDataplaneOverlayConfig parses and checks the tunnel endpoint and
// the physical interfaces.
func TestDataplaneOverlayConfig(t *testing.T) {
	t.Parallel()
	load := func(body string) (*Config, error) {
		dir := t.TempDir()
		path := dir + "/agent.hcl"
		writeFile(t, path, `
data_dir = "`+dir+`"
advertise_addr = "192.0.2.7"
client {
  enabled = true
  dataplane {
    enabled = true
    `+body+`
  }
}
`)
		c, err := LoadConfigFile(path)
		if err != nil {
			return nil, err
		}
		return c, c.Finalize()
	}
	c, err := load(`tunnel_ip = "198.51.100.4"
    physical_interfaces = { physnet1 = "eth1", ext = "bond0" }`)
	if err != nil {
		t.Fatal(err)
	}
	dp := c.Client.Dataplane
	if dp.TunnelIP != "198.51.100.4" || dp.PhysicalInterfaces["physnet1"] != "eth1" || dp.PhysicalInterfaces["ext"] != "bond0" {
		t.Fatalf("dataplane block %+v", dp)
	}
	a := &Agent{config: c}
	if a.tunnelIP(0) != "198.51.100.4" || a.tunnelIP(1) != "" {
		t.Fatalf("hosts' tunnel endpoints %q %q", a.tunnelIP(0), a.tunnelIP(1))
	}
	if c, err = load(``); err != nil || c.Client.Dataplane.TunnelIP != "192.0.2.7" {
		t.Fatalf("default tunnel endpoint: %v %+v", err, c)
	}
	for _, bad := range []string{`tunnel_ip = "0.0.0.0"`, `tunnel_ip = "eth0"`, `tunnel_ip = "239.0.0.1"`,
		`physical_interfaces = { p = "a/b" }`, `physical_interfaces = { p = "averylongname1" }`} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "dataplane") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// TestDevAgentWiresItsNetworks runs a dev agent with the dataplane on,
// inside a network namespace of the test's: booting an instance on the
// dev network `private` brings up its bridge with the gateway address
// and a dnsmasq serving it.
func TestDevAgentWiresItsNetworks(t *testing.T) {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root")
	}
	missing = append(missing, dataplane.Missing()...)
	if len(missing) > 0 {
		msg := "the dataplane needs " + strings.Join(missing, ", ") + " (scripts/netplane-setup.sh)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Parallel()
	ns := fmt.Sprintf("stpagent%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
			for _, pid := range strings.Fields(string(out)) {
				_ = exec.Command("kill", "-9", pid).Run()
			}
		}
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			t.Errorf("ip netns del: %v: %s", err, out)
		}
	})
	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{Dataplane: &DataplaneConfig{Enabled: true, Netns: ns}}
	})
	var private *structs.Network
	waitFor(t, "the dev networks", func() error {
		var out structs.NetListResponse
		if err := a.rpc.RPC("Net.List", &structs.NetListRequest{Kind: structs.NetKindNetwork,
			Caller: structs.NetCaller{Admin: true}}, &out); err != nil {
			return err
		}
		for _, n := range out.Networks {
			if n.Name == "private" {
				private = n
				return nil
			}
		}
		return fmt.Errorf("no private network yet")
	})
	var created structs.InstanceCreateResponse
	if err := a.rpc.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "vm", FlavorID: "m1.tiny", ImageID: "cirros",
		ProjectID: private.ProjectID, NetworksMode: structs.NetworksList,
		Networks: []*structs.InstanceNetworkRequest{{NetworkID: private.ID}}}, &created); err != nil {
		t.Fatal(err)
	}
	br := dataplane.BridgeName(private.ID)
	waitFor(t, "the private network's bridge and dnsmasq", func() error {
		out, err := exec.Command("ip", "netns", "exec", ns, "ip", "-br", "addr", "show", "dev", br).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "10.0.0.1/24") {
			return fmt.Errorf("bridge: %v: %s", err, out)
		}
		pids, _ := exec.Command("ip", "netns", "pids", ns).Output()
		if len(strings.Fields(string(pids))) == 0 {
			return fmt.Errorf("no dnsmasq in the namespace")
		}
		return nil
	})
}
