package command

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/api"
)

func TestInstanceStatus(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	out := runOK(t, "instance", "status", "-address", srv.URL, idWeb)
	want := "" +
		"ID          = " + idWeb + "\n" +
		"Name        = web\n" +
		"Status      = ACTIVE\n" +
		"VM State    = active\n" +
		"Task State  = -\n" +
		"Power State = RUNNING\n" +
		"Host        = cmp-1\n" +
		"Flavor      = m1.tiny\n" +
		"Image       = cirros\n" +
		"AZ          = nova\n" +
		"Created     = 2023-11-14T22:13:20Z\n" +
		"Fault       = <none>\n" +
		"Attempts    = 0\n" +
		"\nAllocation\n" +
		"ID                 = a1\n" +
		"Desired State      = running\n" +
		"Client State       = running\n" +
		"Client Description = \n" +
		"Power State        = RUNNING\n" +
		"Pending Action     = -\n" +
		"\nMetadata\n" +
		"role = frontend\n"
	if out != want {
		t.Errorf("status:\n%s\nwant:\n%s", out, want)
	}

	// A unique name, or a unique ID prefix, finds the instance too.
	out = runOK(t, "instance", "status", "-address", srv.URL, "bad")
	assertContains(t, "failed instance", out, "ID            = "+idBad+"\n", "Status        = ERROR\n", "Image         = -\n",
		"Host          = -\n", "Fault         = 500: No valid host was found\n",
		"Fault Details = 0/2 hosts: 2 insufficient VCPU\n", "Attempts      = 1\n",
		"\nBuild Attempts\nHost                                  Error\n"+idH2+"  spawn failed: disk\n", "\nAllocation\n<none>\n")
	assertContains(t, "by prefix", runOK(t, "instance", "status", "-address", srv.URL, "bbbbbbbb-"), "Name        = db\n")

	out = runOK(t, "instance", "status", "-address", srv.URL, "-json", "aaaa")
	var inst api.Instance
	if err := json.Unmarshal([]byte(out), &inst); err != nil || inst.ID != idWeb || inst.Allocation == nil || inst.Allocation.ID != "a1" {
		t.Errorf("-json: %v %q", err, out)
	}

	_, errOut, code := run(t, "instance", "status", "-address", srv.URL, "bbbbbbb")
	if code != 1 || errOut != `Error reading instance "bbbbbbb": "bbbbbbb" matches 2 instances (`+idDB+", "+idBad+"); use an ID\n" {
		t.Errorf("ambiguous prefix: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "instance", "status", "-address", srv.URL, "zzz")
	if code != 1 || errOut != `Error reading instance "zzz": Unexpected response code 404 (not found: instance "zzz" not found)`+"\n" {
		t.Errorf("missing: exit %d, stderr %q", code, errOut)
	}
	// Without an argument it lists the instance groups.
	if out := runOK(t, "instance", "status", "-address", srv.URL); out != "No instance groups found\n" {
		t.Errorf("no argument: %q", out)
	}
}

func TestInstanceDelete(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	out, errOut, code := run(t, "instance", "delete", "-address", srv.URL, idWeb, "nope", "db")
	if code != 1 || out != "Instance \""+idWeb+"\" deleted\nInstance \""+idDB+"\" deleted\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	assertContains(t, "stderr", errOut, `Error deleting instance "nope": Unexpected response code 404`)
	if srv.Instance(idWeb) != nil || srv.Instance(idDB) != nil || srv.Instance(idBad) == nil {
		t.Error("wrong instances deleted")
	}
	out = runOK(t, "instance", "delete", "-address", srv.URL, "-json", "bbb")
	var res struct{ Deleted []string }
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Deleted) != 1 || res.Deleted[0] != idBad {
		t.Errorf("-json: %v %q", err, out)
	}
	if _, _, code := run(t, "instance", "delete", "-address", srv.URL); code != 2 {
		t.Errorf("no IDs: exit %d", code)
	}
}

func TestInstanceActionsDetached(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	for _, tc := range []struct {
		args           []string
		id, body, want string
	}{
		{[]string{"start", idDB}, idDB, `{"Action":"start"}`, `Requested start of instance "` + idDB + `"`},
		{[]string{"stop", "web"}, idWeb, `{"Action":"stop"}`, `Requested stop of instance "` + idWeb + `"`},
		{[]string{"reboot", "aaaaaaaa"}, idWeb, `{"Action":"reboot"}`, `Requested reboot of instance "` + idWeb + `"`},
		{[]string{"reboot", "-hard", idWeb}, idWeb, `{"Action":"reboot","Hard":true}`, `Requested hard reboot of instance "` + idWeb + `"`},
	} {
		out := runOK(t, append([]string{"instance"}, append(tc.args, "-detach", "-address", srv.URL)...)...)
		r := srv.LastRequest()
		rid := srv.Actions(tc.id)[0].RequestID
		if out != tc.want+" (request "+rid+")\n" || r.Path != "/v1/instances/"+tc.id+"/actions" || string(r.Body) != tc.body {
			t.Errorf("%v: stdout %q, sent %s %s", tc.args, out, r.Path, r.Body)
		}
	}
	out := runOK(t, "instance", "reboot", "-hard", "-detach", "-json", "-address", srv.URL, "db")
	var res struct {
		ID, Action, RequestID string
		Hard                  bool
		Instance              *api.Instance
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.ID != idDB || res.Action != "reboot" || !res.Hard ||
		res.RequestID == "" || res.Instance == nil || res.Instance.TaskState != "rebooting_hard" {
		t.Errorf("-json: %v %q", err, out)
	}

	_, errOut, code := run(t, "instance", "stop", "-address", srv.URL, "nope")
	if code != 1 || !strings.HasPrefix(errOut, `Error requesting stop of instance "nope": Unexpected response code 404`) {
		t.Errorf("missing: exit %d, stderr %q", code, errOut)
	}
	_, errOut, code = run(t, "instance", "stop", "-hard", "-address", srv.URL, idWeb)
	if code != 2 || !strings.Contains(errOut, "flag provided but not defined: -hard") {
		t.Errorf("stop -hard: exit %d, stderr %q", code, errOut)
	}
	assertContains(t, "reboot help", runOK(t, "instance", "reboot", "-h"), "Usage: cloudctl instance reboot [options] ID", "-hard", "-detach")
}
