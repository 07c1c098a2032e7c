package metadata

import (
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/policy"
)

// TestMetadataPolicyIsDocumented keeps website/policy.md's table of this
// API's routes equal to its route table, so the policy is reviewed
// where it is read.
func TestMetadataPolicyIsDocumented(t *testing.T) {
	table, err := docgen.RouteTable("", (&Service{}).routes(), map[policy.Access]string{policy.Authenticated: "the instance the request comes from"})
	if err != nil {
		t.Fatal(err)
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "metadata-policy", table); err != nil {
		t.Error(err)
	}
}
