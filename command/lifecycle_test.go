package command

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
	"github.com/stratus-cloud/stratus/api/apitest"
)

// stamps are the timestamps of monitor lines; untimed replaces them.
var stamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

func untimed(s string) string { return stamps.ReplaceAllString(s, "T") }

// waitFor waits until the fake received n requests that match.
func waitForRequests(t *testing.T, srv *apitest.Server, n int, match func(r apitest.Request) bool) {
	t.Helper()
	count := func() int {
		c := 0
		for _, r := range srv.Requests() {
			if match(r) {
				c++
			}
		}
		return c
	}
	for deadline := time.Now().Add(10 * time.Second); count() < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d matching requests, got %d", n, count())
		}
	}
}

// blockingInfo matches the monitor's blocking reads of one instance.
func blockingInfo(id string) func(r apitest.Request) bool {
	return func(r apitest.Request) bool {
		return r.Method == "GET" && r.Path == "/v1/instances/"+id && r.Query.Has("index")
	}
}

// lastAction is the newest action of an instance in the fake.
func lastAction(t *testing.T, srv *apitest.Server, id string) *api.InstanceAction {
	t.Helper()
	list := srv.Actions(id)
	if len(list) == 0 {
		t.Fatalf("no action on %s", id)
	}
	return list[0]
}

func TestInstanceOpFollowsToTheEnd(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	srv.BlockQueries(true)
	done := runAsync(t, "instance", "pause", "-address", srv.URL, "web")

	waitForRequests(t, srv, 1, blockingInfo(idWeb))
	act := lastAction(t, srv, idWeb)
	// An agent's report: the action's event on the host.
	srv.UpdateInstance(idWeb, func(i *api.Instance) { i.Task.Step = "agent"; i.UpdatedAt = time.Now().UnixNano() })
	waitForRequests(t, srv, 2, blockingInfo(idWeb))
	srv.FinishAction(idWeb, act.RequestID, "", func(i *api.Instance) { i.Status, i.VMState, i.PowerState = "PAUSED", "paused", api.PowerPaused })
	res := <-done
	want := "" +
		"==> T: Requested pause of instance \"web\" (aaaaaaaa)\n" +
		"    Request ID: " + act.RequestID + "\n" +
		"    T: Event compute_pause_instance started on cmp-1\n" +
		"    T: Status ACTIVE, task pausing (step agent) on cmp-1\n" +
		"    T: Event compute_pause_instance: Success\n" +
		"    T: Status PAUSED on cmp-1\n" +
		"==> T: The pause of instance \"web\" (aaaaaaaa) finished: the instance is PAUSED\n"
	if res.code != 0 || untimed(res.stdout) != want || res.stderr != "" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", res.code, res.stderr, untimed(res.stdout), want)
	}
	if r := srv.Requests()[0]; r.Method != "POST" || string(r.Body) != `{"Action":"pause"}` {
		t.Errorf("first request %s %s %s", r.Method, r.Path, r.Body)
	}
}

func TestInstanceOpFailureExitsNonZero(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	srv.BlockQueries(true)
	done := runAsync(t, "instance", "resize", "-flavor", "m1.small", "-address", srv.URL, "web")
	waitForRequests(t, srv, 1, blockingInfo(idWeb))
	act := lastAction(t, srv, idWeb)
	srv.FinishAction(idWeb, act.RequestID, "No valid host was found. 0/2 hosts: 2 insufficient VCPU", nil)
	res := <-done
	out := untimed(res.stdout)
	assertContains(t, "stdout", out, "==> T: Requested resize of instance \"web\" (aaaaaaaa)\n",
		"    Migration ID: ", "Status ACTIVE, task resize_prep (step schedule) on cmp-1\n",
		"    T: Event conductor_migrate_server: Error: No valid host was found. 0/2 hosts: 2 insufficient VCPU\n",
		"    T: Status ACTIVE on cmp-1\n",
		"==> T: The resize of instance \"web\" (aaaaaaaa) failed: the instance is ACTIVE\n")
	wantErr := "Error: the resize of instance \"web\" (aaaaaaaa) failed: conductor_migrate_server: No valid host was found. 0/2 hosts: 2 insufficient VCPU\n"
	if res.code != 1 || res.stderr != wantErr {
		t.Errorf("exit %d, stderr %q, want %q", res.code, res.stderr, wantErr)
	}
	if b := string(srv.Requests()[0].Body); b != `{"Action":"resize","Flavor":"m1.small"}` {
		t.Errorf("body %s", b)
	}
}

