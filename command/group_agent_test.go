package command

import (
	"strings"
	"testing"
)

// TestInstanceSpecsAgainstDevAgent runs the spec commands against a real
// agent: plan, run (followed to the end), status, a change, history,
// revert and stop -purge.
func TestInstanceSpecsAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	readyDevAgent(t)
	path := writeSpec(t, `
variable "count" {
  type    = number
  default = 2
}
instance "app" {
  count    = var.count
  flavor   = "m1.tiny"
  image    = "cirros"
  metadata = { role = "app" }
  update {
    min_healthy_time = "0s"
  }
}
`)
	out, _, code := run(t, "instance", "plan", path)
	if code != 2 {
		t.Fatalf("plan of a new group: exit %d\n%s", code, out)
	}
	assertContains(t, "plan", out, `+ Instance group "app" (new)`, "+   app-1: create", "+   app-2: create", "Check Index: 0",
		"cloudctl instance run -check-index 0 "+path)

	out = runOK(t, "instance", "run", "-check-index", "0", path)
	assertContains(t, "run", untimed(out), `Registered instance group "app": version 1`, `Instance "app-1" (`,
		`Deployment of instance group "app" version 1 successful: 2 of 2 members healthy`)
	if out, _, code := run(t, "instance", "plan", path); code != 0 || !strings.Contains(out, "no changes") {
		t.Errorf("plan after the run: exit %d\n%s", code, out)
	}

	out = runOK(t, "instance", "status", "app")
	assertContains(t, "status", out, "Name        = app\n", "Deployment  = successful\n", "Healthy     = 2\n", " app-1 ", " app-2 ")
	list := runOK(t, "instance", "list")
	assertContains(t, "list", list, "app-1", "app-2")

	// Scale up and change the metadata in place.
	out = runOK(t, "instance", "run", "-var", "count=3", path)
	assertContains(t, "scale up", untimed(out), `version 2`, `Instance "app-3" (`, "successful: 3 of 3 members healthy")
	if strings.Contains(out, `Instance "app-1" (`) {
		t.Errorf("the run reported a member that did not change:\n%s", out)
	}
	out = runOK(t, "instance", "history", "-p", "app")
	assertContains(t, "history", out, "Version   = 2\n", "~ count: 2 => 3")

	out = runOK(t, "instance", "revert", "app", "1")
	assertContains(t, "revert", untimed(out), `to the spec of version 1: version 3`, `Instance "app-3" (`, "deleted", "successful: 2 of 2 members healthy")

	out = runOK(t, "instance", "stop", "-purge", "app")
	assertContains(t, "stop", untimed(out), `Stopping instance group "app": version 4`, `Instance group "app" purged`)
	if out := runOK(t, "instance", "status"); out != "No instance groups found\n" {
		t.Errorf("groups after the purge: %q", out)
	}
	if out := runOK(t, "instance", "list"); out != "No instances found\n" {
		t.Errorf("instances after the purge: %q", out)
	}
}
