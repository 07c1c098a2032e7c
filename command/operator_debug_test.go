package command

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/agent"
	"github.com/stratus-cloud/stratus/api"
)

// debugAgent starts a dev agent with enable_debug and waits for its Raft
// leader; it returns its HTTP URL.
func debugAgent(t *testing.T, enableDebug bool) string {
	t.Helper()
	zero := 0
	cfg := &agent.Config{DevMode: true, NodeName: "debug-test", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports: &agent.PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero}, EnableDebug: enableDebug}
	if err := cfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	cfg.LogBuffer = agent.NewLogBuffer(0)
	a, err := agent.New(cfg, hclog.New(&hclog.LoggerOptions{Name: "agent", Level: hclog.Info, Output: cfg.LogBuffer}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Shutdown() })
	addr := "http://" + a.HTTPAddr()
	c, err := api.NewClient(&api.Config{Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		cfg, err := c.Operator().RaftGetConfiguration(nil)
		if err == nil && len(cfg.Servers) == 1 && cfg.Servers[0].Leader {
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Raft leader: %v", err)
		}
	}
}

// readArchive answers the files of a tar.gz by name.
func readArchive(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = b
	}
}

// TestOperatorDebugAgainstAgent: against a real agent with enable_debug,
// the archive holds the Raft configuration, the members, and the server's
// self, metrics, recent logs and Go profiles; without enable_debug the
// profiles are listed as not captured, with the agent's reason.
func TestOperatorDebugAgainstAgent(t *testing.T) {
	t.Setenv(api.EnvToken, "")
	addr := debugAgent(t, true)
	dir := t.TempDir()
	out := runOK(t, "operator", "debug", "-address", addr, "-output", dir, "-pprof-duration", "1s", "-json")
	var man debugManifest
	if err := json.Unmarshal([]byte(out), &man); err != nil {
		t.Fatalf("-json output: %v\n%s", err, out)
	}
	if len(man.Servers) != 1 || len(man.Servers[0].Errors) != 0 {
		t.Fatalf("manifest %+v", man)
	}
	files := readArchive(t, man.Archive)
	srv := "servers/debug-test/"
	for name, want := range map[string]string{
		"cluster/raft-configuration.json": `"Leader": true`,
		"cluster/members.json":            `"Role": "server"`,
		srv + "self.json":                 `"NodeName": "debug-test"`,
		srv + "members.json":              `"debug-test"`,
		srv + "metrics.prom":              "stratus_rpc_requests_total",
		srv + "logs.txt":                  "[INFO]  agent",
	} {
		if !strings.Contains(string(files[name]), want) {
			t.Errorf("%s lacks %q: %.300s", name, want, files[name])
		}
	}
	for _, p := range debugProfiles {
		// A pprof profile is gzipped protobuf.
		if b := files[srv+"pprof/"+p+".prof"]; len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("profile %s: %d bytes, not a gzipped profile", p, len(b))
		}
	}

	off := debugAgent(t, false)
	out = runOK(t, "operator", "debug", "-address", off, "-output", t.TempDir(), "-json")
	man = debugManifest{}
	if err := json.Unmarshal([]byte(out), &man); err != nil {
		t.Fatal(err)
	}
	errs := man.Servers[0].Errors
	if len(errs) != len(debugProfiles) || !strings.Contains(errs[srv+"pprof/heap.prof"], "enable_debug") {
		t.Errorf("without enable_debug: errors %v", errs)
	}
	if files := readArchive(t, man.Archive); !strings.Contains(string(files["manifest.json"]), "enable_debug") {
		t.Errorf("the archive's manifest does not say why the profiles are missing: %s", files["manifest.json"])
	}
}