func TestInstanceOpVerifyResizeAndJSON(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	srv.BlockQueries(true)
	done := runAsync(t, "instance", "migrate", "-host", "cmp-2", "-address", srv.URL, "web")
	waitForRequests(t, srv, 1, blockingInfo(idWeb))
	act := lastAction(t, srv, idWeb)
	srv.FinishAction(idWeb, act.RequestID, "", func(i *api.Instance) { i.Status, i.VMState, i.HostID = "VERIFY_RESIZE", "resized", idH2 })
	res := <-done
	assertContains(t, "stdout", untimed(res.stdout), "    T: Status VERIFY_RESIZE on cmp-2\n",
		"finished: the instance is VERIFY_RESIZE\n",
		"    Confirm with \"cloudctl instance confirm-resize aaaaaaaa\" or revert with \"cloudctl instance revert-resize aaaaaaaa\"\n")
	if res.code != 0 || string(srv.Requests()[0].Body) != `{"Action":"migrate","Host":"cmp-2"}` {
		t.Errorf("exit %d, body %s", res.code, srv.Requests()[0].Body)
	}

	// -json prints nothing but the outcome.
	done = runAsync(t, "instance", "confirm-resize", "-json", "-address", srv.URL, "web")
	for deadline := time.Now().Add(10 * time.Second); srv.Actions(idWeb)[0].Action != "confirmResize"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no confirmResize action")
		}
	}
	act = lastAction(t, srv, idWeb)
	srv.FinishAction(idWeb, act.RequestID, "", func(i *api.Instance) { i.Status, i.VMState = "ACTIVE", "active" })
	res = <-done
	var got opResult
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || res.code != 0 {
		t.Fatalf("-json: exit %d, %v, %q %q", res.code, err, res.stdout, res.stderr)
	}
	if got.ID != idWeb || got.Action != "confirmResize" || got.Result != "Success" || got.RequestID != act.RequestID ||
		got.Instance.Status != "ACTIVE" || got.InstanceAction == nil || got.InstanceAction.Events[0].Event != "compute_confirm_resize" {
		t.Errorf("-json result %+v", got)
	}
}

