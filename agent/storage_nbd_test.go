package agent

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestStorageNBDConfig: nbd_address must be host:port, and needs the
// tls block's CA, certificate and key, without which the exports would
// have no authentication.
func TestStorageNBDConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.hcl")
	base := "name = \"n1\"\ndata_dir = \"" + dir + "\"\nclient {\n  enabled = true\n  storage {\n    pool_dir = \"" + dir + "/pool\"\n    nbd_address = %q\n  }\n}\n"
	tls := "tls {\n  ca_file = \"ca.pem\"\n  cert_file = \"cert.pem\"\n  key_file = \"key.pem\"\n}\n"
	for _, tc := range []struct {
		addr, tls, want string
	}{
		{"10.0.0.5:10809", tls, ""},
		{"10.0.0.5:10809", "", "needs the tls block"},
		{"10.0.0.5", tls, "must be host:port"},
		{":10809", tls, "must be host:port"},
	} {
		writeFile(t, path, strings.Replace(base, "%q", `"`+tc.addr+`"`, 1)+tc.tls)
		c, err := LoadConfigFile(path)
		if err == nil {
			err = c.Finalize()
		}
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("nbd_address %q (tls %v): %v, want %q", tc.addr, tc.tls != "", err, tc.want)
		}
	}
	// The upgrade setting parses.
	writeFile(t, path, strings.Replace(base, "%q", `"10.0.0.5:10809"`+"\n    nbd_shared_client_cert = true", 1)+tls)
	c, err := LoadConfigFile(path)
	if err != nil || c.Client.Storage == nil || !c.Client.Storage.NBDSharedClientCert {
		t.Fatalf("nbd_shared_client_cert = true: %v", err)
	}
}
