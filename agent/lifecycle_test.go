package agent

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestDevAgentLifecycleOverHTTP drives a real dev agent (a server and a
// fake-driver host): boot, pause and unpause, lock, read the actions.
func TestDevAgentLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	post := func(path, body string) (int, []byte) {
		code, _, b := do(t, "POST", a.url(path), strings.NewReader(body))
		return code, b
	}
	code, b := post("/v1/instances", `{"Name":"web","Flavor":"m1.tiny","Image":"cirros"}`)
	if code != 200 {
		t.Fatalf("create: %d %s", code, b)
	}
	var created struct{ Instances []*structs.Instance }
	if err := json.Unmarshal(b, &created); err != nil || len(created.Instances) != 1 {
		t.Fatalf("create answer %s", b)
	}
	id := created.Instances[0].ID
	status := func(want string) func() error {
		return func() error {
			code, _, b := do(t, "GET", a.url("/v1/instances/"+id), nil)
			var inst instanceJSON
			if err := json.Unmarshal(b, &inst); err != nil || code != 200 {
				return fmt.Errorf("%d %s", code, b)
			}
			if inst.Status == "ERROR" && want != "ERROR" {
				t.Fatalf("waiting for %s: %s", want, b) // the fault says why
			}
			if inst.Status != want || !inst.Stable() {
				return fmt.Errorf("status %s, task %q %+v", inst.Status, inst.TaskState, inst.Task)
			}
			return nil
		}
	}
	waitFor(t, "ACTIVE", status("ACTIVE"))

	code, b = post("/v1/instances/"+id+"/actions", `{"Action":"pause"}`)
	var started struct {
		RequestID string
		Instance  map[string]any
	}
	if err := json.Unmarshal(b, &started); err != nil || code != 200 || !strings.HasPrefix(started.RequestID, "req-") || started.Instance["ID"] != id {
		t.Fatalf("pause: %d %s", code, b)
	}
	waitFor(t, "PAUSED", status("PAUSED"))
	code, _, b = do(t, "GET", a.url("/v1/instances/"+id+"/actions/"+started.RequestID), nil)
	var act structs.InstanceAction
	if err := json.Unmarshal(b, &act); err != nil || code != 200 || act.Action != "pause" || len(act.Events) == 0 ||
		act.Events[len(act.Events)-1].Result != structs.EventSuccess || act.Message != "" {
		t.Errorf("pause action: %d %s", code, b)
	}

	// A second pause is refused by the state rules, with Nova's words.
	code, b = post("/v1/instances/"+id+"/actions", `{"Action":"pause"}`)
	if code != 409 || !strings.Contains(string(b), "vm_state paused") {
		t.Errorf("pause while paused: %d %s", code, b)
	}
	if code, b = post("/v1/instances/"+id+"/actions", `{"Action":"unpause"}`); code != 200 {
		t.Fatalf("unpause: %d %s", code, b)
	}
	waitFor(t, "ACTIVE again", status("ACTIVE"))

	// Lock is immediate; the dev cloud's anonymous caller is its admin,
	// who owns the instance (so Nova's locked_by is "owner"), and the lock
	// does not stop an admin's own operations.
	if code, b = post("/v1/instances/"+id+"/actions", `{"Action":"lock","Reason":"audit"}`); code != 200 {
		t.Fatalf("lock: %d %s", code, b)
	}
	code, _, b = do(t, "GET", a.url("/v1/instances/"+id), nil)
	var inst structs.Instance
	if err := json.Unmarshal(b, &inst); err != nil || !inst.Locked || inst.LockedReason != "audit" || inst.LockedBy != "owner" {
		t.Errorf("locked instance: %d %s", code, b)
	}
	if code, b = post("/v1/instances/"+id+"/actions", `{"Action":"reboot","Hard":true}`); code != 200 {
		t.Errorf("hard reboot of a locked instance: %d %s", code, b)
	}
	waitFor(t, "rebooted", status("ACTIVE"))

	code, _, b = do(t, "GET", a.url("/v1/instances/"+id+"/actions"), nil)
	var acts []*structs.InstanceAction
	if err := json.Unmarshal(b, &acts); err != nil || code != 200 {
		t.Fatalf("actions: %d %s", code, b)
	}
	var names []string
	for _, a := range acts {
		names = append(names, a.Action)
	}
	if want := []string{"reboot", "lock", "unpause", "pause", "create"}; !reflect.DeepEqual(names, want) {
		t.Errorf("actions newest first: %v, want %v", names, want)
	}
	if code, _, b = do(t, "GET", a.url("/v1/migrations?instance="+id), nil); code != 200 || strings.TrimSpace(string(b)) != "[]" {
		t.Errorf("migrations: %d %s", code, b)
	}

	// The one host has its allocation count; draining it cannot finish
	// (there is nowhere to go) but is recorded, and enabling cancels it.
	code, _, b = do(t, "GET", a.url("/v1/hosts"), nil)
	var hosts []*hostJSON
	if err := json.Unmarshal(b, &hosts); err != nil || len(hosts) != 1 {
		t.Fatalf("hosts: %d %s", code, b)
	}
	hostPath := "/v1/hosts/" + hosts[0].ID
	if code, b = post(hostPath+"/drain", `{"Reason":"maintenance"}`); code != 200 {
		t.Fatalf("drain: %d %s", code, b)
	}
	code, _, b = do(t, "GET", a.url(hostPath), nil)
	var h hostJSON
	if err := json.Unmarshal(b, &h); err != nil || h.Drain == nil || h.Enabled || h.DisabledReason != "maintenance" ||
		h.Allocations == nil || *h.Allocations != 1 {
		t.Errorf("draining host: %d %s", code, b)
	}
	if code, b = post(hostPath+"/enable", ``); code != 200 {
		t.Fatalf("enable: %d %s", code, b)
	}
	code, _, b = do(t, "GET", a.url(hostPath), nil)
	h = hostJSON{}
	if err := json.Unmarshal(b, &h); err != nil || h.Drain != nil || !h.Enabled {
		t.Errorf("enabled host: %d %s", code, b)
	}
	if code, b = post(hostPath+"/drain", `{"Reason":7}`); code != 400 {
		t.Errorf("bad drain body: %d %s", code, b)
	}
	if code, b = post("/v1/hosts/nope/drain", ``); code != 404 {
		t.Errorf("drain of an unknown host: %d %s", code, b)
	}
}
