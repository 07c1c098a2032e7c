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
	specs := a.table.Routes()
	sort.SliceStable(specs, func(i, j int) bool {
		if pi, pj := specs[i].Path(), specs[j].Path(); pi != pj {
			return pi < pj
		}
		return specs[i].Pattern < specs[j].Pattern
	})
	for _, s := range specs {
		rule := "none"
		if s.Policy != "" {
			rule = "`" + s.Policy + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", s.Pattern, versions(s.MinVersion, s.MaxVersion), s.Access, rule)
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
	for _, rt := range a.table.Routes() {
		if rt.Access == policy.Unset {
			t.Errorf("route %s has no access level", rt.Pattern)
		}
		// Only routes open to any token may name no rule: Nova's removed
		// APIs check none.
		if rt.Policy == "" && rt.Access != policy.Public && rt.Access != policy.Authenticated {
			t.Errorf("route %s has a level but no Nova rule to name", rt.Pattern)
		}
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "compute-policy", renderComputePolicy(a)); err != nil {
		t.Error(err)
	}
}
