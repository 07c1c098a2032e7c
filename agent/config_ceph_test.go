package agent

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCephConfig: the ceph block needs monitors as host:port and a
// secret UUID and gets Cinder's defaults; storage { backend = "rbd" }
// needs it and takes no pool_dir or NBD server; unknown backends are
// refused.
func TestCephConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.hcl")
	const uuid = "457eb676-33da-42ec-9a8c-9293d545c337"
	ceph := func(mons, secret string) string {
		return "  ceph {\n    mon_hosts = [" + mons + "]\n    secret_uuid = \"" + secret + "\"\n  }\n"
	}
	for _, tc := range []struct {
		name, client, want string
	}{
		{"rbd storage", ceph(`"10.0.0.1:6789"`, uuid) + "  storage {\n    backend = \"rbd\"\n    backend_name = \"ceph\"\n  }\n", ""},
		{"hypervisor only", ceph(`"10.0.0.1:6789", "10.0.0.2:6789"`, uuid), ""},
		{"file storage", "  storage {\n    pool_dir = \"" + dir + "\"\n  }\n", ""},
		{"rbd without ceph", "  storage {\n    backend = \"rbd\"\n  }\n", "needs the client's ceph block"},
		{"rbd with nbd", ceph(`"10.0.0.1:6789"`, uuid) + "  storage {\n    backend = \"rbd\"\n    nbd_address = \"10.0.0.5:10809\"\n  }\n", "drop nbd_address"},
		{"file without pool_dir", "  storage {\n    capacity_gb = 5\n  }\n", "needs a pool_dir"},
		{"unknown backend", "  storage {\n    backend = \"lvm\"\n  }\n", "unknown backend \"lvm\""},
		{"no monitors", ceph(``, uuid), "needs mon_hosts"},
		{"monitor without port", ceph(`"10.0.0.1"`, uuid), "is not host:port"},
		{"bad secret", ceph(`"10.0.0.1:6789"`, "ceph"), "is not a UUID"},
	} {
		writeFile(t, path, "name = \"n1\"\ndata_dir = \""+dir+"\"\nclient {\n  enabled = true\n"+tc.client+"}\n")
		c, err := LoadConfigFile(path)
		if err == nil {
			err = c.Finalize()
		}
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		if tc.name == "rbd storage" {
			cc := c.Client.Ceph
			if cc.Pool != "volumes" || cc.User != "cinder" || cc.Keyring != "/etc/ceph/ceph.client.cinder.keyring" {
				t.Errorf("ceph defaults: %+v", cc)
			}
		}
	}
}
