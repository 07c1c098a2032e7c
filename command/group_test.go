package command

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/api/apitest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files of the tests that have them")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

const (
	idW1 = "11111111-aaaa-4aaa-8aaa-aaaaaaaaaaa1"
	idW2 = "22222222-aaaa-4aaa-8aaa-aaaaaaaaaaa2"
	idW3 = "33333333-aaaa-4aaa-8aaa-aaaaaaaaaaa3"
)

// writeSpec writes an HCL spec to a temporary file and returns its path.
func writeSpec(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "web.hcl")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const webHCL = `variable "flavor" {
  default = "m1.small"
}

instance "web" {
  count    = 3
  flavor   = var.flavor
  image    = "debian-12"
  metadata = { role = "web" }
  update {
    max_parallel     = 1
    min_healthy_time = "10s"
  }
}
`

// updatePlan is a plan with every kind of change.
var updatePlan = &api.GroupPlan{
	Name: "web", Exists: true, CurrentVersion: 4, CheckIndex: 57, SpecChanged: true,
	Fields: []*api.FieldDiff{
		{Name: "count", Type: api.DiffEdited, Old: "3", New: "4"},
		{Name: "flavor", Type: api.DiffEdited, Old: "m1.tiny", New: "m1.small", Effect: api.EffectResize},
		{Name: "metadata[tier]", Type: api.DiffAdded, New: "front", Effect: api.EffectInPlace},
		{Name: "image", Type: api.DiffEdited, Old: "cirros", New: "debian-12", Effect: api.EffectRebuild},
	},
	Instances: []*api.InstanceDiff{
		{Name: "web-1", ID: idW1, Action: api.PlanUpdate, Fields: []*api.FieldDiff{
			{Name: "flavor", Type: api.DiffEdited, Old: "m1.tiny", New: "m1.small", Effect: api.EffectResize},
			{Name: "metadata[tier]", Type: api.DiffAdded, New: "front", Effect: api.EffectInPlace}}},
		{Name: "web-2", ID: idW2, Action: api.PlanReplace, Fields: []*api.FieldDiff{
			{Name: "image", Type: api.DiffEdited, Old: "cirros", New: "debian-12", Effect: api.EffectRebuild}}},
		{Name: "web-3", ID: idW3, Action: api.PlanReplace, Reason: "its host cmp-2 is down"},
		{Name: "web-4", Action: api.PlanCreate},
		{Name: "web-7", ID: "77777777-aaaa-4aaa-8aaa-aaaaaaaaaaa7", Action: api.PlanDestroy, Reason: "count lowered to 4"},
	},
	Summary:  api.PlanSummary{Create: 1, Update: 1, Replace: 2, Destroy: 1},
	Warnings: []string{`network "private" not found: members cannot be created until it exists`},
}

func TestInstancePlanOutputAndExitCodes(t *testing.T) {
	srv := newServer(t)
	path := writeSpec(t, webHCL)
	srv.SetPlan(updatePlan)
	out, errOut, code := run(t, "instance", "plan", "-address", srv.URL, path)
	if code != 2 || errOut != "" {
		t.Fatalf("plan with changes: exit %d, stderr %q", code, errOut)
	}
	golden(t, "plan_update.golden", strings.ReplaceAll(out, path, "web.hcl"))
	// The spec was parsed locally and sent whole.
	var sent struct{ Spec *api.InstanceGroupSpec }
	if err := json.Unmarshal(srv.LastRequest().Body, &sent); err != nil || sent.Spec.Flavor != "m1.small" || sent.Spec.Count != 3 ||
		sent.Spec.Update.MinHealthyTime.String() != "10s" || srv.LastRequest().Path != "/v1/groups/web/plan" {
		t.Fatalf("sent %s to %s", srv.LastRequest().Body, srv.LastRequest().Path)
	}

	// No changes: exit 0; a new group: every member is created.
	srv.SetPlan(&api.GroupPlan{Name: "web", Exists: true, CurrentVersion: 4, CheckIndex: 57,
		Instances: []*api.InstanceDiff{{Name: "web-1", ID: idW1, Action: api.PlanNone}}, Summary: api.PlanSummary{Unchanged: 1}})
	out, _, code = run(t, "instance", "plan", "-address", srv.URL, path)
	if code != 0 {
		t.Fatalf("plan without changes: exit %d", code)
	}
	golden(t, "plan_unchanged.golden", out)
	out, _, code = run(t, "instance", "plan", "-address", srv.URL, "-verbose", path)
	if code != 0 {
		t.Errorf("verbose plan without changes: exit %d", code)
	}
	assertContains(t, "verbose plan", out, "web-1 ("+idW1+"): no change")

	// -var reaches the spec; -json prints the plan.
	out, _, code = run(t, "instance", "plan", "-address", srv.URL, "-json", "-var", "flavor=m1.large", path)
	var p api.GroupPlan
	if err := json.Unmarshal([]byte(out), &p); err != nil || code != 0 || p.Name != "web" {
		t.Fatalf("-json: exit %d, %v %q", code, err, out)
	}
	if err := json.Unmarshal(srv.LastRequest().Body, &sent); err != nil || sent.Spec.Flavor != "m1.large" {
		t.Fatalf("-var: sent %s", srv.LastRequest().Body)
	}
}

