package native

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/structs"
)

// rpcCall is one call the fake RPC layer received.
type rpcCall struct {
	method string
	args   any
}

// fakeRPC stands in for the servers: it records calls and answers with
// answer, which fills the reply or returns an error. Requests are served
// one at a time (httptest.ResponseRecorder), so it needs no lock.
type fakeRPC struct {
	calls  []rpcCall
	answer func(method string, args, reply any) error
}

func (f *fakeRPC) RPC(method string, args, reply any) error {
	f.calls = append(f.calls, rpcCall{method, args})
	if f.answer == nil {
		return nil
	}
	return f.answer(method, args, reply)
}

func (f *fakeRPC) last(t *testing.T) rpcCall {
	t.Helper()
	if len(f.calls) == 0 {
		t.Fatal("no RPC was made")
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeRPC) count() int { return len(f.calls) }

// bootRoutes returns the API's handler over a fake RPC layer, with ACLs
// off (these tests are about routing and error mapping); no server or
// gossip pool is started.
func bootRoutes(answer func(method string, args, reply any) error) (http.Handler, *fakeRPC) {
	f := &fakeRPC{answer: answer}
	return New(Config{RPC: f, Logger: hclog.NewNullLogger()}).Handler(), f
}

// serve sends one request with the token "tok" and returns the recorder.
func serve(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	var req *http.Request
	if body == "" {
		req = httptest.NewRequest(method, path, nil)
	} else {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
	}
	req.Header.Set("X-Stratus-Token", "tok")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func decodeBody[T any](t *testing.T, rec *httptest.ResponseRecorder) T {
	t.Helper()
	var out T
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	return out
}

func TestBootRoutesCallTheirRPCs(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(nil)
	cases := []struct {
		method, path, body string
		code               int
		rpc                string
		args               any
	}{
		{"GET", "/v1/instances?host=h1&index=7", "", 200, "Instance.List",
			&structs.InstanceListRequest{HostID: "h1", QueryOptions: structs.QueryOptions{MinQueryIndex: 7, AuthToken: "tok"}}},
		{"DELETE", "/v1/instances/i1", "", 200, "Instance.Delete",
			&structs.InstanceDeleteRequest{InstanceIDs: []string{"i1"}, WriteRequest: structs.WriteRequest{AuthToken: "tok"}}},
		{"GET", "/v1/hosts?stale", "", 200, "Host.List",
			&structs.HostListRequest{QueryOptions: structs.QueryOptions{AllowStale: true, AuthToken: "tok"}}},
		{"POST", "/v1/hosts/h1/enable", "", 200, "Host.UpdateEnabled",
			&structs.HostUpdateEnabledRequest{HostID: "h1", Enabled: true, WriteRequest: structs.WriteRequest{AuthToken: "tok"}}},
		{"POST", "/v1/hosts/h1/disable", "", 200, "Host.UpdateEnabled",
			&structs.HostUpdateEnabledRequest{HostID: "h1", WriteRequest: structs.WriteRequest{AuthToken: "tok"}}},
		{"POST", "/v1/hosts/cmp-1/disable", `{"Reason":"maintenance"}`, 200, "Host.UpdateEnabled",
			&structs.HostUpdateEnabledRequest{HostID: "cmp-1", Reason: "maintenance", WriteRequest: structs.WriteRequest{AuthToken: "tok"}}},
		{"GET", "/v1/allocations", "", 200, "Alloc.List",
			&structs.AllocListRequest{QueryOptions: structs.QueryOptions{AuthToken: "tok"}}},
		{"GET", "/v1/evaluations?wait=5s", "", 200, "Eval.List",
			&structs.EvalListRequest{QueryOptions: structs.QueryOptions{MaxQueryTime: 5e9, AuthToken: "tok"}}},
	}
	for _, tc := range cases {
		rec := serve(h, tc.method, tc.path, tc.body)
		if rec.Code != tc.code {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, rec.Code, rec.Body)
			continue
		}
		if c := f.last(t); c.method != tc.rpc || !reflect.DeepEqual(c.args, tc.args) {
			t.Errorf("%s %s: called %s %+v, want %s %+v", tc.method, tc.path, c.method, c.args, tc.rpc, tc.args)
		}
		if rec.Header().Get("X-Stratus-Index") == "" {
			t.Errorf("%s %s: no index header", tc.method, tc.path)
		}
	}
	// Lists are arrays even when empty.
	for _, path := range []string{"/v1/instances", "/v1/hosts", "/v1/allocations", "/v1/evaluations"} {
		if rec := serve(h, "GET", path, ""); strings.TrimSpace(rec.Body.String()) != "[]" {
			t.Errorf("%s: empty list is %q", path, rec.Body)
		}
	}
}

func TestBootRoutesMethodAndPathErrors(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(nil)
	for _, tc := range []struct {
		method, path string
		code         int
		allow        string
	}{
		{"PUT", "/v1/instances/i1/actions", 405, "GET, POST"},
		{"PUT", "/v1/instances", 405, "GET, POST"},
		{"GET", "/v1/hosts/h1/enable", 405, "POST"},
		{"GET", "/v1/instances/i1/nothing", 404, ""},
	} {
		rec := serve(h, tc.method, tc.path, "")
		if rec.Code != tc.code || rec.Header().Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d allow %q, want %d %q", tc.method, tc.path, rec.Code, rec.Header().Get("Allow"), tc.code, tc.allow)
		}
	}
	if f.count() != 0 {
		t.Errorf("unmatched requests made %d RPCs", f.count())
	}
}

