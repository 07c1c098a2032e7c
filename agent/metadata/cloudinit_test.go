package metadata_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// debianPython is Debian's interpreter, which has the cloud-init package.
const debianPython = "/usr/bin/python3"

// cloudInitScript runs cloud-init's own OpenStack and EC2 readers: the
// metadata service (argv[1]) and a config drive directory (argv[2]).
// The EC2 reader is pointed at argv[1] too (its default is the real
// 169.254.169.254), and nothing retries.
const cloudInitScript = `
import json, sys
from cloudinit.sources.helpers import openstack, ec2
base, drive = sys.argv[1], sys.argv[2]

def ec2_md():
    return ec2.get_instance_metadata("2009-04-04", base, retries=0, timeout=30)

def summary(res):
    md = res["metadata"]
    ud = res.get("userdata") or b""
    if isinstance(ud, bytes):
        ud = ud.decode()
    nd = res.get("networkdata")
    macs = {l["ethernet_mac_address"]: "eth%d" % i for i, l in enumerate((nd or {}).get("links", []))}
    return {
        "instance_id": md.get("instance-id"),
        "local_hostname": md.get("local-hostname"),
        "public_keys": md.get("public_keys"),
        "userdata": ud,
        "network_config": openstack.convert_net_json(nd, known_macs=macs) if nd else None,
        "ec2": res.get("ec2-metadata"),
    }

reader = openstack.MetadataReader(base, retries=0, timeout=30)
reader._read_ec2_metadata = ec2_md
out = {
    "service": summary(reader.read_v2()),
    "drive": summary(openstack.ConfigDriveReader(drive).read_v2()),
    "ec2_userdata": ec2.get_instance_userdata("2009-04-04", base, retries=0, timeout=30).decode(),
}
print(json.dumps(out, default=str))
`

// TestCloudInitParsesOurAnswers boots an instance with a config drive
// and runs Debian's cloud-init readers on the metadata service (through
// a proxy that connects from the instance's address, as the dataplane's
// DNAT would) and on the drive's files, read back with isoinfo.
func TestCloudInitParsesOurAnswers(t *testing.T) {
	need(t, debianPython, "Debian's python3 runs cloud-init")
	if err := exec.Command(debianPython, "-c", "import cloudinit.sources.helpers.openstack").Run(); err != nil {
		need(t, "/usr/lib/python3/dist-packages/cloudinit", "the Debian cloud-init package")
	}
	isoinfo, err := exec.LookPath("isoinfo")
	if err != nil {
		need(t, "/usr/bin/isoinfo", "the Debian genisoimage package")
	}
	c := startCluster(t)
	inst := c.boot(t, "epsilon", "127.0.0.46", func(r *structs.InstanceCreateRequest) {
		r.UserData = "#cloud-config\nruncmd: [echo hi]\n"
		r.ConfigDrive = true
	})
	base := proxyFrom(t, "127.0.0.46", c.base)
	drive := extractConfigDrive(t, isoinfo, c, inst.ID)

	cmd := exec.Command(debianPython, "-c", cloudInitScript, base, drive)
	cmd.Env = append(os.Environ(), "NO_PROXY=*", "no_proxy=*")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("cloud-init: %v\n%s", err, stderr)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out, &top); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	type reading struct {
		InstanceID    string            `json:"instance_id"`
		LocalHostname string            `json:"local_hostname"`
		PublicKeys    map[string]string `json:"public_keys"`
		Userdata      string            `json:"userdata"`
		NetworkConfig struct {
			Config []map[string]any `json:"config"`
		} `json:"network_config"`
		EC2 map[string]any `json:"ec2"`
	}
	for _, src := range []string{"service", "drive"} {
		var r reading
		if err := json.Unmarshal(top[src], &r); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if r.InstanceID != inst.ID || r.LocalHostname != "epsilon.novalocal" || r.PublicKeys["mykey"] != c.pubKey ||
			r.Userdata != "#cloud-config\nruncmd: [echo hi]\n" {
			t.Errorf("%s: cloud-init read %+v", src, r)
		}
		if !strings.Contains(string(mustJSON(r.NetworkConfig.Config)), `"address":"127.0.0.46"`) {
			t.Errorf("%s: network config %s", src, mustJSON(r.NetworkConfig.Config))
		}
		keys, _ := r.EC2["public-keys"].(map[string]any)
		if r.EC2["local-ipv4"] != "127.0.0.46" || r.EC2["instance-id"] != "i-"+strings.ReplaceAll(inst.ID, "-", "")[:8] ||
			!strings.Contains(mustJSON(keys), "ssh-ed25519") {
			t.Errorf("%s: ec2 metadata %v", src, r.EC2)
		}
	}
	var ud string
	if err := json.Unmarshal(top["ec2_userdata"], &ud); err != nil || ud != "#cloud-config\nruncmd: [echo hi]\n" {
		t.Errorf("ec2 user data %q: %v", ud, err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// proxyFrom serves target on a loopback port through connections from
// ip, standing in for the dataplane's DNAT of 169.254.169.254.
func proxyFrom(t *testing.T, ip, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = clientFrom(ip).Transport
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// extractConfigDrive reads the config drive the fake driver was given
// for the instance and copies its files out with isoinfo, checking the
// label; it returns the directory.
func extractConfigDrive(t *testing.T, isoinfo string, c *cluster, id string) string {
	t.Helper()
	state := filepath.Join(c.dataDir, "client", "fake-hypervisor.json")
	raw, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "fake-hypervisor.json")
	if err := os.WriteFile(cp, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := fake.Open(fake.Config{StatePath: cp})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := d.Spec(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.ConfigDrive) == 0 {
		t.Fatal("the driver was given no config drive")
	}
	iso := filepath.Join(t.TempDir(), "disk.config")
	if err := os.WriteFile(iso, spec.ConfigDrive, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := exec.Command(isoinfo, "-d", "-i", iso).CombinedOutput()
	if err != nil || !strings.Contains(string(info), "Volume id: config-2") {
		t.Fatalf("isoinfo -d: %v\n%s", err, info)
	}
	list, err := exec.Command(isoinfo, "-R", "-f", "-i", iso).Output()
	if err != nil {
		t.Fatalf("isoinfo -f: %v", err)
	}
	paths := strings.Fields(string(list))
	for _, want := range []string{"/openstack/latest/meta_data.json", "/openstack/2012-08-10/meta_data.json",
		"/openstack/latest/network_data.json", "/openstack/latest/user_data", "/ec2/latest/meta-data.json", "/ec2/2009-04-04/user-data"} {
		if !slicesContains(paths, want) {
			t.Fatalf("the config drive lacks %s: %v", want, paths)
		}
	}
	dir := t.TempDir()
	for _, p := range paths {
		if isDir(paths, p) {
			continue
		}
		data, err := exec.Command(isoinfo, "-R", "-i", iso, "-x", p).Output()
		if err != nil {
			t.Fatalf("isoinfo -x %s: %v", p, err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func slicesContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isDir reports whether another listed path lies under p.
func isDir(paths []string, p string) bool {
	for _, q := range paths {
		if strings.HasPrefix(q, p+"/") {
			return true
		}
	}
	return false
}
