package nova

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/policy"
)

// versions renders a route's microversion range.
func versions(minV, maxV int) string {
	switch {
	case minV == 0 && maxV == 0:
		return "all"
	case maxV == 0:
		return fmt.Sprintf("2.%d–", minV)
	case minV == 0:
		return fmt.Sprintf("–2.%d", maxV)
	}
	return fmt.Sprintf("2.%d–2.%d", minV, maxV)
}

// renderComputePolicy lists every route and every server action with
// its level and Nova's rule name.
func renderComputePolicy(a *API) string {
	var b strings.Builder
	b.WriteString("| route | microversions | who may call it | Nova rule |\n| --- | --- | --- | --- |\n")
	specs := make([]routeSpec, 0, len(a.routes))
	for _, rt := range a.routes {
		specs = append(specs, rt.routeSpec)
	}
	sort.SliceStable(specs, func(i, j int) bool {
		pi, pj := specs[i].pattern[strings.Index(specs[i].pattern, " ")+1:], specs[j].pattern[strings.Index(specs[j].pattern, " ")+1:]
		if pi != pj {
			return pi < pj
		}
		return specs[i].pattern < specs[j].pattern
	})
	for _, s := range specs {
		fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` |\n", s.pattern, versions(s.minV, s.maxV), s.access, s.policy)
	}
	b.WriteString("\nServer actions (`POST /servers/{server_id}/action`), on top of the route's level:\n\n")
	b.WriteString("| action | who may call it | Nova rule |\n| --- | --- | --- |\n")
	names := make([]string, 0, len(serverActions))
	for name := range serverActions {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		spec := serverActions[name]
		who := policy.Member.String() + ", own project"
		if spec.admin {
			who = policy.Admin.String()
		}
		fmt.Fprintf(&b, "| `%s` | %s | `%s` |\n", name, who, spec.rule)
	}
	return b.String()
}

// TestComputePolicyIsDocumented keeps website/policy.md's Compute API
// table equal to the route table and the server actions.
func TestComputePolicyIsDocumented(t *testing.T) {
	a := New(Config{})
	for _, rt := range a.routes {
		if rt.access == policy.Unset {
			t.Errorf("route %s has no access level", rt.pattern)
		}
		if rt.policy == "" && rt.access != policy.Public {
			t.Errorf("route %s has a level but no Nova rule to name", rt.pattern)
		}
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "compute-policy", renderComputePolicy(a)); err != nil {
		t.Error(err)
	}
}
