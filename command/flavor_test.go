package command

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/api"
)

func TestFlavorCreateBothFlagForms(t *testing.T) {
	srv := newServer(t)
	out := runOK(t, "flavor", "create", "--address", srv.URL, "--id", "7", "--vcpus", "2", "-ram", "2048",
		"-disk=20", "--ephemeral=5", "-swap", "128", "--rxtx-factor", "1.5", "-private",
		"--description", "custom flavor", "-property", "hw:cpu_policy=dedicated", "--property", "k=v=w", "m1.custom")
	if out != "Flavor \"m1.custom\" created with ID \"7\"\n" {
		t.Errorf("stdout %q", out)
	}
	want := api.Flavor{ID: "7", Name: "m1.custom", VCPUs: 2, MemoryMB: 2048, RootGB: 20, EphemeralGB: 5,
		SwapMB: 128, RxTxFactor: 1.5, IsPublic: false, Description: "custom flavor"}
	got := srv.Flavor("7")
	if got == nil {
		t.Fatal("flavor not created")
	}
	specs := got.ExtraSpecs
	got.ExtraSpecs, got.CreateIndex, got.ModifyIndex = nil, 0, 0
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("created %+v\nwant    %+v", *got, want)
	}
	if len(specs) != 2 || specs["hw:cpu_policy"] != "dedicated" || specs["k"] != "v=w" {
		t.Errorf("extra specs %v", specs)
	}
}

func TestFlavorCreateDefaultsAndJSON(t *testing.T) {
	srv := newServer(t)
	// Flags may follow the name.
	out := runOK(t, "flavor", "create", "m1.default", "-address", srv.URL, "-json")
	var f api.Flavor
	if err := json.Unmarshal([]byte(out), &f); err != nil {
		t.Fatalf("-json output %q: %v", out, err)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if !uuid.MatchString(f.ID) || f.Name != "m1.default" || f.VCPUs != 1 || f.MemoryMB != 256 ||
		f.RootGB != 0 || f.RxTxFactor != 1 || !f.IsPublic || f.CreateIndex == 0 {
		t.Errorf("created %+v", f)
	}
	if a, b := newUUID(), newUUID(); a == b {
		t.Error("newUUID repeats")
	}
}

func TestFlavorCreateUsageErrors(t *testing.T) {
	srv := newServer(t)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-vcpus", "abc", "x"}, `invalid value "abc" for flag -vcpus`},
		{[]string{"--ram=lots", "x"}, `invalid value "lots" for flag -ram`},
		{[]string{"-property", "novalue", "x"}, `want KEY=VALUE, got "novalue"`},
		{[]string{"-property", "=v", "x"}, `want KEY=VALUE`},
		{[]string{}, "takes 1 argument(s), got 0"},
		{[]string{"a", "b"}, "takes 1 argument(s), got 2"},
		{[]string{"-vcpus"}, "flag needs an argument: -vcpus"},
	}
	for _, tc := range cases {
		args := append([]string{"flavor", "create", "-address", srv.URL}, tc.args...)
		out, errOut, code := run(t, args...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", tc.args, code, out)
		}
		assertContains(t, "stderr", errOut, tc.want, "Run 'cloudctl flavor create -h' for usage.")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("usage errors sent %d requests", n)
	}
}

