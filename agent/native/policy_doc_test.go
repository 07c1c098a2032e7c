package native

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/policy"
)

// renderPolicy is the route table as a Markdown table.
func renderPolicy(table []route.Route[handler]) string {
	var b strings.Builder
	b.WriteString("| route | who may call it |\n| --- | --- |\n")
	for _, rt := range table {
		who := rt.Access.String()
		if strings.Contains(rt.Pattern, " /v1/instances/{id}") && who != "admin" {
			who += ", own project's instances only"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", rt.Pattern, who)
	}
	return b.String()
}

// TestNativePolicyIsDocumented keeps website/policy.md's native table
// equal to the route table, so the policy is reviewed where it is read.
func TestNativePolicyIsDocumented(t *testing.T) {
	table := (&API{}).routes()
	seen := map[string]bool{}
	for _, rt := range table {
		if rt.Access == policy.Unset {
			t.Errorf("route %s has no access level", rt.Pattern)
		}
		if seen[rt.Pattern] {
			t.Errorf("route %s appears twice", rt.Pattern)
		}
		seen[rt.Pattern] = true
	}
	if _, err := route.NewTable(table); err != nil {
		t.Error(err)
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "native-policy", renderPolicy(table)); err != nil {
		t.Error(err)
	}
}