func TestInstancePlanErrors(t *testing.T) {
	srv := newServer(t)
	n := len(srv.Requests())
	path := writeSpec(t, "instance \"web\" {\n  flavor = \"m1.tiny\"\n  image  = \"cirros\"\n  colour = \"red\"\n}\n")
	out, errOut, code := run(t, "instance", "plan", "-address", srv.URL, path)
	if code != 1 || out != "" {
		t.Fatalf("invalid spec: exit %d, stdout %q", code, out)
	}
	golden(t, "plan_invalid.golden", strings.ReplaceAll(errOut, path, "web.hcl"))
	if len(srv.Requests()) != n {
		t.Errorf("an invalid spec was sent")
	}
	_, errOut, code = run(t, "instance", "plan", "-address", srv.URL, "-var", "nope=1", writeSpec(t, webHCL))
	if code != 1 || !strings.Contains(errOut, "Undeclared variable") {
		t.Errorf("undeclared -var: exit %d, %q", code, errOut)
	}
	srv.Fail("POST", "/v1/groups/web/plan", &api.Error{StatusCode: 400, Kind: api.KindInvalid, Message: `instance group "web": flavor "m1.small" not found`})
	_, errOut, code = run(t, "instance", "plan", "-address", srv.URL, writeSpec(t, webHCL))
	if code != 1 || !strings.Contains(errOut, `Error planning instance group "web": Unexpected response code 400 (invalid: instance group "web": flavor "m1.small" not found)`) {
		t.Errorf("server error: exit %d, %q", code, errOut)
	}
	if _, _, code := run(t, "instance", "plan", "-address", srv.URL); code != 2 {
		t.Errorf("no file: exit %d", code)
	}
}

// seedGroup stores a group with three members in the fake.
func seedGroup(srv *apitest.Server) {
	seedBoot(srv)
	small := srv.Flavor("2")
	member := func(id, name, host, status, task string) *api.Instance {
		return &api.Instance{ID: id, Name: name, FlavorID: "2", Flavor: small, ImageID: "debian-12", HostID: host, Status: status,
			TaskState: task, VMState: strings.ToLower(status), PowerState: api.PowerRunning, CreatedAt: 1700000000e9,
			InstanceGroup: "web", InstanceGroupVersion: 5}
	}
	srv.SetGroup(&api.InstanceGroupStatus{
		Group: &api.InstanceGroup{Name: "web", Version: 5, ServerGroupID: "5f2a0c1e-0000-4000-8000-000000000001", SubmitTime: 1700000100e9,
			CreateIndex: 10, ModifyIndex: 57, Spec: &api.InstanceGroupSpec{Name: "web", Count: 3, Flavor: "m1.small", Image: "debian-12",
				Metadata: map[string]string{"role": "web"}, Placement: &api.GroupPlacement{Policy: "anti-affinity"},
				Constraints: []*api.Constraint{{Attribute: "host.arch", Operator: "=", Value: "x86_64"}},
				Update:      &api.GroupUpdate{MaxParallel: 1, HealthCheck: "active", MinHealthyTime: 10e9}}},
		Deployment: &api.GroupDeployment{Name: "web", Version: 5, Status: api.DeploymentRunning,
			Description: "2 of 3 members healthy; waiting for web-3 to finish its resize", Desired: 3, Placed: 3, Running: 2, Updated: 2, Healthy: 2},
		Members: []*api.Instance{member(idW1, "web-1", idH1, "ACTIVE", ""), member(idW2, "web-2", idH1, "ACTIVE", ""),
			member(idW3, "web-3", idH1, "RESIZE", "resize_migrating")},
	})
	srv.SetGroupVersions("web", []*api.InstanceGroupVersion{
		{Name: "web", Version: 5, SubmitTime: 1700000100e9, Spec: &api.InstanceGroupSpec{Count: 3, Flavor: "m1.small", Image: "debian-12"},
			Diff: []*api.FieldDiff{{Name: "flavor", Type: api.DiffEdited, Old: "m1.tiny", New: "m1.small", Effect: api.EffectResize}}},
		{Name: "web", Version: 4, SubmitTime: 1700000050e9, Spec: &api.InstanceGroupSpec{Count: 3, Flavor: "m1.tiny", Image: "debian-12"}, RevertedFrom: 2,
			Diff: []*api.FieldDiff{{Name: "state", Type: api.DiffEdited, Old: "stopped", New: "running"}}},
		{Name: "web", Version: 3, SubmitTime: 1700000040e9, Stopped: true, Spec: &api.InstanceGroupSpec{Count: 2, Flavor: "m1.tiny", Image: "cirros"}},
	})
}