func TestInstanceJSONCarriesStatus(t *testing.T) {
	t.Parallel()
	h, _ := bootRoutes(func(method string, args, reply any) error {
		switch out := reply.(type) {
		case *structs.InstanceListResponse:
			out.Index, out.KnownLeader = 12, true
			out.Instances = []*structs.Instance{
				{ID: "i1", Name: "web", VMState: structs.VMStateBuilding, TaskState: structs.TaskScheduling},
				{ID: "i2", Name: "db", VMState: structs.VMStateActive, TaskState: structs.TaskRebootHard, HostID: "h1", PowerState: structs.PowerRunning},
				{ID: "i3", Name: "bad", VMState: structs.VMStateError, Fault: &structs.Fault{Code: 500, Message: "No valid host"}},
			}
		case *structs.SingleInstanceResponse:
			id := args.(*structs.InstanceSpecificRequest).InstanceID
			if id == "gone" {
				return nil
			}
			out.Instance = &structs.Instance{ID: id, VMState: structs.VMStateStopped}
			if id == "placed" {
				out.Allocation = &structs.Allocation{ID: "a1", InstanceID: id, HostID: "h1", DesiredState: structs.AllocDesiredStopped}
			}
		}
		return nil
	})
	rec := serve(h, "GET", "/v1/instances", "")
	if rec.Header().Get("X-Stratus-Index") != "12" || rec.Header().Get("X-Stratus-KnownLeader") != "true" {
		t.Errorf("headers %v", rec.Header())
	}
	list := decodeBody[[]map[string]any](t, rec)
	want := []string{"BUILD", "HARD_REBOOT", "ERROR"}
	for i, inst := range list {
		if inst["Status"] != want[i] || inst["ID"] == nil || inst["VMState"] == nil || inst["CreateIndex"] == nil {
			t.Errorf("instance %d: %v", i, inst)
		}
	}
	if fault := list[2]["Fault"].(map[string]any); fault["Message"] != "No valid host" {
		t.Errorf("fault %v", fault)
	}

	rec = serve(h, "GET", "/v1/instances/placed", "")
	got := decodeBody[map[string]any](t, rec)
	alloc, _ := got["Allocation"].(map[string]any)
	if got["Status"] != "SHUTOFF" || got["ID"] != "placed" || alloc == nil || alloc["DesiredState"] != "stopped" {
		t.Errorf("instance detail %v", got)
	}
	rec = serve(h, "GET", "/v1/instances/unplaced", "")
	if got := decodeBody[map[string]any](t, rec); got["Allocation"] != nil || !strings.Contains(rec.Body.String(), `"Allocation": null`) {
		t.Errorf("unplaced instance %s", rec.Body)
	}
	if rec = serve(h, "GET", "/v1/instances/gone", ""); rec.Code != 404 {
		t.Errorf("empty Instance.Get answer: %d", rec.Code)
	}
}

