package agent

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/policy"
)

// renderPolicy is the route table as a Markdown table.
func renderPolicy(table []route) string {
	var b strings.Builder
	b.WriteString("| route | who may call it |\n| --- | --- |\n")
	for _, rt := range table {
		who := rt.access.String()
		if strings.Contains(rt.pattern, " /v1/instances/{id}") && who != "admin" {
			who += ", own project's instances only"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", rt.pattern, who)
	}
	return b.String()
}

// TestNativePolicyIsDocumented keeps website/policy.md's native table
// equal to the route table, so the policy is reviewed where it is read.
func TestNativePolicyIsDocumented(t *testing.T) {
	table := (&Agent{}).routeTable()
	seen := map[string]bool{}
	for _, rt := range table {
		if rt.access == policy.Unset {
			t.Errorf("route %s has no access level", rt.pattern)
		}
		if seen[rt.pattern] {
			t.Errorf("route %s appears twice", rt.pattern)
		}
		seen[rt.pattern] = true
	}
	if err := docgen.Sync(filepath.Join("..", "website", "policy.md"), "native-policy", renderPolicy(table)); err != nil {
		t.Error(err)
	}
}