func TestInstanceGroupStatusHistoryAndList(t *testing.T) {
	srv := newServer(t)
	seedGroup(srv)
	out := runOK(t, "instance", "status", "-address", srv.URL, "-group", "web")
	golden(t, "group_status.golden", out)
	// Without -group the exact instance ID wins, then the group name
	// (an instance is named "web" too: the output says so).
	assertContains(t, "instance by ID", runOK(t, "instance", "status", "-address", srv.URL, idWeb), "Name        = web\n", "Allocation")
	out = runOK(t, "instance", "status", "-address", srv.URL, "web")
	assertContains(t, "group by name", out, "Deployment  = running\n", "Note: an instance is named \"web\" too; use its ID to see it.")
	// Names that are no group still find instances.
	assertContains(t, "instance by name", runOK(t, "instance", "status", "-address", srv.URL, "db"), "Name        = db\n")
	_, errOut, code := run(t, "instance", "status", "-address", srv.URL, "-group", "db")
	if code != 1 || !strings.Contains(errOut, "no such instance group") {
		t.Errorf("-group db: exit %d %q", code, errOut)
	}

	golden(t, "group_list.golden", runOK(t, "instance", "status", "-address", srv.URL))
	golden(t, "group_history.golden", runOK(t, "instance", "history", "-address", srv.URL, "web"))
	golden(t, "group_history_diff.golden", runOK(t, "instance", "history", "-address", srv.URL, "-p", "web"))
	out = runOK(t, "instance", "history", "-address", srv.URL, "-t", `{{range .}}{{.Version}} {{.Spec.Flavor}}{{"\n"}}{{end}}`, "web")
	if out != "5 m1.small\n4 m1.tiny\n3 m1.tiny\n" {
		t.Errorf("history -t: %q", out)
	}
}

func TestInstanceRunFollowsTheDeployment(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	path := writeSpec(t, webHCL)
	out := runOK(t, "instance", "run", "-address", srv.URL, path)
	golden(t, "run_new.golden", untimed(out))
	var sent struct {
		Spec         *api.InstanceGroupSpec
		EnforceIndex bool
		CheckIndex   uint64
	}
	if err := json.Unmarshal(lastRequestTo(srv, "POST", "/v1/groups").Body, &sent); err != nil || sent.EnforceIndex || sent.Spec.Name != "web" {
		t.Fatalf("register sent %+v %v", sent, err)
	}

	// -check-index is sent; a stale one is refused with advice.
	g := srv.Group("web")
	_, errOut, code := run(t, "instance", "run", "-address", srv.URL, "-check-index", "3", path)
	if code != 1 || !strings.Contains(errOut, "409 (conflict: ") || !strings.Contains(errOut, `Run "cloudctl instance plan `+path+`" again`) {
		t.Errorf("stale check index: exit %d, %q", code, errOut)
	}
	out = runOK(t, "instance", "run", "-address", srv.URL, "-detach", "-check-index", itoa(int(g.Group.ModifyIndex)), path)
	assertContains(t, "detached run", out, `Registered instance group "web": version 2`, "Check Index: ", `Follow it with "cloudctl instance status web"`)
	if _, _, code := run(t, "instance", "run", "-address", srv.URL, "-check-index", "x", path); code != 2 {
		t.Errorf("bad check index: exit %d", code)
	}

	// A failed deployment exits 1.
	srv.FailDeployments("failed 3 times in a row: web-2: it is in ERROR: No valid host was found; retrying")
	out, errOut, code = run(t, "instance", "revert", "-address", srv.URL, "web", "1")
	if code != 1 || !strings.Contains(errOut, "the deployment of instance group \"web\" version 3 failed: failed 3 times in a row") {
		t.Errorf("failed deployment: exit %d, %q\n%s", code, errOut, out)
	}
}

