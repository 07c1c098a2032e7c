package command

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/api/apitest"
)

const (
	idWeb = "aaaaaaaa-1111-4111-8111-111111111111"
	idDB  = "bbbbbbbb-2222-4222-8222-222222222222"
	idBad = "bbbbbbbc-3333-4333-8333-333333333333"
	idH1  = "cccccccc-4444-4444-8444-444444444444"
	idH2  = "dddddddd-5555-4555-8555-555555555555"
)

// seedBoot adds two hosts and three instances, one of them failed.
func seedBoot(srv *apitest.Server) {
	seedFlavors(srv)
	srv.AddHost(&api.Host{ID: idH1, Name: "cmp-1", Region: "global", AZ: "nova", Status: "up", Enabled: true,
		Driver: "libvirt", HypervisorType: "QEMU", HypervisorVersion: "8.2", Arch: "x86_64", Traits: []string{"HW_CPU_X86_AVX2", "CUSTOM_GPU"},
		Attributes: map[string]string{"kernel": "6.8"},
		Inventories: map[string]*api.Inventory{
			api.ResourceVCPU:     {Total: 8, AllocationRatio: 4},
			api.ResourceMemoryMB: {Total: 16384, Reserved: 512, AllocationRatio: 1},
			api.ResourceDiskGB:   {Total: 100, AllocationRatio: 1},
		},
		Usage: map[string]int64{api.ResourceVCPU: 2, api.ResourceMemoryMB: 2560, api.ResourceDiskGB: 21}})
	srv.AddHost(&api.Host{ID: idH2, Name: "cmp-2", Status: "down", DisabledReason: "broken disk"})
	tiny := srv.Flavor("1")
	srv.AddInstance(&api.Instance{ID: idWeb, Name: "web", FlavorID: "1", Flavor: tiny, ImageID: "cirros", AZ: "nova",
		HostID: idH1, VMState: "active", PowerState: api.PowerRunning, Status: "ACTIVE", CreatedAt: 1700000000e9,
		Metadata: map[string]string{"role": "frontend"}})
	srv.AddInstance(&api.Instance{ID: idDB, Name: "db", FlavorID: "2", HostID: idH1, VMState: "stopped",
		TaskState: "powering-on", PowerState: api.PowerShutdown, Status: "SHUTOFF"})
	srv.AddInstance(&api.Instance{ID: idBad, Name: "bad", FlavorID: "1", Flavor: tiny, VMState: "error", Status: "ERROR",
		Fault:    &api.Fault{Code: 500, Message: "No valid host was found", Details: "0/2 hosts: 2 insufficient VCPU"},
		Attempts: []*api.BuildAttempt{{HostID: idH2, Error: "spawn failed: disk"}}})
	srv.AddAllocation(&api.Allocation{ID: "a1", InstanceID: idWeb, HostID: idH1, DesiredState: "running",
		ClientState: "running", PowerState: api.PowerRunning})
}

func TestInstanceCreate(t *testing.T) {
	srv := newServer(t)
	seedFlavors(srv)
	// -detach: the fake server's instances never leave BUILD.
	out := runOK(t, "instance", "create", "-detach", "-address", srv.URL, "-flavor", "m1.tiny", "--image", "cirros", "-az", "az1",
		"-key-name", "mykey", "-property", "architecture=x86_64", "-meta", "role=fe", "-meta", "tier=1", "-count", "2", "web")
	list, _, _ := srv.Client(t).Instances().List(nil)
	if len(list) != 2 {
		t.Fatalf("%d instances created", len(list))
	}
	want := "Instance \"web-1\" created with ID \"" + list[0].ID + "\"\nInstance \"web-2\" created with ID \"" + list[1].ID + "\"\n"
	if out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	var body map[string]any
	_ = json.Unmarshal(srv.Requests()[0].Body, &body)
	wantBody := map[string]any{"Name": "web", "Flavor": "m1.tiny", "Image": "cirros", "AZ": "az1", "KeyName": "mykey",
		"ImageProperties": map[string]any{"architecture": "x86_64"}, "Metadata": map[string]any{"role": "fe", "tier": "1"}, "Count": 2.0}
	if !reflect.DeepEqual(body, wantBody) {
		t.Errorf("body %v\nwant %v", body, wantBody)
	}

	out = runOK(t, "instance", "create", "db", "-detach", "-address", srv.URL, "-flavor", "2", "-image", "cirros", "-json")
	var resp api.InstanceCreateResponse
	if err := json.Unmarshal([]byte(out), &resp); err != nil || len(resp.Instances) != 1 || resp.Instances[0].Status != "BUILD" || resp.EvalID == "" {
		t.Errorf("-json: %v %q", err, out)
	}
	if b := string(srv.LastRequest().Body); b != `{"Name":"db","Flavor":"2","Image":"cirros","Count":1}` {
		t.Errorf("minimal body %s", b)
	}

	_, errOut, code := run(t, "instance", "create", "-address", srv.URL, "-flavor", "9", "-image", "cirros", "x")
	if code != 1 || !strings.HasPrefix(errOut, "Error creating instances: Unexpected response code 400") {
		t.Errorf("unknown flavor: exit %d, stderr %q", code, errOut)
	}
}

