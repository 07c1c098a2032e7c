package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/api"
)

func TestHostList(t *testing.T) {
	srv := newServer(t)
	if out := runOK(t, "host", "list", "-address", srv.URL); out != "No hosts found\n" {
		t.Errorf("empty: %q", out)
	}
	if out := runOK(t, "host", "list", "-address", srv.URL, "-json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("empty -json: %q", out)
	}
	seedBoot(srv)
	out := runOK(t, "host", "list", "-address", srv.URL)
	want := "" +
		"ID        Name   Status  Enabled  Driver   AZ    VCPUs  RAM (MB)    Disk (GB)  Instances\n" +
		"cccccccc  cmp-1  up      true     libvirt  nova  2/32   2560/15872  21/100     2\n" +
		"dddddddd  cmp-2  down    false    -        -     -      -           -          0\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	assertContains(t, "-verbose", runOK(t, "host", "list", "-address", srv.URL, "-verbose"), idH1+"  cmp-1", idH2+"  cmp-2")

	out = runOK(t, "host", "list", "-address", srv.URL, "-json")
	var hosts []*api.Host
	if err := json.Unmarshal([]byte(out), &hosts); err != nil || len(hosts) != 2 || hosts[0].Capacity[api.ResourceVCPU].Capacity != 32 {
		t.Errorf("-json: %v %q", err, out)
	}

	srv.Fail("GET", "/v1/instances", &api.Error{StatusCode: 503, Kind: api.KindNoLeader, Message: "no cluster leader"})
	if _, errOut, code := run(t, "host", "list", "-address", srv.URL); code != 1 || !strings.HasPrefix(errOut, "Error listing instances: ") {
		t.Errorf("instances error: %d %q", code, errOut)
	}
}

func TestHostStatus(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	out := runOK(t, "host", "status", "-address", srv.URL, "cmp-1")
	want := "" +
		"ID              = " + idH1 + "\n" +
		"Name            = cmp-1\n" +
		"Region          = global\n" +
		"AZ              = nova\n" +
		"Status          = up\n" +
		"Enabled         = true\n" +
		"Disabled Reason = \n" +
		"Drain           = -\n" +
		"Allocations     = 1\n" +
		"Driver          = libvirt\n" +
		"Hypervisor      = QEMU 8.2\n" +
		"Arch            = x86_64\n" +
		"RPC Addr        = -\n" +
		"HTTP Addr       = -\n" +
		"Tunnel IP       = -\n" +
		"Gossip Member   = -\n" +
		"Traits          = HW_CPU_X86_AVX2,CUSTOM_GPU\n" +
		"Build Failures  = 0\n" +
		"Status Updated  = -\n" +
		"\nInventory\n" +
		"Class      Total  Reserved  Ratio  Used  Capacity\n" +
		"DISK_GB    100    0         1.0    21    100\n" +
		"MEMORY_MB  16384  512       1.0    2560  15872\n" +
		"VCPU       8      0         4.0    2     32\n" +
		"\nAttributes\n" +
		"kernel = 6.8\n" +
		"\nInstances\n" +
		"ID        Name  Status   Power     Flavor\n" +
		"aaaaaaaa  web   ACTIVE   RUNNING   m1.tiny\n" +
		"bbbbbbbb  db    SHUTOFF  SHUTDOWN  2\n"
	if out != want {
		t.Errorf("status:\n%s\nwant:\n%s", out, want)
	}
	if q := srv.LastRequest().Query.Get("host"); q != idH1 {
		t.Errorf("instances of host=%q", q)
	}

	out = runOK(t, "host", "status", "-address", srv.URL, idH2)
	assertContains(t, "bare host", out, "Status          = down\n", "Disabled Reason = broken disk\n",
		"\nInventory\n<none>\n", "\nInstances\n<none>\n")
	out = runOK(t, "host", "status", "-address", srv.URL, "-json", "cmp-2")
	var h api.Host
	if err := json.Unmarshal([]byte(out), &h); err != nil || h.ID != idH2 {
		t.Errorf("-json: %v %q", err, out)
	}
	_, errOut, code := run(t, "host", "status", "-address", srv.URL, "cmp-9")
	if code != 1 || errOut != "Error reading host \"cmp-9\": Unexpected response code 404 (not found: host \"cmp-9\" not found)\n" {
		t.Errorf("missing: exit %d, stderr %q", code, errOut)
	}
}

func TestHostEnableDisable(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	out := runOK(t, "host", "disable", "-address", srv.URL, "-reason", "kernel upgrade", "cmp-1")
	if out != "Host \"cmp-1\" ("+idH1+") disabled\n" {
		t.Errorf("disable: %q", out)
	}
	r := srv.LastRequest()
	if r.Path != "/v1/hosts/"+idH1+"/disable" || string(r.Body) != `{"Reason":"kernel upgrade"}` {
		t.Errorf("disable sent %s %s", r.Path, r.Body)
	}
	if h := srv.Host(idH1); h.Enabled || h.DisabledReason != "kernel upgrade" {
		t.Errorf("after disable %+v", h)
	}

	out = runOK(t, "host", "enable", "-json", "-address", srv.URL, idH2)
	var res hostEnabledResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res != (hostEnabledResult{ID: idH2, Name: "cmp-2", Enabled: true}) {
		t.Errorf("enable -json: %v %q", err, out)
	}
	if h := srv.Host(idH2); !h.Enabled || len(srv.LastRequest().Body) != 0 {
		t.Errorf("after enable %+v", h)
	}

	_, errOut, code := run(t, "host", "enable", "-address", srv.URL, "cmp-9")
	if code != 1 || !strings.HasPrefix(errOut, `Error enabling host "cmp-9": Unexpected response code 404`) {
		t.Errorf("missing: exit %d, stderr %q", code, errOut)
	}
	srv.Fail("POST", "/v1/hosts/"+idH1+"/disable", &api.Error{StatusCode: 403, Kind: api.KindPermission, Message: "ACL token not found"})
	_, errOut, code = run(t, "host", "disable", "-address", srv.URL, "cmp-1")
	if code != 1 || !strings.HasPrefix(errOut, `Error disabling host "cmp-1": Unexpected response code 403`) {
		t.Errorf("forbidden: exit %d, stderr %q", code, errOut)
	}
	if _, _, code := run(t, "host", "disable", "-address", srv.URL, "-reason"); code != 2 {
		t.Errorf("-reason without value: exit %d", code)
	}
}

func TestBootGroupsHelp(t *testing.T) {
	assertContains(t, "top-level help", runOK(t), "instance", "host")
	assertContains(t, "instance help", runOK(t, "instance"), "create", "list", "status", "delete", "start", "stop", "reboot", "Boot, inspect")
	assertContains(t, "host help", runOK(t, "host", "-h"), "list", "status", "enable", "disable", "Inspect hosts")
}
