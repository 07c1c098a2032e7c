package route

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/policy"
)

type h = string

func table(t *testing.T, routes ...Route[h]) *Table[h] {
	t.Helper()
	tb, err := NewTable(routes)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func match(t *testing.T, tb *Table[h], method, path string, mv int) (string, Params, error) {
	t.Helper()
	u, err := url.Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tb.Match(Request{Method: method, Path: Split(u.EscapedPath()), Query: u.Query(), Version: mv})
	if err != nil {
		return "", nil, err
	}
	return m.Route.Handle, m.Params, nil
}

func TestMatchPrefersLiteralsAndUnescapesParams(t *testing.T) {
	tb := table(t,
		Route[h]{Pattern: "GET /flavors/{id}", Access: policy.Anyone, Handle: "show"},
		Route[h]{Pattern: "GET /flavors/detail", Access: policy.Anyone, Handle: "detail"},
		Route[h]{Pattern: "GET /flavors", Access: policy.Anyone, Handle: "list"},
		Route[h]{Pattern: "POST /flavors", Access: policy.Admin, Handle: "create"},
		Route[h]{Pattern: "GET /files/{path...}", Access: policy.Public, Handle: "file"},
	)
	for _, c := range []struct{ method, path, want, param string }{
		{"GET", "/flavors/detail", "detail", ""},
		{"GET", "/flavors/42", "show", "42"},
		{"GET", "/flavors/a%2Fb", "show", "a/b"},
		{"GET", "/flavors/", "list", ""},
		{"HEAD", "/flavors", "list", ""},
		{"POST", "/flavors", "create", ""},
		{"GET", "/files/a/b/c", "file", "a/b/c"},
	} {
		got, params, err := match(t, tb, c.method, c.path, 0)
		if err != nil || got != c.want {
			t.Errorf("%s %s = %q, %v; want %q", c.method, c.path, got, err, c.want)
			continue
		}
		if c.param != "" && params.Get("id") != c.param && params.Get("path") != c.param {
			t.Errorf("%s %s params %v, want %q", c.method, c.path, params, c.param)
		}
	}
	if _, _, err := match(t, tb, "GET", "/flavors/1/2", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("deeper path: %v", err)
	}
	if _, _, err := match(t, tb, "GET", "/files", 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("a rest parameter matched nothing: %v", err)
	}
	_, _, err := match(t, tb, "DELETE", "/flavors", 0)
	var na *MethodNotAllowedError
	if !errors.As(err, &na) || na.AllowHeader() != "GET, POST" {
		t.Fatalf("DELETE /flavors: %v", err)
	}
	if !tb.HasFirst("flavors") || tb.HasFirst("servers") {
		t.Fatal("first segments wrong")
	}
}

func TestMatchHonoursMicroversions(t *testing.T) {
	tb := table(t,
		Route[h]{Pattern: "GET /os-hypervisors/{id}", Access: policy.Admin, Handle: "show"},
		Route[h]{Pattern: "GET /os-hypervisors/statistics", MaxVersion: 87, Access: policy.Admin, Handle: "stats"},
		Route[h]{Pattern: "PUT /flavors/{id}", MinVersion: 55, Access: policy.Admin, Handle: "update"},
		Route[h]{Pattern: "GET /flavors/{id}", Access: policy.Anyone, Handle: "flavor"},
	)
	if got, _, _ := match(t, tb, "GET", "/os-hypervisors/statistics", 87); got != "stats" {
		t.Fatalf("2.87 statistics = %q", got)
	}
	// Gone at 2.88, and not taken for a hypervisor named "statistics".
	if _, _, err := match(t, tb, "GET", "/os-hypervisors/statistics", 88); !errors.Is(err, ErrNotFound) {
		t.Fatalf("2.88 statistics: %v", err)
	}
	// HEAD is GET: gone at 2.88 too, not a 405.
	if _, _, err := match(t, tb, "HEAD", "/os-hypervisors/statistics", 88); !errors.Is(err, ErrNotFound) {
		t.Fatalf("2.88 HEAD statistics: %v", err)
	}
	if got, _, _ := match(t, tb, "GET", "/os-hypervisors/h1", 88); got != "show" {
		t.Fatalf("2.88 show = %q", got)
	}
	// A method the path has from 2.55 is a 404 before, not a 405 (Nova's
	// VersionNotFoundForAPIMethod).
	if _, _, err := match(t, tb, "PUT", "/flavors/1", 54); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PUT before 2.55: %v", err)
	}
	if got, _, _ := match(t, tb, "PUT", "/flavors/1", 55); got != "update" {
		t.Fatalf("PUT at 2.55 = %q", got)
	}
}

func TestMatchQueryConditionsAndHead(t *testing.T) {
	tb := table(t,
		Route[h]{Pattern: "POST /{bucket}/{key...}", Access: policy.Authenticated, Handle: "post"},
		Route[h]{Pattern: "POST /{bucket}/{key...}", Query: "uploads", Access: policy.Authenticated, Handle: "create-upload"},
		Route[h]{Pattern: "GET /{bucket}", Access: policy.Authenticated, Handle: "list"},
		Route[h]{Pattern: "HEAD /{bucket}", Access: policy.Authenticated, Handle: "head"},
	)
	if got, p, _ := match(t, tb, "POST", "/b/k/x?uploads", 0); got != "create-upload" || p.Get("key") != "k/x" {
		t.Fatalf("?uploads = %q %v", got, p)
	}
	if got, _, _ := match(t, tb, "POST", "/b/k", 0); got != "post" {
		t.Fatalf("plain post = %q", got)
	}
	if got, _, _ := match(t, tb, "HEAD", "/b", 0); got != "head" {
		t.Fatalf("HEAD with its own route = %q", got)
	}
}

func TestNewTableRefusesMistakes(t *testing.T) {
	for _, c := range []struct {
		routes []Route[h]
		want   string
	}{
		{[]Route[h]{{Pattern: "GET /x"}}, "no access level"},
		{[]Route[h]{{Pattern: "/x", Access: policy.Public}}, "METHOD /path"},
		{[]Route[h]{{Pattern: "GET x", Access: policy.Public}}, "METHOD /path"},
		{[]Route[h]{{Pattern: "GET /{a...}/b", Access: policy.Public}}, "last segment"},
		{[]Route[h]{{Pattern: "GET /x", MinVersion: 10, MaxVersion: 5, Access: policy.Public}}, "empty"},
		{[]Route[h]{{Pattern: "GET /x/{id}", Access: policy.Public}, {Pattern: "GET /x/{id}", Access: policy.Admin}}, "twice"},
		{[]Route[h]{{Pattern: "GET /x", MaxVersion: 20, Access: policy.Public}, {Pattern: "GET /x", MinVersion: 20, Access: policy.Admin}}, "twice"},
	} {
		if _, err := NewTable(c.routes); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.routes, err, c.want)
		}
	}
	if _, err := NewTable([]Route[h]{{Pattern: "GET /x", MaxVersion: 19, Access: policy.Public}, {Pattern: "GET /x", MinVersion: 20, Access: policy.Admin}}); err != nil {
		t.Errorf("disjoint versions refused: %v", err)
	}
}
