package ec2

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

func TestIDsAreStableAndValid(t *testing.T) {
	const uuid = "6a9b7e2c-5d1f-4c3b-9e8a-0f1d2c3b4a50"
	if got := instanceID(uuid); got != "i-6a9b7e2c5d1f4c3b9" {
		t.Fatalf("instance id %q", got)
	}
	if got := imageID(strings.ToUpper(uuid)); got != "ami-6a9b7e2c5d1f4c3b9" {
		t.Fatalf("image id of an upper-case uuid %q", got)
	}
	for id, ok := range map[string]bool{
		"i-6a9b7e2c5d1f4c3b9": true, "i-6a9b7e2c": true, "i-6A9B7E2C5D1F4C3B9": false,
		"i-6a9b7e2c5d1f4c3b": false, "ami-6a9b7e2c5d1f4c3b9": false, "i-": false, "vm-1": false,
	} {
		if validID("i", id) != ok {
			t.Errorf("validID(i, %q) = %v", id, !ok)
		}
	}
}

func TestStateOf(t *testing.T) {
	for _, c := range []struct {
		vm, task string
		want     instanceState
	}{
		{structs.VMStateBuilding, structs.TaskSpawning, statePending},
		{structs.VMStateActive, "", stateRunning},
		{structs.VMStateActive, structs.TaskRebooting, stateRunning},
		{structs.VMStateActive, structs.TaskPoweringOff, stateStopping},
		{structs.VMStateStopped, "", stateStopped},
		{structs.VMStateStopped, structs.TaskPoweringOn, statePending},
		{structs.VMStateActive, structs.TaskDeleting, stateShuttingDown},
		{structs.VMStateStopped, structs.TaskDeleting, stateShuttingDown},
		{structs.VMStateDeleted, "", stateTerminated},
		{structs.VMStateError, "", stateTerminated},
		{structs.VMStatePaused, "", stateStopped},
		{structs.VMStateShelvedOffloaded, "", stateStopped},
	} {
		if got := stateOf(&structs.Instance{VMState: c.vm, TaskState: c.task}); got != c.want {
			t.Errorf("%s/%s: %v, want %v", c.vm, c.task, got, c.want)
		}
	}
}

func TestWildcardAndParams(t *testing.T) {
	for _, c := range []struct {
		pattern, s string
		ok         bool
	}{
		{"web*", "web-1", true}, {"*-1", "web-1", true}, {"w?b", "web", true}, {"w?b", "wb", false},
		{"web", "web-1", false}, {"*", "", true}, {"", "", true},
	} {
		if wildcard(c.pattern, c.s) != c.ok {
			t.Errorf("wildcard(%q, %q) = %v", c.pattern, c.s, !c.ok)
		}
	}
	q := &request{params: url.Values{
		"InstanceId.2": {"b"}, "InstanceId.10": {"c"}, "InstanceId.1": {"a"},
		"Filter.1.Name": {"tag:team"}, "Filter.1.Value.1": {"blue"}, "Filter.1.Value.2": {"red"},
		"Filter.2.Name": {"instance-state-name"}, "Filter.2.Value.1": {"running"},
		"TagSpecification.1.Tag.1.Key": {"Name"}, "TagSpecification.1.Tag.1.Value": {"web"},
	}}
	if got := strings.Join(q.list("InstanceId"), ","); got != "a,b,c" {
		t.Fatalf("list %q", got)
	}
	fs := q.filters()
	if len(fs) != 2 || fs[0].Name != "tag:team" || strings.Join(fs[0].Values, ",") != "blue,red" || fs[1].Values[0] != "running" {
		t.Fatalf("filters %+v", fs)
	}
	if tags := q.tagSet("TagSpecification.1."); len(tags) != 1 || tags["Name"] != "web" {
		t.Fatalf("tags %+v", tags)
	}
	inst := &structs.Instance{ID: "6a9b7e2c-5d1f-4c3b-9e8a-0f1d2c3b4a50", VMState: structs.VMStateActive, Metadata: map[string]string{"team": "red"}}
	if !instanceMatches(inst, fs) {
		t.Fatal("an instance tagged team=red and running does not match")
	}
	inst.VMState = structs.VMStateStopped
	if instanceMatches(inst, fs) {
		t.Fatal("a stopped instance matches instance-state-name=running")
	}
}

// rpcFunc is an RPC answered by a function.
type rpcFunc func(method string, args, reply any) error

func (f rpcFunc) RPC(method string, args, reply any) error { return f(method, args, reply) }

// TestUnsignedAndErrorShape: an unsigned request never reaches the
// servers and gets EC2's error document.
func TestUnsignedAndErrorShape(t *testing.T) {
	api := New(Config{Region: "global", RPC: rpcFunc(func(method string, _, _ any) error {
		t.Errorf("an unsigned request called %s", method)
		return nil
	}), Now: func() time.Time { return time.Unix(0, 0) }})
	srv := httptest.NewServer(api.Handler(MountPath))
	defer srv.Close()
	resp, err := http.PostForm(srv.URL+"/ec2/", url.Values{"Action": {"DescribeInstances"}, "Version": {APIVersion}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc errorResponse
	if err := xml.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusUnauthorized || len(doc.Errors.Error) != 1 || doc.Errors.Error[0].Code != codeAuthFailure || doc.RequestID == "" {
		t.Fatalf("%d %+v", resp.StatusCode, doc)
	}
}
