package agent

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/utils"
)

// TestGophercloudSeesNovasVersionsAndEmptyIDs: gophercloud's version
// discovery on the compute root finds Nova's two versions, the
// deprecated v2.0 without microversions and v2.1 with them, while the
// v2.1 endpoint still reports its range; a delete with an empty id is a
// 404 (gophercloud's ErrResourceNotFound), not a 405.
func TestGophercloudSeesNovasVersionsAndEmptyIDs(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	compute := computeClient(t, a, "")
	ctx := t.Context()

	versions, err := utils.GetServiceVersions(ctx, compute.ProviderClient, a.url("/compute/"), true)
	if err != nil {
		t.Fatal(err)
	}
	// Without the slash too, with no redirect (novaclient's version-list).
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(a.url("/compute"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"v2.0"`) {
		t.Fatalf("GET /compute: %d %s", resp.StatusCode, body)
	}
	if len(versions) != 2 {
		t.Fatalf("versions %+v", versions)
	}
	v21, v20 := versions[0], versions[1]
	if v21.Major != 2 || v21.Minor != 1 || v21.Status != utils.StatusCurrent || v21.MinMajor != 2 || v21.MinMinor != 1 || v21.MaxMinor < 96 {
		t.Fatalf("v2.1 %+v", v21)
	}
	if v20.Major != 2 || v20.Minor != 0 || v20.Status != utils.StatusDeprecated || v20.MaxMajor != 0 {
		t.Fatalf("v2.0 %+v", v20)
	}
	mv, err := utils.GetSupportedMicroversions(ctx, compute)
	if err != nil || mv.MinMinor != 1 || mv.MaxMinor < 96 {
		t.Fatalf("microversions %+v %v", mv, err)
	}
	v2, err := utils.GetServiceVersions(ctx, compute.ProviderClient, a.url("/compute/v2/"), true)
	if err != nil || len(v2) != 1 || v2[0].Minor != 0 || v2[0].Status != utils.StatusDeprecated {
		t.Fatalf("v2 document %+v %v", v2, err)
	}

	for what, err := range map[string]error{
		"server":  servers.Delete(ctx, compute, "").ExtractErr(),
		"flavor":  flavors.Delete(ctx, compute, "").ExtractErr(),
		"keypair": keypairs.Delete(ctx, compute, "", nil).ExtractErr(),
	} {
		if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			t.Fatalf("delete a %s with an empty id: %v", what, err)
		}
	}
}
