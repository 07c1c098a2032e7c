package e2e

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/hypervisors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/limits"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/services"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// computeClient authenticates like Terraform's OpenStack provider does
// and returns a compute client from the catalog.
func computeClient(t *testing.T, ctx context.Context, base, user string) (*gophercloud.ServiceClient, *gophercloud.ProviderClient) {
	t.Helper()
	var provider *gophercloud.ProviderClient
	eventually(t, "authenticate "+user, 30*time.Second, func() error {
		var err error
		provider, err = openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
			IdentityEndpoint: base + "/identity/v3", Username: user, Password: user,
			TenantName: user, DomainName: "Default",
		})
		return err
	})
	compute, err := openstack.NewComputeV2(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatalf("compute endpoint from the catalog: %v", err)
	}
	return compute, provider
}

func TestGophercloudDrivesTheComputeAPI(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startAgent(t, "gcdev", "--dev")
	compute, provider := computeClient(t, ctx, dev.http, "admin")

	// The token validates through the identity API.
	if _, err := tokens.Get(ctx, &gophercloud.ServiceClient{ProviderClient: provider, Endpoint: dev.http + "/identity/v3/"}, provider.Token()).ExtractToken(); err != nil {
		t.Fatalf("validate token: %v", err)
	}

	pages, err := flavors.ListDetail(compute, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := flavors.ExtractFlavors(pages)
	if err != nil || len(fl) < 5 {
		t.Fatalf("flavors: %d %v", len(fl), err)
	}

	kp, err := keypairs.Create(ctx, compute, keypairs.CreateOpts{Name: "gc"}).Extract()
	if err != nil || kp.PrivateKey == "" {
		t.Fatalf("keypair create: %+v %v", kp, err)
	}
	kpPages, err := keypairs.List(compute, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kps, _ := keypairs.ExtractKeyPairs(kpPages); len(kps) != 1 {
		t.Fatalf("keypairs: %+v", kps)
	}

	srv, err := servers.Create(ctx, compute, servers.CreateOpts{Name: "gc-vm", ImageRef: "cirros", FlavorRef: "1"}, nil).Extract()
	if err != nil {
		t.Fatalf("server create: %v", err)
	}
	if err := servers.WaitForStatus(ctx, compute, srv.ID, "ACTIVE"); err != nil {
		t.Fatalf("wait ACTIVE: %v", err)
	}
	for _, step := range []struct {
		name string
		do   func() error
		want string
	}{
		{"soft reboot", func() error {
			return servers.Reboot(ctx, compute, srv.ID, servers.RebootOpts{Type: servers.SoftReboot}).ExtractErr()
		}, "ACTIVE"},
		{"hard reboot", func() error {
			return servers.Reboot(ctx, compute, srv.ID, servers.RebootOpts{Type: servers.HardReboot}).ExtractErr()
		}, "ACTIVE"},
		{"stop", func() error { return servers.Stop(ctx, compute, srv.ID).ExtractErr() }, "SHUTOFF"},
		{"start", func() error { return servers.Start(ctx, compute, srv.ID).ExtractErr() }, "ACTIVE"},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if err := servers.WaitForStatus(ctx, compute, srv.ID, step.want); err != nil {
			t.Fatalf("%s: wait %s: %v", step.name, step.want, err)
		}
	}
	listed, err := servers.List(compute, servers.ListOpts{Name: "gc-vm"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if all, _ := servers.ExtractServers(listed); len(all) != 1 || all[0].ID != srv.ID {
		t.Fatalf("server list: %+v", all)
	}

	lim, err := limits.Get(ctx, compute, nil).Extract()
	if err != nil || lim.Absolute.MaxTotalInstances == 0 || lim.Absolute.TotalInstancesUsed != 1 {
		t.Fatalf("limits: %+v %v", lim, err)
	}
	if _, err := quotasets.Get(ctx, compute, "admin").Extract(); err != nil {
		// The project name is not its id: look it up through the token.
		t.Logf("quota by name: %v", err)
	}
	hvPages, err := hypervisors.List(compute, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if hvs, err := hypervisors.ExtractHypervisors(hvPages); err != nil || len(hvs) != 1 {
		t.Fatalf("hypervisors: %+v %v", hvs, err)
	}
	svcPages, err := services.List(compute, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if svcs, err := services.ExtractServices(svcPages); err != nil || len(svcs) == 0 {
		t.Fatalf("services: %+v %v", svcs, err)
	}
	azPages, err := availabilityzones.List(compute).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if azs, err := availabilityzones.ExtractAvailabilityZones(azPages); err != nil || len(azs) != 1 || azs[0].ZoneName != "nova" {
		t.Fatalf("zones: %+v %v", azs, err)
	}

	// A member of another project sees nothing of this one.
	demo, _ := computeClient(t, ctx, dev.http, "demo")
	if _, err := servers.Get(ctx, demo, srv.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("demo reading admin's server: %v", err)
	}
	if _, err := hypervisors.List(demo, nil).AllPages(ctx); !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Fatalf("demo listing hypervisors: %v", err)
	}

	if err := servers.Delete(ctx, compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "server gone", 60*time.Second, func() error {
		_, err := servers.Get(ctx, compute, srv.ID).Extract()
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil
		}
		return errors.New("still there")
	})
}
