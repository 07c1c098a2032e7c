package route

import (
	"slices"
	"testing"

	"github.com/stratus-cloud/stratus/policy"
)

func TestSplitCanonical(t *testing.T) {
	for in, want := range map[string][]string{
		"/v%33/proj%65cts/":  {"v3", "projects"},
		"/images/a%2Fb":      {"images", "a%2Fb"},
		"/tags/a%20b":        {"tags", "a%20b"},
		"/tags/a%zz":         {"tags", "a%zz"},
		"/":                  nil,
		"/images/x%3Ay/file": {"images", "x:y", "file"},
	} {
		if got := SplitCanonical(in); !slices.Equal(got, want) {
			t.Errorf("SplitCanonical(%q) = %q, want %q", in, got, want)
		}
	}
	// A parameter matched on the canonical form has the value the
	// client escaped.
	tab := MustTable([]Route[int]{{Pattern: "GET /tags/{tag}", Access: policy.Public}})
	m, err := tab.Match(Request{Method: "GET", Path: SplitCanonical("/tags/a%2Fb%20c%3A")})
	if err != nil || m.Params.Get("tag") != "a/b c:" {
		t.Fatalf("match = %+v, %v", m, err)
	}
}