func TestInstanceCreateUsageErrors(t *testing.T) {
	srv := newServer(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-image", "cirros", "x"}, "-flavor and -image are required"},
		{[]string{"-flavor", "1", "x"}, "-flavor and -image are required"},
		{[]string{"-flavor", "1", "-image", "c", "-count", "0", "x"}, "-count must be at least 1, got 0"},
		{[]string{"-flavor", "1", "-image", "c", "-count", "many", "x"}, `invalid value "many" for flag -count`},
		{[]string{"-flavor", "1", "-image", "c", "-meta", "novalue", "x"}, `want KEY=VALUE, got "novalue"`},
		{[]string{"-flavor", "1", "-image", "c"}, "takes 1 argument(s), got 0"},
	} {
		out, errOut, code := run(t, append([]string{"instance", "create", "-address", srv.URL}, tc.args...)...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", tc.args, code, out)
		}
		assertContains(t, "stderr", errOut, tc.want, "Run 'cloudctl instance create -h' for usage.")
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("usage errors sent %d requests", n)
	}
}

// listRequests counts the blocking instance lists the fake received.
func listRequests(srv *apitest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Method == "GET" && r.Path == "/v1/instances" && r.Query.Has("index") {
			n++
		}
	}
	return n
}

func waitRequests(t *testing.T, srv *apitest.Server, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); listRequests(srv) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d blocking lists, got %d", n, listRequests(srv))
		}
	}
}

type result struct {
	stdout, stderr string
	code           int
}

func runAsync(t *testing.T, args ...string) <-chan result {
	done := make(chan result, 1)
	go func() {
		out, errOut, code := run(t, args...)
		done <- result{out, errOut, code}
	}()
	return done
}

// TestInstanceCreateFollowsByDefault: without -detach a create follows
// its instances with blocking queries, as every other operation does
// (and -wait, which scripts may still pass, changes nothing).
func TestInstanceCreateFollowsByDefault(t *testing.T) {
	srv := newServer(t)
	seedFlavors(srv)
	srv.BlockQueries(true)
	done := runAsync(t, "instance", "create", "-address", srv.URL, "-flavor", "1", "-image", "cirros", "-count", "2", "web")

	waitRequests(t, srv, 1)
	list, _, _ := srv.Client(t).Instances().List(nil)
	first := srv.Requests()[1]
	if want := "index=" + itoa(int(list[1].CreateIndex+1)) + "&wait=5m0s"; first.RawQuery != want {
		t.Errorf("first blocking query %q, want %q", first.RawQuery, want)
	}
	w1, w2 := list[0].ID, list[1].ID
	srv.UpdateInstance(w1, func(i *api.Instance) { i.TaskState = "spawning" })
	waitRequests(t, srv, 2)
	srv.UpdateInstance(w1, func(i *api.Instance) { i.Status, i.VMState, i.TaskState = "ACTIVE", "active", "" })
	waitRequests(t, srv, 3)
	srv.UpdateInstance(w2, func(i *api.Instance) {
		i.Status, i.VMState, i.TaskState = "ERROR", "error", ""
		i.Fault = &api.Fault{Code: 500, Message: "No valid host was found. 0/1 hosts: 1 insufficient VCPU"}
	})
	res := <-done
	want := "Instance \"web-1\" created with ID \"" + w1 + "\"\n" +
		"Instance \"web-2\" created with ID \"" + w2 + "\"\n" +
		"Instance \"web-1\" (" + w1[:8] + "): BUILD (spawning)\n" +
		"Instance \"web-1\" (" + w1[:8] + "): ACTIVE\n" +
		"Instance \"web-2\" (" + w2[:8] + "): ERROR\n"
	if res.code != 1 || res.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", res.code, res.stdout, want)
	}
	if wantErr := "Error: 1 of 2 instances failed to build:\n  \"web-2\" (" + w2 + ") is ERROR: 500: No valid host was found. 0/1 hosts: 1 insufficient VCPU\n"; res.stderr != wantErr {
		t.Errorf("stderr %q, want %q", res.stderr, wantErr)
	}
}

