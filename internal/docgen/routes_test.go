package docgen

import (
	"testing"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

func TestRouteTable(t *testing.T) {
	routes := []route.Route[int]{
		{Pattern: "GET /", Access: policy.Public},
		{Pattern: "GET /{bucket}", Query: "location", Access: policy.Authenticated},
		{Pattern: "DELETE /v3/users/{id}", Access: policy.Admin, Policy: "identity:delete_user"},
	}
	got, err := RouteTable("/x", routes, map[policy.Access]string{policy.Authenticated: "signed"})
	if err != nil {
		t.Fatal(err)
	}
	want := "| route | who may call it | policy rule |\n| --- | --- | --- |\n" +
		"| `GET /x` | public |  |\n" +
		"| `GET /x/{bucket}?location` | signed |  |\n" +
		"| `DELETE /x/v3/users/{id}` | admin | `identity:delete_user` |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := RouteTable("", []route.Route[int]{{Pattern: "GET /"}}, nil); err == nil {
		t.Error("a route without a level was rendered")
	}
}
