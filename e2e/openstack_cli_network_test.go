package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// testOpenStackCLINetworking drives the Networking API with the Debian
// python-openstackclient as the docs show: networks, subnets, ports,
// floating IPs, security group rules, and a server on a network when
// the region has an image service to boot from.
func testOpenStackCLINetworking(t *testing.T, bin string, env []string) {
	t.Helper()
	eventually(t, "networks seeded", 30*time.Second, func() error {
		out, errOut, code := runOS(t, bin, env, "network", "list", "-f", "value", "-c", "Name")
		if code != 0 || !strings.Contains(out, "private") || !strings.Contains(out, "public") {
			return fmt.Errorf("network list: %s %s", out, errOut)
		}
		return nil
	})
	var net struct {
		ID  string `json:"id"`
		MTU int    `json:"mtu"`
	}
	if err := json.Unmarshal([]byte(mustOS(t, bin, env, "network", "create", "cli-net", "-f", "json")), &net); err != nil || net.ID == "" || net.MTU != 1450 {
		t.Fatalf("network create: %+v %v", net, err)
	}
	testOpenStackCLIProviderNetworks(t, bin, env)
	if out := mustOS(t, bin, env, "subnet", "create", "--network", "cli-net", "--subnet-range", "192.168.77.0/24", "cli-sub", "-f", "value", "-c", "gateway_ip"); strings.TrimSpace(out) != "192.168.77.1" {
		t.Fatalf("subnet create: %s", out)
	}
	var port struct {
		FixedIPs []struct {
			IPAddress string `json:"ip_address"`
		} `json:"fixed_ips"`
		MAC string `json:"mac_address"`
	}
	if err := json.Unmarshal([]byte(mustOS(t, bin, env, "port", "create", "--network", "cli-net", "cli-port", "-f", "json")), &port); err != nil ||
		len(port.FixedIPs) != 1 || port.FixedIPs[0].IPAddress != "192.168.77.2" || !strings.HasPrefix(port.MAC, "fa:16:3e:") {
		t.Fatalf("port create: %+v %v", port, err)
	}
	if out := mustOS(t, bin, env, "network", "list", "-f", "value", "-c", "Name"); !strings.Contains(out, "cli-net") {
		t.Fatalf("network list: %s", out)
	}
	if out := mustOS(t, bin, env, "port", "list", "--network", "cli-net", "-f", "value", "-c", "Name"); strings.TrimSpace(out) != "cli-port" {
		t.Fatalf("port list: %s", out)
	}
	fip := strings.TrimSpace(mustOS(t, bin, env, "floating", "ip", "create", "public", "-f", "value", "-c", "floating_ip_address"))
	if !strings.HasPrefix(fip, "172.24.4.") {
		t.Fatalf("floating ip create: %q", fip)
	}
	mustOS(t, bin, env, "security", "group", "rule", "create", "--protocol", "tcp", "--dst-port", "22", "default")
	if out := mustOS(t, bin, env, "router", "list", "-f", "value", "-c", "Name"); !strings.Contains(out, "router1") {
		t.Fatalf("router list: %s", out)
	}
	// Booting needs an image service to resolve --image.
	if _, _, code := runOS(t, bin, env, "image", "show", "cirros"); code == 0 {
		out := mustOS(t, bin, env, "server", "create", "--image", "cirros", "--flavor", "m1.tiny", "--network", "private", "--wait",
			"cli-net-vm", "-f", "json")
		if !strings.Contains(out, "10.0.0.") {
			t.Fatalf("server create --network private: %s", out)
		}
		mustOS(t, bin, env, "server", "add", "floating", "ip", "cli-net-vm", fip)
		if out := mustOS(t, bin, env, "server", "show", "cli-net-vm", "-f", "value", "-c", "addresses"); !strings.Contains(out, fip) {
			t.Fatalf("server show after floating ip: %s", out)
		}
		mustOS(t, bin, env, "server", "delete", "--wait", "cli-net-vm")
	} else {
		t.Log("no image service: skipping openstack server create --network")
	}
	mustOS(t, bin, env, "floating", "ip", "delete", fip)
	mustOS(t, bin, env, "port", "delete", "cli-port")
	mustOS(t, bin, env, "subnet", "delete", "cli-sub")
	mustOS(t, bin, env, "network", "delete", "cli-net")
}

// testOpenStackCLIProviderNetworks creates provider networks as an
// administrator does (env is the admin's): a VXLAN network with its own
// VNI and a VLAN on a physical network, whose segments are unique.
func testOpenStackCLIProviderNetworks(t *testing.T, bin string, env []string) {
	t.Helper()
	var seg struct {
		Type    string `json:"provider:network_type"`
		Physnet string `json:"provider:physical_network"`
		ID      int    `json:"provider:segmentation_id"`
		MTU     int    `json:"mtu"`
	}
	out := mustOS(t, bin, env, "network", "create", "--provider-network-type", "vxlan", "--provider-segment", "4242", "cli-vx", "-f", "json")
	if err := json.Unmarshal([]byte(out), &seg); err != nil || seg.Type != "vxlan" || seg.ID != 4242 || seg.MTU != 1450 {
		t.Fatalf("network create --provider-network-type vxlan: %+v %v %s", seg, err, out)
	}
	out = mustOS(t, bin, env, "network", "create", "--provider-network-type", "vlan", "--provider-physical-network", "physnet1",
		"--provider-segment", "42", "cli-vlan", "-f", "json")
	if err := json.Unmarshal([]byte(out), &seg); err != nil || seg.Type != "vlan" || seg.Physnet != "physnet1" || seg.ID != 42 || seg.MTU != 1500 {
		t.Fatalf("network create --provider-network-type vlan: %+v %v %s", seg, err, out)
	}
	if out, errOut, code := runOS(t, bin, env, "network", "create", "--provider-network-type", "vxlan", "--provider-segment", "4242", "cli-vx2"); code == 0 ||
		!strings.Contains(out+errOut, "The tunnel ID 4242 is in use") {
		t.Fatalf("a second VNI 4242: exit %d %s %s", code, out, errOut)
	}
	mustOS(t, bin, env, "network", "delete", "cli-vx", "cli-vlan")
}
