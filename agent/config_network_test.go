package agent

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestServerNetworkConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.hcl")
	writeFile(t, path, "name = \"n1\"\ndata_dir = \""+dir+"\"\nserver {\n  enabled = true\n  network {\n    vni_range = \"1000:1999\"\n    physical_mtu = 9000\n  }\n}\n")
	c, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if got := c.mustNetSegments(); got != (structs.NetSegments{VNIMin: 1000, VNIMax: 1999, PhysnetMTU: 9000}) {
		t.Fatalf("segments %+v", got)
	}
	c.Server.Network = nil
	if got := c.mustNetSegments(); !got.IsDefault() {
		t.Fatalf("default segments %+v", got)
	}
	for _, bad := range []ServerNetworkConfig{{VNIRange: "1000"}, {VNIRange: "2000:1000"}, {VNIRange: "0:10"},
		{VNIRange: "1:16777216"}, {PhysicalMTU: 100}, {VNIRange: "a:b"}} {
		c.Server.Network = &bad
		if err := c.Finalize(); err == nil || !strings.Contains(err.Error(), "vni_range") && !strings.Contains(err.Error(), "physical_mtu") {
			t.Errorf("%+v answered %v", bad, err)
		}
	}
}
