package native

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestGroupRoutesCallTheirRPCs: each /v1/groups route makes its RPC with
// the request's fields, and answers its reply.
func TestGroupRoutesCallTheirRPCs(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(func(method string, args, reply any) error {
		switch out := reply.(type) {
		case *structs.InstanceGroupRegisterResponse:
			out.Name, out.Version, out.Changed, out.GroupModifyIndex, out.Index = "web", 2, true, 40, 40
		case *structs.InstanceGroupPlanResponse:
			out.Plan, out.Index = &structs.GroupPlan{Name: "web", CheckIndex: 33}, 33
		case *structs.InstanceGroupVersionsResponse:
			out.Versions = []*structs.InstanceGroupVersion{{Name: "web", Version: 2}, {Name: "web", Version: 1}}
			out.Diffs = map[uint64][]*structs.FieldDiff{2: {{Name: "count", Type: structs.DiffEdited, Old: "1", New: "2"}}}
		case *structs.InstanceGroupResponse:
			out.Group = &structs.InstanceGroup{Name: "web", Version: 2}
			out.Members = []*structs.Instance{{ID: "i1", Name: "web-1", VMState: structs.VMStateActive, InstanceGroup: "web"}}
		}
		return nil
	})
	spec := `{"Spec":{"Name":"web","Count":2,"Flavor":"m1.tiny","Image":"cirros"}`
	cases := []struct {
		method, path, body string
		rpc                string
		args               any
		want               string
	}{
		{"POST", "/v1/groups", spec + `,"EnforceIndex":true,"CheckIndex":33}`, "InstanceGroup.Register",
			&structs.InstanceGroupRegisterRequest{Spec: &structs.InstanceGroupSpec{Name: "web", Count: 2, Flavor: "m1.tiny", Image: "cirros"},
				EnforceIndex: true, CheckIndex: 33, WriteRequest: structs.WriteRequest{AuthToken: "tok"}},
			`"GroupModifyIndex": 40`},
		{"POST", "/v1/groups/web/plan", spec + `}`, "InstanceGroup.Plan",
			&structs.InstanceGroupPlanRequest{Spec: &structs.InstanceGroupSpec{Name: "web", Count: 2, Flavor: "m1.tiny", Image: "cirros"},
				QueryOptions: structs.QueryOptions{AuthToken: "tok"}}, `"CheckIndex": 33`},
		{"GET", "/v1/groups", "", "InstanceGroup.List", &structs.InstanceGroupListRequest{QueryOptions: structs.QueryOptions{AuthToken: "tok"}}, `[]`},
		{"GET", "/v1/groups/web?index=7", "", "InstanceGroup.Get",
			&structs.InstanceGroupSpecificRequest{Name: "web", QueryOptions: structs.QueryOptions{MinQueryIndex: 7, AuthToken: "tok"}}, `"Status": "ACTIVE"`},
		{"GET", "/v1/groups/web/versions", "", "InstanceGroup.Versions",
			&structs.InstanceGroupSpecificRequest{Name: "web", QueryOptions: structs.QueryOptions{AuthToken: "tok"}}, `"Diff": [`},
		{"POST", "/v1/groups/web/stop", `{"Purge":true}`, "InstanceGroup.Stop",
			&structs.InstanceGroupStopRequest{Name: "web", Purge: true, WriteRequest: structs.WriteRequest{AuthToken: "tok"}}, `"Version": 2`},
		{"POST", "/v1/groups/web/revert", `{"Version":1,"EnforceIndex":true,"CheckIndex":40}`, "InstanceGroup.Revert",
			&structs.InstanceGroupRevertRequest{Name: "web", Version: 1, EnforceIndex: true, CheckIndex: 40,
				WriteRequest: structs.WriteRequest{AuthToken: "tok"}}, `"Changed": true`},
	}
	for _, tc := range cases {
		rec := serve(h, tc.method, tc.path, tc.body)
		if rec.Code != 200 {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, rec.Code, rec.Body)
			continue
		}
		call := f.last(t)
		if call.method != tc.rpc || !reflect.DeepEqual(call.args, tc.args) {
			t.Errorf("%s %s: called %s with %+v, want %s with %+v", tc.method, tc.path, call.method, call.args, tc.rpc, tc.args)
		}
		if !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s %s: body %s lacks %s", tc.method, tc.path, rec.Body, tc.want)
		}
	}
}

func TestGroupRoutesRefuseBadBodies(t *testing.T) {
	t.Parallel()
	h, f := bootRoutes(nil)
	for _, tc := range []struct{ method, path, body, want string }{
		{"POST", "/v1/groups", `{}`, "the body needs a Spec"},
		{"POST", "/v1/groups", `{"Spec":{"Name":"web"},"Colour":1}`, "unknown field"},
		{"POST", "/v1/groups/db/plan", `{"Spec":{"Name":"web"}}`, `the spec is for instance group "web", not "db"`},
		{"POST", "/v1/groups/web/revert", `{}`, "the body needs the Version"},
		{"POST", "/v1/groups/web/stop", `{"Purge":"yes"}`, "not valid"},
	} {
		rec := serve(h, tc.method, tc.path, tc.body)
		e := decodeBody[ErrorBody](t, rec)
		if rec.Code != 400 || !strings.Contains(e.Error, tc.want) {
			t.Errorf("%s %s %s: %d %+v, want %q", tc.method, tc.path, tc.body, rec.Code, e, tc.want)
		}
	}
	if f.count() != 0 {
		t.Errorf("bad bodies made %d RPCs", f.count())
	}
}
