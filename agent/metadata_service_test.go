package agent

import (
	"net"
	"net/http"
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

// TestMetadataServiceDefaultPortTaken starts a dev agent while the
// default metadata address is taken: the agent runs without the service
// rather than failing; a taken address set explicitly is an error.
func TestMetadataServiceDefaultPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:8775")
	if err != nil {
		t.Skipf("127.0.0.1:8775 is not free to take: %v", err)
	}
	defer ln.Close()
	a := testAgent(t, nil)
	if a.MetadataAddr() != "" {
		t.Fatalf("metadata service at %s with its port taken", a.MetadataAddr())
	}
	cfg := &Config{DevMode: true, NodeName: "m2", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Client: &ClientConfig{Metadata: &MetadataConfig{Listen: "127.0.0.1:8775"}}}
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
