package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/quotasets"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// TestGophercloudAccessIPsLocalDisksAndUserQuotas drives what Terraform
// sends: a server with access IPs and a local root disk from
// block_device_mapping_v2 (a volume destination is Nova's 501 without
// Cinder), an update of the access IPs, and per-user quotas through the
// SDK's client (gophercloud's quotasets has no user_id).
func TestGophercloudAccessIPsLocalDisksAndUserQuotas(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startAgent(t, "gc7b", "--dev")
	admin, _ := computeClient(t, ctx, dev.http, "admin")
	demo, provider := computeClient(t, ctx, dev.http, "demo")

	first, err := servers.Create(ctx, demo, servers.CreateOpts{Name: "gc-access", ImageRef: "cirros", FlavorRef: "1",
		AccessIPv4: "203.0.113.4", AccessIPv6: "2001:db8::4"}, nil).Extract()
	if err != nil {
		t.Fatalf("create with access IPs: %v", err)
	}
	if err := servers.WaitForStatus(ctx, demo, first.ID, "ACTIVE"); err != nil {
		t.Fatal(err)
	}
	got, err := servers.Get(ctx, demo, first.ID).Extract()
	if err != nil || got.AccessIPv4 != "203.0.113.4" || got.AccessIPv6 != "2001:db8::4" {
		t.Fatalf("access IPs %q %q %v", got.AccessIPv4, got.AccessIPv6, err)
	}
	got, err = servers.Update(ctx, demo, first.ID, servers.UpdateOpts{AccessIPv4: "198.51.100.4"}).Extract()
	if err != nil || got.AccessIPv4 != "198.51.100.4" || got.AccessIPv6 != "2001:db8::4" {
		t.Fatalf("updated access IPs %q %q %v", got.AccessIPv4, got.AccessIPv6, err)
	}
	imageID, _ := got.Image["id"].(string)

	// The image as a local root disk, as Terraform's block_device
	// blocks with destination_type = "local" send it.
	local, err := servers.Create(ctx, demo, servers.CreateOpts{Name: "gc-local", ImageRef: imageID, FlavorRef: "1",
		BlockDevice: []servers.BlockDevice{{SourceType: servers.SourceImage, DestinationType: servers.DestinationLocal,
			BootIndex: 0, UUID: imageID, DeleteOnTermination: true}}}, nil).Extract()
	if err != nil {
		t.Fatalf("create with a local block device: %v", err)
	}
	if err := servers.WaitForStatus(ctx, demo, local.ID, "ACTIVE"); err != nil {
		t.Fatal(err)
	}
	// A volume destination boots from a volume made from the image (the
	// dev cloud keeps volumes); it goes again so that the quota below
	// counts two servers.
	fromVolume, err := servers.Create(ctx, demo, servers.CreateOpts{Name: "gc-volume", FlavorRef: "1",
		BlockDevice: []servers.BlockDevice{{SourceType: servers.SourceImage, DestinationType: servers.DestinationVolume,
			BootIndex: 0, UUID: imageID, VolumeSize: 1, DeleteOnTermination: true}}}, nil).Extract()
	if err != nil {
		t.Fatalf("boot from a volume: %v", err)
	}
	if err := servers.WaitForStatus(ctx, demo, fromVolume.ID, "ACTIVE"); err != nil {
		t.Fatal(err)
	}
	if err := servers.Delete(ctx, demo, fromVolume.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	if err := waitGone(ctx, func() error { return servers.Get(ctx, demo, fromVolume.ID).Err }); err != nil {
		t.Fatalf("server booted from a volume not deleted: %v", err)
	}

	// Per-user quotas: the admin limits demo to the two servers it has.
	auth := provider.GetAuthResult().(tokens.CreateResult)
	project, err := auth.ExtractProject()
	if err != nil {
		t.Fatal(err)
	}
	user, err := auth.ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	url := admin.ServiceURL("os-quota-sets", project.ID) + "?user_id=" + user.ID
	var body struct {
		QuotaSet quotasets.QuotaSet `json:"quota_set"`
	}
	if _, err := admin.Put(ctx, url, map[string]any{"quota_set": map[string]any{"instances": 2}}, &body,
		&gophercloud.RequestOpts{OkCodes: []int{200}}); err != nil || body.QuotaSet.Instances != 2 {
		t.Fatalf("set demo's quota: %+v %v", body.QuotaSet, err)
	}
	if _, err := demo.Get(ctx, url, &body, nil); err != nil || body.QuotaSet.Instances != 2 || body.QuotaSet.Cores != 20 {
		t.Fatalf("demo's quota: %+v %v", body.QuotaSet, err)
	}
	_, err = servers.Create(ctx, demo, servers.CreateOpts{Name: "gc-third", ImageRef: "cirros", FlavorRef: "1"}, nil).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusForbidden) {
		t.Fatalf("a third server over demo's quota: %v, want 403", err)
	}
	if _, err := admin.Delete(ctx, url, nil); err != nil {
		t.Fatalf("drop demo's quota: %v", err)
	}
	if q, err := quotasets.Get(ctx, admin, project.ID).Extract(); err != nil || q.Instances != 10 {
		t.Fatalf("project quota %+v %v", q, err)
	}
}
