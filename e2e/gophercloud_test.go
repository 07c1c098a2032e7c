package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/hypervisors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/instanceactions"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/limits"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/migrations"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/services"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/usage"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/pagination"
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

	// Usage (os-simple-tenant-usage): every project's for the admin,
	// paged from 2.40.
	usageStart := time.Now().Add(-time.Hour)
	usagePages, err := usage.AllTenants(compute, usage.AllTenantsOpts{Detailed: true, Start: &usageStart}).AllPages(ctx)
	if err != nil {
		t.Fatalf("usage of all projects: %v", err)
	}
	tenants, err := usage.ExtractAllTenants(usagePages)
	if err != nil || len(tenants) != 1 || len(tenants[0].ServerUsages) != 1 || tenants[0].ServerUsages[0].InstanceID != srv.ID ||
		tenants[0].ServerUsages[0].State != "active" || tenants[0].ServerUsages[0].Flavor != "m1.tiny" || tenants[0].TotalHours <= 0 {
		t.Fatalf("usage of all projects: %+v %v", tenants, err)
	}
	adminProject := tenants[0].TenantID
	compute240 := *compute
	compute240.Microversion = "2.40"
	pageCount := 0
	err = usage.AllTenants(&compute240, usage.AllTenantsOpts{Detailed: true, Start: &usageStart, Limit: 1}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		pageCount++
		return true, nil
	})
	if err != nil || pageCount != 1 {
		t.Fatalf("usage pages at 2.40: %d %v", pageCount, err)
	}

	// A member of another project sees nothing of this one.
	demo, _ := computeClient(t, ctx, dev.http, "demo")
	if _, err := servers.Get(ctx, demo, srv.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("demo reading admin's server: %v", err)
	}
	if _, err := hypervisors.List(demo, nil).AllPages(ctx); !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Fatalf("demo listing hypervisors: %v", err)
	}
	if _, err := usage.AllTenants(demo, nil).AllPages(ctx); !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Fatalf("demo listing every project's usage: %v", err)
	}
	noop := func(context.Context, pagination.Page) (bool, error) { return true, nil }
	if err := usage.SingleTenant(demo, adminProject, nil).EachPage(ctx, noop); !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Fatalf("demo reading the admin project's usage: %v", err)
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
	// The deleted server's usage stays, terminated. (A project's usage is
	// an object, so its pages are read one by one.)
	var one *usage.TenantUsage
	err = usage.SingleTenant(compute, adminProject, usage.SingleTenantOpts{Start: &usageStart}).EachPage(ctx, func(_ context.Context, p pagination.Page) (bool, error) {
		var err error
		one, err = usage.ExtractSingleTenant(p)
		return false, err
	})
	if err != nil || one == nil || len(one.ServerUsages) != 1 || one.ServerUsages[0].State != "terminated" || one.ServerUsages[0].EndedAt.IsZero() ||
		one.ServerUsages[0].StartedAt.IsZero() || one.ServerUsages[0].Hours <= 0 {
		t.Fatalf("usage of the admin project: %+v %v", one, err)
	}
}

// waitServer waits until the server shows status with no task running.
func waitServer(ctx context.Context, t *testing.T, c *gophercloud.ServiceClient, id, status string) *servers.Server {
	t.Helper()
	var s *servers.Server
	eventually(t, id+" "+status, 90*time.Second, func() error {
		var err error
		if s, err = servers.Get(ctx, c, id).Extract(); err != nil {
			return err
		}
		if s.Status == "ERROR" && status != "ERROR" {
			return fmt.Errorf("server in ERROR: %v", s.Fault)
		}
		if s.Status != status || s.TaskState != "" {
			return fmt.Errorf("status %s task %q", s.Status, s.TaskState)
		}
		return nil
	})
	return s
}

