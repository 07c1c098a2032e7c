package metadata_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

const (
	testSecret  = "metadata-proxy-secret"
	testProject = "p-meta"
	testUser    = "u-meta"
)

// cluster is a dev agent (server and fake-driver client) serving the
// metadata service on a random port, with a network of loopback
// addresses (127.0.0.0/24) so that a test can send requests from an
// instance's own fixed IP.
type cluster struct {
	a       *agent.Agent
	dataDir string
	srv     *server.Server
	netID   string
	pubKey  string
	base    string
}

// waitFor polls cond until it succeeds, for a generous minute.
func waitFor(t *testing.T, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	zero := 0
	cfg := &agent.Config{
		DevMode: true, NodeName: "meta", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports: &agent.PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		Client: &agent.ClientConfig{Metadata: &agent.MetadataConfig{Listen: "127.0.0.1:0",
			ProxySharedSecret: testSecret, CacheExpiration: "-1s"}},
	}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(cfg, hclog.New(&hclog.LoggerOptions{Level: hclog.Warn}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	c := &cluster{a: a, srv: a.Server(), base: "http://" + a.MetadataAddr(), dataDir: cfg.DataDir}
	if a.MetadataAddr() == "" {
		t.Fatal("the client agent runs no metadata service")
	}
	caller := structs.NetCaller{ProjectID: testProject}
	var out structs.NetWriteResponse
	waitFor(t, "a leader to create the network", func() error {
		return c.srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: caller,
			Network: &structs.Network{Name: "loop", AdminStateUp: true, PortSecurityEnabled: true}}, &out)
	})
	c.netID = out.Networks[0].ID
	if err := c.srv.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: caller,
		Fields: []string{"cidr", "ip_version", "gateway_ip", "dns_nameservers"},
		Subnet: &structs.Subnet{NetworkID: c.netID, CIDR: "127.0.0.0/24", IPVersion: 4, GatewayIP: "127.0.0.1",
			DNSNameservers: []string{"127.0.0.53"}}}, &out); err != nil {
		t.Fatal(err)
	}
	c.pubKey = sshPublicKey(t)
	var kp structs.SingleKeyPairResponse
	if err := c.srv.RPC("KeyPair.Create", &structs.KeyPairCreateRequest{KeyPair: &structs.KeyPair{
		Name: "mykey", UserID: testUser, Type: "ssh", PublicKey: c.pubKey}}, &kp); err != nil {
		t.Fatal(err)
	}
	// Boots before the dev host has registered would find no host.
	waitFor(t, "the dev host up", func() error {
		var hosts structs.HostListResponse
		if err := c.srv.RPC("Host.List", &structs.HostListRequest{}, &hosts); err != nil {
			return err
		}
		for _, h := range hosts.Hosts {
			if h.Up() {
				return nil
			}
		}
		return fmt.Errorf("%d hosts, none up", len(hosts.Hosts))
	})
	return c
}

// sshPublicKey is a fresh ed25519 key in authorized_keys form.
func sshPublicKey(t *testing.T) string {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	field := func(b []byte) []byte {
		return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
	}
	blob := append(field([]byte("ssh-ed25519")), field(pub)...)
	return "ssh-ed25519 " + base64.StdEncoding.EncodeToString(blob) + " test@stratus"
}

// boot creates an instance with the fixed IP ip and waits until it is
// active on the agent's host.
func (c *cluster) boot(t *testing.T, name, ip string, tweak func(*structs.InstanceCreateRequest)) *structs.Instance {
	t.Helper()
	args := &structs.InstanceCreateRequest{Name: name, FlavorID: "m1.tiny", ImageID: "cirros", ImageAdmin: true,
		ProjectID: testProject, UserID: testUser, KeyName: "mykey",
		NetworksMode: structs.NetworksList, Networks: []*structs.InstanceNetworkRequest{{NetworkID: c.netID, FixedIP: ip}}}
	if tweak != nil {
		tweak(args)
	}
	var out structs.InstanceCreateResponse
	waitFor(t, "the instance create (flavors and image seeded)", func() error {
		return c.srv.RPC("Instance.Create", args, &out)
	})
	id := out.Instances[0].ID
	var inst *structs.Instance
	waitFor(t, "instance "+name+" to be active", func() error {
		var got structs.SingleInstanceResponse
		if err := c.srv.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &got); err != nil {
			return err
		}
		if got.Instance.VMState != structs.VMStateActive {
			return fmt.Errorf("vm_state %s, fault %+v", got.Instance.VMState, got.Instance.Fault)
		}
		inst = got.Instance
		return nil
	})
	return inst
}

// clientFrom is an HTTP client whose connections come from ip (any
// 127.x address is the loopback's own).
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 30 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}

// fetch sends a request and returns its status and body.
func fetch(t *testing.T, client *http.Client, method, url, body string, header http.Header) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// get is fetch of a GET that must answer 200.
func get(t *testing.T, client *http.Client, url string) string {
	t.Helper()
	status, body := fetch(t, client, http.MethodGet, url, "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s = %d %s", url, status, body)
	}
	return body
}

// need skips without a tool, and fails under CI=true.
func need(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("%s is missing (%s; scripts/ci-deps.sh installs it): %v", path, why, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}