func TestInstanceStopGroupOrInstance(t *testing.T) {
	srv := newServer(t)
	seedGroup(srv)
	// "web" names both an instance and a group: no guessing.
	_, errOut, code := run(t, "instance", "stop", "-address", srv.URL, "web")
	if code != 1 || !strings.Contains(errOut, `"web" names both an instance and an instance group`) {
		t.Fatalf("ambiguous stop: exit %d %q", code, errOut)
	}
	// An instance ID stops the instance.
	runOK(t, "instance", "stop", "-address", srv.URL, "-detach", idWeb)
	if r := srv.LastRequest(); r.Path != "/v1/instances/"+idWeb+"/actions" || string(r.Body) != `{"Action":"stop"}` {
		t.Errorf("instance stop sent %s %s", r.Path, r.Body)
	}
	// -group stops the group and follows it until it is stopped.
	out := runOK(t, "instance", "stop", "-address", srv.URL, "-group", "web")
	golden(t, "stop_group.golden", untimed(out))
	// -purge follows until the group is gone.
	out = runOK(t, "instance", "stop", "-address", srv.URL, "-purge", "web")
	assertContains(t, "purge", untimed(out), `Stopping instance group "web": version 7`, `Instance group "web" purged`)
	if _, _, code := run(t, "instance", "stop", "-address", srv.URL, "-group", "web"); code != 1 {
		t.Errorf("stop of a purged group: exit %d", code)
	}
}

func TestListTemplatesCompletionAndConnectionErrors(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	out := runOK(t, "instance", "list", "-address", srv.URL, "-t", `{{range .}}{{.Name}}={{.Status}} {{end}}`)
	if out != "web=ACTIVE db=SHUTOFF bad=ERROR " {
		t.Errorf("instance list -t: %q", out)
	}
	out = runOK(t, "host", "list", "-address", srv.URL, "-t", `{{range .}}{{.Name}} {{end}}`)
	if out != "cmp-1 cmp-2 " {
		t.Errorf("host list -t: %q", out)
	}
	if _, errOut, code := run(t, "flavor", "list", "-address", srv.URL, "-t", "{{"); code != 2 || !strings.Contains(errOut, "-t: ") {
		t.Errorf("bad template: exit %d %q", code, errOut)
	}

	bash := runOK(t, "completion", "bash")
	assertContains(t, "bash completion", bash, "complete -o default -F _cloudctl cloudctl", "cloudctl __complete")
	assertContains(t, "zsh completion", runOK(t, "completion", "zsh"), "#compdef cloudctl", "compdef _cloudctl cloudctl")
	if _, _, code := run(t, "completion", "fish"); code != 2 {
		t.Errorf("fish: exit %d", code)
	}
	assertContains(t, "top-level candidates", runOK(t, "__complete", ""), "instance\n", "host\n", "completion\n", "help\n")
	if out := runOK(t, "__complete", "instance", "pl"); !strings.Contains(out, "plan\n") || strings.Contains(out, "instance\n") {
		t.Errorf("instance candidates: %q", out)
	}
	assertContains(t, "flag candidates", runOK(t, "__complete", "instance", "run", "-"), "-check-index\n", "-var\n", "-var-file\n", "-detach\n")
	if out := runOK(t, "__complete", "instance", "run", "we"); out != "" {
		t.Errorf("file arguments are left to the shell: %q", out)
	}
	if out := runOK(t, "-h"); strings.Contains(out, "__complete") {
		t.Errorf("help lists the hidden command")
	}

	_, errOut, code := run(t, "instance", "list", "-address", "http://127.0.0.1:1")
	if code != 1 || !strings.Contains(errOut, "cannot reach a Stratus agent at http://127.0.0.1:1 (connection refused)") ||
		!strings.Contains(errOut, "-address or CLOUDCTL_ADDR") {
		t.Errorf("connection error: %q", errOut)
	}
}

// lastRequestTo is the last request to method and path.
func lastRequestTo(srv *apitest.Server, method, path string) apitest.Request {
	reqs := srv.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Method == method && reqs[i].Path == path {
			return reqs[i]
		}
	}
	return apitest.Request{}
}