func TestInstanceCreateBody(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(func(method string, args, reply any) error {
		req := args.(*structs.InstanceCreateRequest)
		out := reply.(*structs.InstanceCreateResponse)
		for range req.Count {
			out.Instances = append(out.Instances, &structs.Instance{Name: req.Name, VMState: structs.VMStateBuilding})
		}
		out.EvalID, out.Index = "e1", 40
		return nil
	})
	rec := serve(h, "POST", "/v1/instances", `{"Name":"web","Flavor":"m1.tiny","Image":"cirros",
		"ImageProperties":{"architecture":"x86_64"},"AZ":"az1","KeyName":"k","Metadata":{"role":"fe"}}`)
	if rec.Code != 200 || rec.Header().Get("X-Stratus-Index") != "40" {
		t.Fatalf("create: %d %s %v", rec.Code, rec.Body, rec.Header())
	}
	want := &structs.InstanceCreateRequest{Name: "web", FlavorID: "m1.tiny", ImageID: "cirros",
		ImageProperties: map[string]string{"architecture": "x86_64"}, AZ: "az1", KeyName: "k",
		Metadata: map[string]string{"role": "fe"}, Count: 1, WriteRequest: structs.WriteRequest{AuthToken: "tok"}}
	// Without an Idempotency-Key header the agent picks a key of its own.
	if got := f.last(t).args.(*structs.InstanceCreateRequest); strings.HasPrefix(got.IdempotencyKey, "stratus-") {
		want.IdempotencyKey = got.IdempotencyKey
	}
	if got := f.last(t).args; !reflect.DeepEqual(got, want) {
		t.Errorf("args %+v\nwant %+v", got, want)
	}
	resp := decodeBody[struct {
		Instances []map[string]any
		EvalID    string
	}](t, rec)
	if resp.EvalID != "e1" || len(resp.Instances) != 1 || resp.Instances[0]["Status"] != "BUILD" {
		t.Errorf("response %s", rec.Body)
	}
	rec = serve(h, "POST", "/v1/instances", `{"Name":"web","Flavor":"1","Count":1000}`)
	if rec.Code != 200 || f.last(t).args.(*structs.InstanceCreateRequest).Count != 1000 {
		t.Errorf("count 1000: %d", rec.Code)
	}

	before := f.count()
	for _, tc := range []struct{ name, body, want string }{
		{"empty body", ``, "request body is empty"},
		{"malformed", `{"Name":`, "not valid"},
		{"not an object", `[1]`, "not valid"},
		{"unknown field", `{"Name":"w","Flavor":"1","Colour":"red"}`, "unknown field"},
		{"wrong type", `{"Name":"w","Flavor":"1","Count":"two"}`, "not valid"},
		{"trailing data", `{"Name":"w","Flavor":"1"} {}`, "after the JSON value"},
		{"count 0", `{"Name":"w","Flavor":"1","Count":0}`, "count must be between 1 and 1000"},
		{"count too big", `{"Name":"w","Flavor":"1","Count":1001}`, "count must be between 1 and 1000"},
		{"no name", `{"Flavor":"1"}`, "name must be 1-255 characters"},
		{"blank name", `{"Name":"  ","Flavor":"1"}`, "name must be"},
		{"no flavor", `{"Name":"w"}`, "flavor is required"},
	} {
		rec := serve(h, "POST", "/v1/instances", tc.body)
		e := decodeBody[ErrorBody](t, rec)
		if rec.Code != 400 || e.Kind != string(structs.KindInvalid) || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s: %d %+v, want 400 %q", tc.name, rec.Code, e, tc.want)
		}
	}
	if n := f.count() - before; n != 0 {
		t.Errorf("bad bodies made %d RPCs", n)
	}
}

