package cinder

import (
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/policy"
)

// TestVolumePolicyIsDocumented keeps website/policy.md's table of this
// API's routes equal to its route table.
func TestVolumePolicyIsDocumented(t *testing.T) {
	table, err := docgen.RouteTable("/volume", (&API{}).routes(), map[policy.Access]string{})
	if err != nil {
		t.Fatal(err)
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "volume-policy", table); err != nil {
		t.Error(err)
	}
}
