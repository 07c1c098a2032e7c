package agent

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestMetadataConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := dir + "/agent.hcl"
	writeFile(t, path, `
client {
  enabled = true
  metadata {
    listen              = "127.0.0.1:0"
    proxy_shared_secret = "s3cret"
    cache_expiration    = "5s"
  }
}
`)
	c, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := c.Client.Metadata
	if m == nil || m.Listen != "127.0.0.1:0" || m.ProxySharedSecret != "s3cret" || m.CacheExpiration != "5s" {
		t.Fatalf("parsed %+v", m)
	}
	for _, bad := range []*MetadataConfig{{Listen: "nohost"}, {Listen: "127.0.0.1:99999"}, {CacheExpiration: "soon"}} {
		cfg := &Config{NodeName: "x", DataDir: dir, Client: &ClientConfig{Enabled: true, Metadata: bad}}
		if err := cfg.Finalize(); err == nil || !strings.Contains(err.Error(), "metadata") {
			t.Errorf("metadata %+v accepted: %v", bad, err)
		}
	}
}

// takeMetadataPort takes port 8775 on a loopback address of its own
// (dev agents of parallel tests serve metadata on 127.0.0.1:8775 when
// it is free), and answers that address. It fails under CI=true when no
// such address is free, and skips elsewhere.
func takeMetadataPort(t *testing.T) string {
	t.Helper()
	var errs []string
	for i := 77; i < 87; i++ {
		host := fmt.Sprintf("127.0.0.%d", i)
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "8775"))
		if err == nil {
			t.Cleanup(func() { ln.Close() })
			return host
		}
		errs = append(errs, err.Error())
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("no loopback address has port 8775 free under CI=true: %s", strings.Join(errs, "; "))
	}
	t.Skipf("no loopback address has port 8775 free: %s", strings.Join(errs, "; "))
	return ""
}

// TestMetadataServiceDefaultPortTaken starts a dev agent while the
// default metadata address (bind_addr:8775) is taken: the agent runs
// without the service rather than failing; a taken address set
// explicitly is an error.
func TestMetadataServiceDefaultPortTaken(t *testing.T) {
	host := takeMetadataPort(t)
	a := testAgent(t, func(c *Config) { c.BindAddr = host })
	if a.MetadataAddr() != "" {
		t.Fatalf("metadata service at %s with its port taken", a.MetadataAddr())
	}
	cfg := &Config{DevMode: true, NodeName: "m2", DataDir: t.TempDir(), BindAddr: host,
		Client: &ClientConfig{Metadata: &MetadataConfig{Listen: net.JoinHostPort(host, "8775")}}}
	zero := 0
	cfg.Ports = &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	if b, err := New(cfg, nil); err == nil {
		_ = b.Shutdown()
		t.Fatal("an agent started with its configured metadata address taken")
	}
}

func TestMetadataServiceAnswersTheVersionList(t *testing.T) {
	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{Metadata: &MetadataConfig{Listen: "127.0.0.1:0"}}
	})
	status, _, body := do(t, http.MethodGet, "http://"+a.MetadataAddr()+"/", nil)
	if status != http.StatusOK || !strings.HasSuffix(string(body), "2009-04-04\nlatest") {
		t.Fatalf("GET / = %d %q", status, body)
	}
	status, _, _ = do(t, http.MethodGet, "http://"+a.MetadataAddr()+"/openstack/latest/meta_data.json", nil)
	if status != http.StatusNotFound {
		t.Fatalf("meta_data.json for no instance = %d, want 404", status)
	}
}