func TestFlavorCreateAPIError(t *testing.T) {
	srv := newServer(t)
	srv.AddFlavor(&api.Flavor{ID: "1", Name: "m1.tiny", VCPUs: 1, MemoryMB: 512})
	_, errOut, code := run(t, "flavor", "create", "-address", srv.URL, "-id", "1", "other")
	if code != 1 || !strings.HasPrefix(errOut, `Error creating flavor: Unexpected response code 409 (conflict: flavor "1" already exists)`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func seedFlavors(srv interface{ AddFlavor(*api.Flavor) *api.Flavor }) {
	srv.AddFlavor(&api.Flavor{ID: "1", Name: "m1.tiny", VCPUs: 1, MemoryMB: 512, RootGB: 1, RxTxFactor: 1, IsPublic: true})
	srv.AddFlavor(&api.Flavor{ID: "2", Name: "m1.small", VCPUs: 1, MemoryMB: 2048, RootGB: 20, SwapMB: 512,
		RxTxFactor: 1, ExtraSpecs: map[string]string{"trait:HW_CPU_X86_AVX2": "required", "hw:mem_page_size": "large"}})
}

func TestFlavorList(t *testing.T) {
	srv := newServer(t)
	if out := runOK(t, "flavor", "list", "-address", srv.URL); out != "No flavors found\n" {
		t.Errorf("empty list: %q", out)
	}
	if out := runOK(t, "flavor", "list", "-address", srv.URL, "-json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("empty -json list: %q", out)
	}
	seedFlavors(srv)

	out := runOK(t, "flavor", "list", "-address", srv.URL)
	want := "" +
		"ID  Name      VCPUs  RAM   Disk  Ephemeral  Swap  Public\n" +
		"1   m1.tiny   1      512   1     0          0     true\n" +
		"2   m1.small  1      2048  20    0          512   false\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}

	out = runOK(t, "flavor", "list", "--address", srv.URL, "--json", "--stale")
	var flavors []*api.Flavor
	if err := json.Unmarshal([]byte(out), &flavors); err != nil || len(flavors) != 2 || flavors[1].ExtraSpecs["hw:mem_page_size"] != "large" {
		t.Errorf("-json: %v, %q", err, out)
	}
	if q := srv.LastRequest().RawQuery; q != "stale" {
		t.Errorf("-stale sent query %q", q)
	}
}

func TestFlavorShow(t *testing.T) {
	srv := newServer(t)
	seedFlavors(srv)
	out := runOK(t, "flavor", "show", "-address", srv.URL, "m1.small")
	assertContains(t, "show", out,
		"ID             = 2\n", "Name           = m1.small\n", "RAM (MB)       = 2048\n",
		"RX/TX Factor   = 1.0\n", "Public         = false\n", "Description    = \n",
		"\nExtra Specs\nhw:mem_page_size      = large\ntrait:HW_CPU_X86_AVX2 = required\n")
	out = runOK(t, "flavor", "show", "-address", srv.URL, "1")
	assertContains(t, "show without specs", out, "Name           = m1.tiny\n", "Extra Specs\n<none>\n")

	out = runOK(t, "flavor", "show", "1", "--json", "--address", srv.URL)
	var f api.Flavor
	if err := json.Unmarshal([]byte(out), &f); err != nil || f.Name != "m1.tiny" {
		t.Errorf("-json: %v, %q", err, out)
	}

	_, errOut, code := run(t, "flavor", "show", "-address", srv.URL, "9")
	if code != 1 || errOut != "Error reading flavor \"9\": Unexpected response code 404 (not found: flavor \"9\" not found)\n" {
		t.Errorf("missing flavor: exit %d, stderr %q", code, errOut)
	}
	if _, _, code := run(t, "flavor", "show", "-address", srv.URL); code != 2 {
		t.Errorf("show without argument: exit %d", code)
	}
}

func TestFlavorDelete(t *testing.T) {
	srv := newServer(t)
	seedFlavors(srv)
	out, errOut, code := run(t, "flavor", "delete", "-address", srv.URL, "1", "9", "2")
	if code != 1 {
		t.Errorf("exit %d, want 1 (one deletion failed)", code)
	}
	if out != "Flavor \"1\" deleted\nFlavor \"2\" deleted\n" {
		t.Errorf("stdout %q", out)
	}
	assertContains(t, "stderr", errOut, `Error deleting flavor "9": Unexpected response code 404`)
	if srv.Flavor("1") != nil || srv.Flavor("2") != nil {
		t.Error("flavors not deleted")
	}

	srv.AddFlavor(&api.Flavor{ID: "3", Name: "x", VCPUs: 1, MemoryMB: 1})
	out = runOK(t, "flavor", "delete", "--json", "--address", srv.URL, "3")
	var res struct{ Deleted []string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Deleted) != 1 || res.Deleted[0] != "3" {
		t.Errorf("-json: %v, %q", err, out)
	}
	if _, _, code := run(t, "flavor", "delete", "-address", srv.URL); code != 2 {
		t.Errorf("delete without IDs: exit %d", code)
	}
}