func TestInstanceActionMapping(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(func(method string, args, reply any) error {
		reply.(*structs.InstanceTaskResponse).Index = 9
		return nil
	})
	// The original body shape: start, stop, reboot with Hard.
	for _, tc := range []struct{ body, want string }{
		{`{"Action":"start"}`, structs.OpStart},
		{`{"Action":"stop"}`, structs.OpStop},
		{`{"Action":"reboot"}`, structs.OpRebootSoft},
		{`{"Action":"reboot","Hard":false}`, structs.OpRebootSoft},
		{`{"Action":"reboot","Hard":true}`, structs.OpRebootHard},
	} {
		rec := serve(h, "POST", "/v1/instances/i1/actions", tc.body)
		want := &structs.InstanceTaskRequest{InstanceID: "i1", Op: tc.want, Admin: true, WriteRequest: structs.WriteRequest{AuthToken: "tok"},
			IdempotencyKey: agentTaskKey(t, f)}
		if c := f.last(t); rec.Code != 200 || c.method != "Instance.Task" || !reflect.DeepEqual(c.args, want) {
			t.Errorf("%s: %d, called %s %+v", tc.body, rec.Code, c.method, c.args)
		}
		if rec.Header().Get("X-Stratus-Index") != "9" {
			t.Errorf("%s: index %q", tc.body, rec.Header().Get("X-Stratus-Index"))
		}
	}
	before := f.count()
	for _, body := range []string{`{"Action":"stop","Hard":true}`, `{"Action":"dance"}`, `{}`, `{"Action":"start","Force":true}`, ``} {
		if rec := serve(h, "POST", "/v1/instances/i1/actions", body); rec.Code != 400 {
			t.Errorf("%s: %d %s", body, rec.Code, rec.Body)
		}
	}
	if n := f.count() - before; n != 0 {
		t.Errorf("bad actions made %d RPCs", n)
	}
}

func TestBootRoutesMapRPCErrors(t *testing.T) {
	t.Parallel()
	var rpcErr error
	h, _ := bootRoutes(func(string, any, any) error { return rpcErr })
	cases := []struct {
		err        error
		code       int
		kind, text string
	}{
		{structs.Errorf(structs.KindNotFound, `instance "x" not found`), 404, "not found", `instance "x" not found`},
		// The text an *Error leaves after crossing an RPC hop.
		{errors.New(`not found: host "h9" not found`), 404, "not found", `host "h9" not found`},
		{structs.Errorf(structs.KindConflict, "instance is deleting"), 409, "conflict", "instance is deleting"},
		{structs.ErrNoLeader, 503, "no leader", "no cluster leader"},
		{errors.New("boom"), 500, "internal", "boom"},
	}
	routes := [][3]string{
		{"GET", "/v1/instances/x", ""}, {"DELETE", "/v1/instances/x", ""},
		{"POST", "/v1/instances/x/actions", `{"Action":"stop"}`}, {"POST", "/v1/instances", `{"Name":"a","Flavor":"1"}`},
		{"GET", "/v1/hosts/h9", ""}, {"POST", "/v1/hosts/h9/disable", ""}, {"GET", "/v1/evaluations/e", ""},
		{"GET", "/v1/allocations", ""},
	}
	for _, tc := range cases {
		rpcErr = tc.err
		for _, rt := range routes {
			rec := serve(h, rt[0], rt[1], rt[2])
			e := decodeBody[ErrorBody](t, rec)
			if rec.Code != tc.code || e.Kind != tc.kind || e.Error != tc.text {
				t.Errorf("%v on %s %s: %d %+v", tc.err, rt[0], rt[1], rec.Code, e)
			}
		}
	}
}