func TestInstanceOpImmediateAndDeleted(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	// Lock applies at once: nothing to wait for.
	out := runOK(t, "instance", "lock", "-reason", "audit", "-address", srv.URL, "web")
	assertContains(t, "lock", untimed(out), "Requested lock of instance \"web\"", "finished: the instance is ACTIVE\n")
	if inst := srv.Instance(idWeb); !inst.Locked || inst.LockedReason != "audit" {
		t.Errorf("not locked: %+v", inst)
	}
	assertContains(t, "status of a locked instance", runOK(t, "instance", "status", "-address", srv.URL, "web"),
		"Locked      = true (by admin: audit)\n")
	runOK(t, "instance", "unlock", "-address", srv.URL, "web")

	// An instance deleted while the operation runs fails it.
	srv.BlockQueries(true)
	done := runAsync(t, "instance", "stop", "-address", srv.URL, "web")
	waitForRequests(t, srv, 1, blockingInfo(idWeb))
	assertContains(t, "status during the stop", runOK(t, "instance", "status", "-address", srv.URL, "web"),
		"Operation   = stop (power, step agent, request "+lastAction(t, srv, idWeb).RequestID+")\n")
	if _, err := srv.Client(t).Instances().Delete(idWeb); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.code != 1 || !strings.Contains(res.stdout, "the instance was deleted\n") ||
		res.stderr != "Error: instance \"web\" (aaaaaaaa) was deleted during its stop\n" {
		t.Errorf("deleted: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

func TestInstanceOpWithoutBlockingQueries(t *testing.T) {
	defer func(p time.Duration) { buildPollPause = p }(buildPollPause)
	buildPollPause = 5 * time.Millisecond
	srv := newServer(t)
	seedBoot(srv)
	done := runAsync(t, "instance", "suspend", "-address", srv.URL, "web")
	waitForRequests(t, srv, 3, blockingInfo(idWeb)) // the fake answers at once: the command polls
	srv.FinishAction(idWeb, lastAction(t, srv, idWeb).RequestID, "", func(i *api.Instance) { i.Status = "SUSPENDED" })
	if res := <-done; res.code != 0 || !strings.Contains(res.stdout, "finished: the instance is SUSPENDED\n") {
		t.Errorf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
}

func TestEveryInstanceOpCommand(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	for _, tc := range []struct {
		args []string
		body string
	}{
		{[]string{"start"}, `{"Action":"start"}`},
		{[]string{"stop"}, `{"Action":"stop"}`},
		{[]string{"reboot"}, `{"Action":"reboot"}`},
		{[]string{"reboot", "-hard"}, `{"Action":"reboot","Hard":true}`},
		{[]string{"pause"}, `{"Action":"pause"}`},
		{[]string{"unpause"}, `{"Action":"unpause"}`},
		{[]string{"suspend"}, `{"Action":"suspend"}`},
		{[]string{"resume"}, `{"Action":"resume"}`},
		{[]string{"lock"}, `{"Action":"lock"}`},
		{[]string{"lock", "-reason", "audit"}, `{"Action":"lock","Reason":"audit"}`},
		{[]string{"unlock"}, `{"Action":"unlock"}`},
		{[]string{"rescue"}, `{"Action":"rescue"}`},
		{[]string{"rescue", "-image", "rescue-img"}, `{"Action":"rescue","Image":"rescue-img"}`},
		{[]string{"unrescue"}, `{"Action":"unrescue"}`},
		{[]string{"rebuild", "-image", "debian"}, `{"Action":"rebuild","Image":"debian"}`},
		{[]string{"resize", "-flavor", "2"}, `{"Action":"resize","Flavor":"2"}`},
		{[]string{"confirm-resize"}, `{"Action":"confirmResize"}`},
		{[]string{"revert-resize"}, `{"Action":"revertResize"}`},
		{[]string{"migrate"}, `{"Action":"migrate"}`},
		{[]string{"live-migrate", "-host", "cmp-2"}, `{"Action":"live-migration","Host":"cmp-2"}`},
		{[]string{"evacuate", "-host", "cmp-2"}, `{"Action":"evacuate","Host":"cmp-2"}`},
		{[]string{"shelve"}, `{"Action":"shelve"}`},
		{[]string{"shelve-offload"}, `{"Action":"shelveOffload"}`},
		{[]string{"unshelve", "-host", "cmp-2"}, `{"Action":"unshelve","Host":"cmp-2"}`},
		{[]string{"restore"}, `{"Action":"restore"}`},
	} {
		args := append([]string{"instance"}, tc.args...)
		out := runOK(t, append(args, "-detach", "-address", srv.URL, "db")...)
		if r := srv.LastRequest(); r.Path != "/v1/instances/"+idDB+"/actions" || string(r.Body) != tc.body {
			t.Errorf("%v: sent %s %s", tc.args, r.Path, r.Body)
		}
		if !strings.HasPrefix(out, "Requested ") || !strings.Contains(out, "(request req-") {
			t.Errorf("%v: %q", tc.args, out)
		}
	}
	for name := range opCommands {
		out := runOK(t, "instance", name, "-h")
		assertContains(t, name+" help", out, "Usage: cloudctl instance "+name+" [options] ID", "-detach", "-json")
	}
	assertContains(t, "instance help", runOK(t, "instance"), "pause", "unpause", "suspend", "resume", "lock", "unlock",
		"rescue", "unrescue", "rebuild", "resize", "confirm-resize", "revert-resize", "migrate", "live-migrate", "evacuate",
		"shelve", "shelve-offload", "unshelve", "restore", "actions", "migrations")

	n := len(srv.Requests())
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"resize", "db"}, "-flavor is required"},
		{[]string{"pause", "-flavor", "1", "db"}, "flag provided but not defined: -flavor"},
		{[]string{"lock", "-host", "h", "db"}, "flag provided but not defined: -host"},
		{[]string{"migrate"}, "takes 1 argument(s), got 0"},
	} {
		_, errOut, code := run(t, append(append([]string{"instance"}, tc.args...), "-address", srv.URL)...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
	if len(srv.Requests()) != n {
		t.Errorf("usage errors sent %d requests", len(srv.Requests())-n)
	}
	srv.Fail("POST", "/v1/instances/"+idDB+"/actions", &api.Error{StatusCode: 409, Kind: api.KindConflict,
		Message: "Cannot 'pause' instance " + idDB + " while it is in vm_state stopped"})
	_, errOut, code := run(t, "instance", "pause", "-address", srv.URL, "db")
	if code != 1 || errOut != "Error requesting pause of instance \"db\": Unexpected response code 409 (conflict: Cannot 'pause' instance "+idDB+" while it is in vm_state stopped)\n" {
		t.Errorf("conflict: exit %d, stderr %q", code, errOut)
	}
}

func TestInstanceDeleteForce(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	out := runOK(t, "instance", "delete", "-force", "-address", srv.URL, "web")
	if r := srv.LastRequest(); out != "Instance \""+idWeb+"\" deleted\n" || r.Method != "DELETE" || r.RawQuery != "force=true" {
		t.Errorf("stdout %q, sent %s %s?%s", out, r.Method, r.Path, r.RawQuery)
	}
	runOK(t, "instance", "delete", "-address", srv.URL, "db")
	if r := srv.LastRequest(); r.RawQuery != "" {
		t.Errorf("plain delete sent ?%s", r.RawQuery)
	}
}

// seedActions records the actions of web: its create and a failed resize.
func seedActions(srv *apitest.Server) {
	srv.AddAction(&api.InstanceAction{RequestID: "req-11111111-aaaa", InstanceID: idWeb, Action: "create", UserID: "admin",
		StartTime: 1700000000e9, UpdatedAt: 1700000005e9, Events: []*api.InstanceActionEvent{
			{Event: "conductor_schedule_and_build_instances", StartTime: 1700000000e9, FinishTime: 1700000001e9, Result: api.EventSuccess},
			{Event: "compute__do_build_and_run_instance", StartTime: 1700000001e9, FinishTime: 1700000005e9, Result: api.EventSuccess, HostID: idH1},
		}})
	srv.AddAction(&api.InstanceAction{RequestID: "req-22222222-bbbb", InstanceID: idWeb, Action: "resize",
		StartTime: 1700000100e9, UpdatedAt: 1700000101e9, Message: "Error", Events: []*api.InstanceActionEvent{
			{Event: "conductor_migrate_server", StartTime: 1700000100e9, FinishTime: 1700000101e9, Result: api.EventError, Details: "No valid host"},
		}})
}

func TestInstanceActionsCommand(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	seedActions(srv)
	out := runOK(t, "instance", "actions", "-address", srv.URL, "web")
	want := "" +
		"Request ID    Action  Started               Updated               Result\n" +
		"req-22222222  resize  2023-11-14T22:15:00Z  2023-11-14T22:15:01Z  Error\n" +
		"req-11111111  create  2023-11-14T22:13:20Z  2023-11-14T22:13:25Z  Success\n" +
		"\nEvents\n" +
		"Request ID    Event                                   Host   Started               Finished              Result   Details\n" +
		"req-22222222  conductor_migrate_server                -      2023-11-14T22:15:00Z  2023-11-14T22:15:01Z  Error    No valid host\n" +
		"req-11111111  conductor_schedule_and_build_instances  -      2023-11-14T22:13:20Z  2023-11-14T22:13:21Z  Success  -\n" +
		"req-11111111  compute__do_build_and_run_instance      cmp-1  2023-11-14T22:13:21Z  2023-11-14T22:13:25Z  Success  -\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	assertContains(t, "-verbose", runOK(t, "instance", "actions", "-verbose", "-address", srv.URL, "web"), "req-22222222-bbbb  resize")

	out = runOK(t, "instance", "actions", "-address", srv.URL, "aaaa", "22222222")
	want = "" +
		"Request ID = req-22222222-bbbb\n" +
		"Instance   = " + idWeb + "\n" +
		"Action     = resize\n" +
		"Result     = Error\n" +
		"Started    = 2023-11-14T22:15:00Z\n" +
		"Updated    = 2023-11-14T22:15:01Z\n" +
		"Project    = -\n" +
		"User       = -\n" +
		"\nEvents\n" +
		"Event                     Host  Started               Finished              Result  Details\n" +
		"conductor_migrate_server  -     2023-11-14T22:15:00Z  2023-11-14T22:15:01Z  Error   No valid host\n"
	if out != want {
		t.Errorf("one action:\n%s\nwant:\n%s", out, want)
	}

	out = runOK(t, "instance", "actions", "-json", "-address", srv.URL, "web")
	var list []*api.InstanceAction
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 2 || list[0].Action != "resize" || len(list[1].Events) != 2 {
		t.Errorf("-json: %v %q", err, out)
	}
	out = runOK(t, "instance", "actions", "-json", "-address", srv.URL, "web", "req-1111")
	var one api.InstanceAction
	if err := json.Unmarshal([]byte(out), &one); err != nil || one.Action != "create" {
		t.Errorf("-json one: %v %q", err, out)
	}

	// A deleted instance's actions are still there.
	if _, err := srv.Client(t).Instances().Delete(idWeb); err != nil {
		t.Fatal(err)
	}
	assertContains(t, "deleted instance", runOK(t, "instance", "actions", "-address", srv.URL, idWeb), "req-22222222  resize")
	if out := runOK(t, "instance", "actions", "-address", srv.URL, "db"); out != "No actions found\n" {
		t.Errorf("no actions: %q", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nope"}, "Error: no instance or actions found for \"nope\"\n"},
		{[]string{idWeb, "req-3"}, "Error reading action \"req-3\" of instance \"" + idWeb + "\": no action \"req-3\"\n"},
		{[]string{idWeb, "req-"}, "matches 2 actions (req-22222222-bbbb, req-11111111-aaaa); use a longer prefix\n"},
	} {
		_, errOut, code := run(t, append([]string{"instance", "actions", "-address", srv.URL}, tc.args...)...)
		if code != 1 || !strings.HasSuffix(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
	}
	if _, _, code := run(t, "instance", "actions", "-address", srv.URL); code != 2 {
		t.Errorf("no argument: exit %d", code)
	}
}

func TestInstanceMigrationsCommand(t *testing.T) {
	srv := newServer(t)
	seedBoot(srv)
	if out := runOK(t, "instance", "migrations", "-address", srv.URL); out != "No migrations found\n" {
		t.Errorf("empty: %q", out)
	}
	srv.AddMigration(&api.Migration{ID: 40, InstanceID: idWeb, Type: api.MigrationTypeResize, Status: api.MigrationFinished,
		SourceHost: "cmp-1", DestHost: "cmp-2", OldFlavorID: "1", NewFlavorID: "2", CreatedAt: 1700000000e9, UpdatedAt: 1700000060e9})
	srv.AddMigration(&api.Migration{ID: 12, InstanceID: idDB, Type: api.MigrationTypeLive, Status: api.MigrationCompleted,
		SourceHost: "cmp-2", DestHost: "cmp-1", OldFlavorID: "2", NewFlavorID: "2", CreatedAt: 1690000000e9, UpdatedAt: 1690000010e9})
	out := runOK(t, "instance", "migrations", "-address", srv.URL)
	want := "" +
		"ID  Instance  Type            Status     Source  Destination  Flavor  Created               Updated\n" +
		"12  bbbbbbbb  live-migration  completed  cmp-2   cmp-1        2       2023-07-22T04:26:40Z  2023-07-22T04:26:50Z\n" +
		"40  aaaaaaaa  resize          finished   cmp-1   cmp-2        1 -> 2  2023-11-14T22:13:20Z  2023-11-14T22:14:20Z\n"
	if out != want {
		t.Errorf("table:\n%s\nwant:\n%s", out, want)
	}
	out = runOK(t, "instance", "migrations", "-address", srv.URL, "-verbose", "web")
	if !strings.Contains(out, "40  "+idWeb+"  resize") || strings.Contains(out, "live-migration") || srv.LastRequest().Query.Get("instance") != idWeb {
		t.Errorf("of web:\n%s", out)
	}
	out = runOK(t, "instance", "migrations", "-json", "-address", srv.URL, "db")
	var list []*api.Migration
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 || list[0].ID != 12 {
		t.Errorf("-json: %v %q", err, out)
	}
	srv.Fail("GET", "/v1/migrations", &api.Error{StatusCode: 503, Kind: api.KindNoLeader, Message: "no cluster leader"})
	if _, errOut, code := run(t, "instance", "migrations", "-address", srv.URL); code != 1 || !strings.HasPrefix(errOut, "Error listing migrations: ") {
		t.Errorf("error: %d %q", code, errOut)
	}
}

func TestHostDrainFollowsUntilComplete(t *testing.T) {
	defer func(d, p time.Duration) { drainWaitTime, buildPollPause = d, p }(drainWaitTime, buildPollPause)
	drainWaitTime, buildPollPause = 200*time.Millisecond, 5*time.Millisecond
	srv := newServer(t)
	seedBoot(srv)
	srv.AddAllocation(&api.Allocation{ID: "a2", InstanceID: idDB, HostID: idH1})
	srv.UpdateInstance(idDB, func(i *api.Instance) { i.TaskState = "" })
	srv.BlockQueries(true)
	done := runAsync(t, "host", "drain", "-reason", "kernel upgrade", "-address", srv.URL, "cmp-1")
	onHost := func(r apitest.Request) bool {
		return r.Method == "GET" && r.Path == "/v1/instances" && r.Query.Get("host") == idH1 && r.Query.Has("index")
	}
	waitForRequests(t, srv, 1, onHost)
	if h := srv.Host(idH1); !h.Draining() || h.DisabledReason != "kernel upgrade" || h.Enabled {
		t.Fatalf("host not draining: %+v", h)
	}
	// The servers live-migrate web away, and db fails.
	srv.UpdateInstance(idWeb, func(i *api.Instance) { i.Status, i.TaskState = "MIGRATING", "migrating" })
	waitForRequests(t, srv, 2, onHost)
	srv.UpdateInstance(idWeb, func(i *api.Instance) { i.Status, i.TaskState, i.HostID = "ACTIVE", "", idH2 })
	srv.DeleteAllocation("a1")
	srv.UpdateInstance(idDB, func(i *api.Instance) { i.Status, i.VMState = "ERROR", "error" })
	waitForRequests(t, srv, 3, onHost)
	// The operator deletes db; the drain completes.
	if _, err := srv.Client(t).Instances().Delete(idDB); err != nil {
		t.Fatal(err)
	}
	srv.UpdateHost(idH1, func(h *api.Host) { h.Drain.Complete, h.Drain.CompletedAt = true, time.Now().UnixNano() })
	res := <-done
	out := untimed(res.stdout)
	assertContains(t, "stdout", out,
		"==> T: Draining host \"cmp-1\" (cccccccc)\n",
		"    T: 2 allocation(s) left on the host\n",
		"    T: Instance \"web\" (aaaaaaaa): ACTIVE\n",
		"    T: Instance \"db\" (bbbbbbbb): SHUTOFF\n",
		"    T: Instance \"web\" (aaaaaaaa): MIGRATING (migrating)\n",
		"    T: Instance \"web\" (aaaaaaaa) left the host: ACTIVE on cmp-2\n",
		"    T: 1 allocation(s) left on the host\n",
		"    T: Instance \"db\" (bbbbbbbb): ERROR\n",
		"    T: Instance \"db\" (bbbbbbbb) is ERROR: a drain does not move it; delete it or move it by hand\n",
		"    T: Instance \"db\" (bbbbbbbb) was deleted\n",
		"    T: 0 allocation(s) left on the host\n",
		"==> T: Host \"cmp-1\" drained: no allocations left\n")
	if res.code != 0 || res.stderr != "" {
		t.Errorf("exit %d, stderr %q\n%s", res.code, res.stderr, out)
	}
	if r := srv.Requests()[1]; r.Path != "/v1/hosts/"+idH1+"/drain" || string(r.Body) != `{"Reason":"kernel upgrade"}` {
		t.Errorf("drain request %s %s", r.Path, r.Body)
	}
	assertContains(t, "host status", runOK(t, "host", "status", "-address", srv.URL, "cmp-1"),
		"Enabled         = false\n", "Drain           = complete since ", "Allocations     = 0\n")
	assertContains(t, "host list", runOK(t, "host", "list", "-address", srv.URL), "cmp-1  up      drained ")
}

func TestHostDrainCancelDetachAndMonitor(t *testing.T) {
	defer func(d, p time.Duration) { drainWaitTime, buildPollPause = d, p }(drainWaitTime, buildPollPause)
	drainWaitTime, buildPollPause = 100*time.Millisecond, 5*time.Millisecond
	srv := newServer(t)
	seedBoot(srv)

	_, errOut, code := run(t, "host", "drain", "-monitor", "-address", srv.URL, "cmp-1")
	if code != 1 || errOut != "Error: host \"cmp-1\" is not draining\n" {
		t.Errorf("-monitor without a drain: exit %d, stderr %q", code, errOut)
	}
	out := runOK(t, "host", "drain", "-detach", "-address", srv.URL, "cmp-1")
	if out != "Host \"cmp-1\" ("+idH1+") is draining; follow it with \"cloudctl host drain -monitor cmp-1\"\n" {
		t.Errorf("-detach: %q", out)
	}
	if h := srv.Host(idH1); !h.Draining() || h.DisabledReason != "draining" {
		t.Errorf("after -detach: %+v", h)
	}
	assertContains(t, "host list", runOK(t, "host", "list", "-address", srv.URL), "cmp-1  up      draining ")
	assertContains(t, "host status", runOK(t, "host", "status", "-address", srv.URL, "cmp-1"), "Drain           = in progress since ")

	// Enabling the host cancels the drain; a monitor sees it.
	done := runAsync(t, "host", "drain", "-monitor", "-address", srv.URL, "cmp-1")
	waitForRequests(t, srv, 2, func(r apitest.Request) bool { return r.Path == "/v1/instances" && r.Query.Get("host") == idH1 })
	out = runOK(t, "host", "enable", "-address", srv.URL, "cmp-1")
	if out != "Host \"cmp-1\" ("+idH1+") enabled\nIts drain was cancelled; instances already moved stay where they are\n" {
		t.Errorf("enable: %q", out)
	}
	res := <-done
	if res.code != 1 || !strings.Contains(res.stdout, "The drain of host \"cmp-1\" was cancelled (the host was enabled)\n") ||
		res.stderr != "Error: the drain of host \"cmp-1\" was cancelled with 1 allocation(s) left\n" {
		t.Errorf("cancelled: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}

	out = runOK(t, "host", "drain", "-detach", "-json", "-address", srv.URL, "cmp-1")
	var h api.Host
	if err := json.Unmarshal([]byte(out), &h); err != nil || !h.Draining() || h.Allocations == nil || *h.Allocations != 1 {
		t.Errorf("-detach -json: %v %q", err, out)
	}
	out = runOK(t, "host", "enable", "-json", "-address", srv.URL, "cmp-1")
	var en hostEnabledResult
	if err := json.Unmarshal([]byte(out), &en); err != nil || !en.DrainCancelled || !en.Enabled {
		t.Errorf("enable -json: %v %q", err, out)
	}
	for _, args := range [][]string{{"-monitor", "-detach", "cmp-1"}, {"-monitor", "-reason", "x", "cmp-1"}, {}} {
		if _, _, code := run(t, append([]string{"host", "drain", "-address", srv.URL}, args...)...); code != 2 {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	if _, errOut, code := run(t, "host", "drain", "-address", srv.URL, "cmp-9"); code != 1 || !strings.HasPrefix(errOut, `Error reading host "cmp-9"`) {
		t.Errorf("missing host: exit %d, stderr %q", code, errOut)
	}
	assertContains(t, "help", runOK(t, "host", "drain", "-h"), "Usage: cloudctl host drain [options] ID_OR_NAME", "-detach", "-monitor", "-reason")
}
