package s3

import (
	"path/filepath"
	"testing"

	"github.com/stratus-cloud/stratus/internal/docgen"
	"github.com/stratus-cloud/stratus/policy"
)

// TestS3PolicyIsDocumented keeps website/policy.md's table of this
// API's routes equal to its route table, so the policy is reviewed
// where it is read.
func TestS3PolicyIsDocumented(t *testing.T) {
	table, err := docgen.RouteTable("/s3", (&API{}).routes(), map[policy.Access]string{policy.Authenticated: "a verified SigV4 signature"})
	if err != nil {
		t.Fatal(err)
	}
	if err := docgen.Sync(filepath.Join("..", "..", "website", "policy.md"), "s3-policy", table); err != nil {
		t.Error(err)
	}
}