func TestHostJSONAndAllocFilter(t *testing.T) {
	t.Parallel()
	host := &structs.Host{ID: "h1", Name: "cmp-1", Status: structs.HostStatusUp, Enabled: true,
		Inventories: map[string]*structs.Inventory{
			structs.ResourceVCPU:     {Total: 8, AllocationRatio: 4},
			structs.ResourceMemoryMB: {Total: 16384, Reserved: 512, AllocationRatio: 1},
		},
		Usage: map[string]int64{structs.ResourceVCPU: 3}}
	h, _ := bootRoutes(func(method string, args, reply any) error {
		switch out := reply.(type) {
		case *structs.SingleHostResponse:
			if args.(*structs.HostSpecificRequest).HostID == "cmp-1" {
				out.Host = host
			}
		case *structs.HostListResponse:
			out.Hosts = []*structs.Host{host}
		case *structs.AllocListResponse:
			out.Allocs = []*structs.Allocation{{ID: "a1", HostID: "h1"}, {ID: "a2", HostID: "h2"}, {ID: "a3", HostID: "h1"}}
		case *structs.EvalListResponse:
			out.Evals = []*structs.Evaluation{{ID: "e1", Status: structs.EvalStatusPending}}
		case *structs.SingleEvalResponse:
			out.Eval = &structs.Evaluation{ID: "e1", InstanceIDs: []string{"i1"}}
		}
		return nil
	})
	type capacity struct{ Total, Used, Capacity int64 }
	type hostBody struct {
		ID, Name, Status string
		Enabled          bool
		Capacity         map[string]capacity
	}
	got := decodeBody[hostBody](t, serve(h, "GET", "/v1/hosts/cmp-1", ""))
	want := hostBody{ID: "h1", Name: "cmp-1", Status: "up", Enabled: true, Capacity: map[string]capacity{
		"VCPU": {Total: 8, Used: 3, Capacity: 32}, "MEMORY_MB": {Total: 16384, Capacity: 15872}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("host %+v\nwant %+v", got, want)
	}
	if list := decodeBody[[]hostBody](t, serve(h, "GET", "/v1/hosts", "")); len(list) != 1 || list[0].Capacity["VCPU"].Capacity != 32 {
		t.Errorf("host list %+v", list)
	}
	if rec := serve(h, "GET", "/v1/hosts/nope", ""); rec.Code != 404 {
		t.Errorf("empty Host.Get answer: %d", rec.Code)
	}
	if host.Usage[structs.ResourceMemoryMB] != 0 || len(host.Usage) != 1 {
		t.Errorf("rendering changed the host: %v", host.Usage)
	}

	allocs := decodeBody[[]structs.Allocation](t, serve(h, "GET", "/v1/allocations?host=h1", ""))
	if len(allocs) != 2 || allocs[0].ID != "a1" || allocs[1].ID != "a3" {
		t.Errorf("allocations on h1: %+v", allocs)
	}
	if all := decodeBody[[]structs.Allocation](t, serve(h, "GET", "/v1/allocations", "")); len(all) != 3 {
		t.Errorf("all allocations: %d", len(all))
	}
	if ev := decodeBody[structs.Evaluation](t, serve(h, "GET", "/v1/evaluations/e1", "")); ev.ID != "e1" || len(ev.InstanceIDs) != 1 {
		t.Errorf("eval %+v", ev)
	}
	if evs := decodeBody[[]structs.Evaluation](t, serve(h, "GET", "/v1/evaluations", "")); len(evs) != 1 || evs[0].Status != "pending" {
		t.Errorf("evals %+v", evs)
	}

	for _, tc := range []struct{ path, body string }{
		{"/v1/hosts/h1/enable", `{"Reason":"why"}`},
		{"/v1/hosts/h1/disable", `{"Reason":1}`},
		{"/v1/hosts/h1/disable", `{"Why":"x"}`},
	} {
		if rec := serve(h, "POST", tc.path, tc.body); rec.Code != 400 {
			t.Errorf("%s %s: %d", tc.path, tc.body, rec.Code)
		}
	}
}