func TestGophercloudServerActions(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dev := startAgent(t, "gcact", "--dev", "--dev-hosts", "1")
	admin, _ := computeClient(t, ctx, dev.http, "admin")
	demo, _ := computeClient(t, ctx, dev.http, "demo")
	eventually(t, "two hypervisors up", 60*time.Second, func() error {
		pages, err := hypervisors.List(admin, nil).AllPages(ctx)
		if err != nil {
			return err
		}
		hvs, err := hypervisors.ExtractHypervisors(pages)
		if err != nil {
			return err
		}
		up := 0
		for _, hv := range hvs {
			if hv.State == "up" {
				up++
			}
		}
		if up != 2 {
			return fmt.Errorf("%d of %d hypervisors up", up, len(hvs))
		}
		return nil
	})

	srv, err := servers.Create(ctx, demo, servers.CreateOpts{Name: "gc-act", ImageRef: "cirros", FlavorRef: "1"}, nil).Extract()
	if err != nil {
		t.Fatalf("server create: %v", err)
	}
	id := srv.ID
	waitServer(ctx, t, demo, id, "ACTIVE")
	step := func(name string, err error, want string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		waitServer(ctx, t, demo, id, want)
	}
	step("pause", servers.Pause(ctx, demo, id).ExtractErr(), "PAUSED")
	step("unpause", servers.Unpause(ctx, demo, id).ExtractErr(), "ACTIVE")
	step("suspend", servers.Suspend(ctx, demo, id).ExtractErr(), "SUSPENDED")
	step("resume", servers.Resume(ctx, demo, id).ExtractErr(), "ACTIVE")

	// A locked server refuses its project's members (409) until unlocked.
	demo273 := *demo
	demo273.Microversion = "2.73"
	step("lock", servers.Lock(ctx, demo, id).ExtractErr(), "ACTIVE")
	if s, err := servers.Get(ctx, &demo273, id).Extract(); err != nil || s.Locked == nil || !*s.Locked {
		t.Fatalf("locked server: %+v %v", s, err)
	}
	if err := servers.Stop(ctx, demo, id).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Fatalf("stop of a locked server: %v", err)
	}
	step("unlock", servers.Unlock(ctx, demo, id).ExtractErr(), "ACTIVE")

	pass, err := servers.Rescue(ctx, demo, id, servers.RescueOpts{}).Extract()
	step("rescue", err, "RESCUE")
	if pass == "" {
		t.Fatal("rescue answered no password")
	}
	step("unrescue", servers.Unrescue(ctx, demo, id).ExtractErr(), "ACTIVE")

	step("resize", servers.Resize(ctx, demo, id, servers.ResizeOpts{FlavorRef: "2"}).ExtractErr(), "VERIFY_RESIZE")
	step("confirm resize", servers.ConfirmResize(ctx, demo, id).ExtractErr(), "ACTIVE")
	if s := waitServer(ctx, t, demo, id, "ACTIVE"); s.Flavor["id"] != "2" {
		t.Fatalf("resized flavor %v", s.Flavor)
	}
	step("resize", servers.Resize(ctx, demo, id, servers.ResizeOpts{FlavorRef: "3"}).ExtractErr(), "VERIFY_RESIZE")
	step("revert resize", servers.RevertResize(ctx, demo, id).ExtractErr(), "ACTIVE")
	if s := waitServer(ctx, t, demo, id, "ACTIVE"); s.Flavor["id"] != "2" {
		t.Fatalf("reverted flavor %v", s.Flavor)
	}

	// Moves are for admins.
	if err := servers.Migrate(ctx, demo, id).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Fatalf("member migrate: %v", err)
	}
	if _, err := migrations.List(demo, nil).AllPages(ctx); !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Fatalf("member os-migrations: %v", err)
	}
	before := waitServer(ctx, t, admin, id, "ACTIVE").Host
	step("migrate", servers.Migrate(ctx, admin, id).ExtractErr(), "VERIFY_RESIZE")
	step("confirm migration", servers.ConfirmResize(ctx, admin, id).ExtractErr(), "ACTIVE")
	after := waitServer(ctx, t, admin, id, "ACTIVE").Host
	if after == before || after == "" {
		t.Fatalf("migrate: host %q, was %q", after, before)
	}
	no := false
	step("live migrate", servers.LiveMigrate(ctx, admin, id, servers.LiveMigrateOpts{BlockMigration: &no, DiskOverCommit: &no}).ExtractErr(), "ACTIVE")
	if back := waitServer(ctx, t, admin, id, "ACTIVE").Host; back != before {
		t.Fatalf("live migrate: host %q, want %q", back, before)
	}

	step("shelve", servers.Shelve(ctx, demo, id).ExtractErr(), "SHELVED_OFFLOADED")
	step("unshelve", servers.Unshelve(ctx, demo, id, servers.UnshelveOpts{}).ExtractErr(), "ACTIVE")

	rebuilt, err := servers.Rebuild(ctx, demo, id, servers.RebuildOpts{ImageRef: "cirros", Name: "gc-act-2"}).Extract()
	if err != nil || rebuilt.Name != "gc-act-2" || rebuilt.AdminPass == "" {
		t.Fatalf("rebuild: %+v %v", rebuilt, err)
	}
	step("rebuild", nil, "ACTIVE")

	pages, err := instanceactions.List(demo, id, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	acts, err := instanceactions.ExtractInstanceActions(pages)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, a := range acts {
		seen[a.Action] = a.RequestID
	}
	for _, want := range []string{"create", "pause", "unpause", "suspend", "resume", "lock", "unlock", "rescue", "unrescue",
		"resize", "confirmResize", "revertResize", "migrate", "live-migration", "shelve", "unshelve", "rebuild"} {
		if seen[want] == "" {
			t.Errorf("no %q instance action in %v", want, seen)
		}
	}
	detail, err := instanceactions.Get(ctx, admin, id, seen["pause"]).Extract()
	if err != nil || detail.Action != "pause" || detail.Events == nil || len(*detail.Events) == 0 || (*detail.Events)[0].Result != "Success" {
		t.Fatalf("pause action: %+v %v", detail, err)
	}

	// migration_type is shown from 2.23.
	admin280 := *admin
	admin280.Microversion = "2.80"
	instanceID := id
	migPages, err := migrations.List(&admin280, migrations.ListOpts{InstanceID: &instanceID}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations.ExtractMigrations(migPages)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, m := range ms {
		types[m.MigrationType]++
		if m.InstanceID != id || m.SourceCompute == "" || m.DestCompute == "" || m.UUID == "" || m.ProjectID == "" {
			t.Errorf("migration %+v", m)
		}
	}
	if types["resize"] != 2 || types["migration"] != 1 || types["live-migration"] != 1 {
		t.Fatalf("migrations by type %v", types)
	}

	if err := servers.Delete(ctx, demo, id).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "server gone", 60*time.Second, func() error {
		_, err := servers.Get(ctx, demo, id).Extract()
		if gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return nil
		}
		return errors.New("still there")
	})
}
