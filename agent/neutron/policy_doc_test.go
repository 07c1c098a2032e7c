package neutron

import (
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/policy"
)

// TestNetworkPolicyIsDocumented keeps website/policy.md's table of this
// API's routes equal to its route table, so the policy is reviewed
// where it is read.
func TestNetworkPolicyIsDocumented(t *testing.T) {
	table, err := docgen.RouteTable("/network", (&API{}).routes(), map[policy.Access]string{})
	if err != nil {
		t.Fatal(err)
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "network-policy", table); err != nil {
		t.Error(err)
	}
}
