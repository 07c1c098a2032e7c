package ec2

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/policy"
)

// TestEC2PolicyIsDocumented keeps website/policy.md's table of this
// API's actions equal to its action table, so the policy is reviewed
// where it is read.
func TestEC2PolicyIsDocumented(t *testing.T) {
	var b strings.Builder
	b.WriteString("| action | who may call it |\n| --- | --- |\n")
	for _, ac := range (&API{}).table() {
		if ac.Access == policy.Unset {
			t.Fatalf("action %s has no access level", ac.Name)
		}
		fmt.Fprintf(&b, "| `Action=%s` | %s |\n", ac.Name, ac.Access)
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "ec2-policy", b.String()); err != nil {
		t.Error(err)
	}
}
