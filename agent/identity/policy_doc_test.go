package identity

import (
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/policy"
)

// TestIdentityPolicyIsDocumented keeps website/policy.md's table of this
// API's routes equal to its route table, so the policy is reviewed
// where it is read.
func TestIdentityPolicyIsDocumented(t *testing.T) {
	table, err := docgen.RouteTable("/identity", (&Service{}).routes(), map[policy.Access]string{policy.Authenticated: "any token, scoped or not"})
	if err != nil {
		t.Fatal(err)
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "identity-policy", table); err != nil {
		t.Error(err)
	}
}