func TestInstanceCreateWaitWithoutBlockingAndJSON(t *testing.T) {
	defer func(p time.Duration) { buildPollPause = p }(buildPollPause)
	buildPollPause = 5 * time.Millisecond
	srv := newServer(t)
	seedFlavors(srv)
	done := runAsync(t, "instance", "create", "-address", srv.URL, "-flavor", "1", "-image", "cirros", "-wait", "-json", "web")
	waitRequests(t, srv, 3) // the fake answers at once: the command polls
	list, _, _ := srv.Client(t).Instances().List(nil)
	srv.UpdateInstance(list[0].ID, func(i *api.Instance) { i.Status, i.HostID = "ACTIVE", idH1 })
	res := <-done
	var resp api.InstanceCreateResponse
	if err := json.Unmarshal([]byte(res.stdout), &resp); err != nil || res.code != 0 || res.stderr != "" {
		t.Fatalf("exit %d, %v, stdout %q stderr %q", res.code, err, res.stdout, res.stderr)
	}
	if len(resp.Instances) != 1 || resp.Instances[0].Status != "ACTIVE" || resp.Instances[0].HostID != idH1 {
		t.Errorf("final instances %+v", resp.Instances[0])
	}

	// An instance deleted while building fails the wait.
	done = runAsync(t, "instance", "create", "-address", srv.URL, "-flavor", "1", "-image", "cirros", "-wait", "gone")
	waitRequests(t, srv, listRequests(srv)+1)
	list, _, _ = srv.Client(t).Instances().List(nil)
	if _, err := srv.Client(t).Instances().Delete(list[1].ID); err != nil {
		t.Fatal(err)
	}
	res = <-done
	if res.code != 1 || !strings.Contains(res.stdout, "): DELETED\n") || !strings.Contains(res.stderr, "deleted while building") {
		t.Errorf("deleted while building: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

func TestInstanceList(t *testing.T) {
	srv := newServer(t)
	if out := runOK(t, "instance", "list", "-address", srv.URL); out != "No instances found\n" {
		t.Errorf("empty: %q", out)
	}
	if out := runOK(t, "instance", "list", "-address", srv.URL, "-json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("empty -json: %q", out)
	}
	seedBoot(srv)
	srv.AddInstance(&api.Instance{ID: "eeeeeeee", Name: "orphan", HostID: "gone", FlavorID: "7", Status: "ACTIVE", PowerState: 9})
	out := runOK(t, "instance", "list", "-address", srv.URL)
	want := "" +
		"ID        Name    Status   Task         Power       Host   Flavor\n" +
		"aaaaaaaa  web     ACTIVE   -            RUNNING     cmp-1  m1.tiny\n" +
		"bbbbbbbb  db      SHUTOFF  powering-on  SHUTDOWN    cmp-1  2\n" +
		"bbbbbbbc  bad     ERROR    -            NOSTATE     -      m1.tiny\n" +
		"eeeeeeee  orphan  ACTIVE   -            UNKNOWN(9)  gone   7\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	out = runOK(t, "instance", "list", "-address", srv.URL, "-verbose", "-host", "cmp-1")
	assertContains(t, "verbose", out, idWeb+"  web", idDB+"  db")
	if strings.Contains(out, "bad") {
		t.Errorf("-host listed other hosts' instances:\n%s", out)
	}
	if q := srv.LastRequest().Query.Get("host"); q != idH1 {
		t.Errorf("-host sent host=%q", q)
	}
	out = runOK(t, "instance", "list", "-address", srv.URL, "-json", "-host", idH1)
	var list []*api.Instance
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 || list[0].Flavor.Name != "m1.tiny" {
		t.Errorf("-json: %v %q", err, out)
	}

	srv.Fail("GET", "/v1/hosts", &api.Error{StatusCode: 500, Kind: api.KindInternal, Message: "boom"})
	assertContains(t, "without host names", runOK(t, "instance", "list", "-address", srv.URL), "RUNNING     "+idH1[:8])
	srv.Fail("GET", "/v1/instances", &api.Error{StatusCode: 503, Kind: api.KindNoLeader, Message: "no cluster leader"})
	if _, errOut, code := run(t, "instance", "list", "-address", srv.URL); code != 1 || !strings.HasPrefix(errOut, "Error listing instances: ") {
		t.Errorf("list error: %d %q", code, errOut)
	}
}
