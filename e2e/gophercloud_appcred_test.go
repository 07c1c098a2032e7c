package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
)

// TestGophercloudApplicationCredentials: a user creates an application
// credential with gophercloud, and gophercloud authenticates with it
// (by id, and by name and user) as Terraform's OpenStack provider does
// with application_credential_id and _secret.
func TestGophercloudApplicationCredentials(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startAgent(t, "gcappcred", "--dev")
	_, provider := computeClient(t, ctx, dev.http, "demo")
	identity, err := openstack.NewIdentityV3(provider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatalf("identity endpoint: %v", err)
	}
	user, err := provider.GetAuthResult().(tokens.CreateResult).ExtractUser()
	if err != nil {
		t.Fatalf("token user: %v", err)
	}
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	ac, err := applicationcredentials.Create(ctx, identity, user.ID, applicationcredentials.CreateOpts{
		Name: "terraform", Description: "for the smoke test", ExpiresAt: &expires,
	}).Extract()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if ac.Secret == "" || ac.Unrestricted || !ac.ExpiresAt.Equal(expires) || len(ac.Roles) != 1 || ac.Roles[0].Name != "member" || ac.ProjectID == "" {
		t.Fatalf("created %+v", ac)
	}
	_, err = applicationcredentials.Create(ctx, identity, user.ID, applicationcredentials.CreateOpts{Name: "terraform"}).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Fatalf("duplicate name: %v", err)
	}
	pages, err := applicationcredentials.List(identity, user.ID, applicationcredentials.ListOpts{Name: "terraform"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := applicationcredentials.ExtractApplicationCredentials(pages)
	if err != nil || len(list) != 1 || list[0].ID != ac.ID || list[0].Secret != "" {
		t.Fatalf("list: %+v %v", list, err)
	}
	got, err := applicationcredentials.Get(ctx, identity, user.ID, ac.ID).Extract()
	if err != nil || got.Name != "terraform" || got.Description != "for the smoke test" {
		t.Fatalf("get: %+v %v", got, err)
	}

	for name, opts := range map[string]gophercloud.AuthOptions{
		"by id": {IdentityEndpoint: dev.http + "/identity/v3", ApplicationCredentialID: ac.ID, ApplicationCredentialSecret: ac.Secret},
		"by name": {IdentityEndpoint: dev.http + "/identity/v3", ApplicationCredentialName: "terraform",
			ApplicationCredentialSecret: ac.Secret, Username: "demo", DomainName: "Default"},
	} {
		p, err := openstack.AuthenticatedClient(ctx, opts)
		if err != nil {
			t.Fatalf("authenticate %s: %v", name, err)
		}
		project, err := p.GetAuthResult().(tokens.CreateResult).ExtractProject()
		if err != nil || project.ID != ac.ProjectID {
			t.Fatalf("%s: token project %+v %v", name, project, err)
		}
		compute, err := openstack.NewComputeV2(p, gophercloud.EndpointOpts{Region: "RegionOne"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := keypairs.List(compute, nil).AllPages(ctx); err != nil {
			t.Fatalf("%s: list key pairs: %v", name, err)
		}
	}

	if err := applicationcredentials.Delete(ctx, identity, user.ID, ac.ID).ExtractErr(); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: dev.http + "/identity/v3",
		ApplicationCredentialID: ac.ID, ApplicationCredentialSecret: ac.Secret})
	if !gophercloud.ResponseCodeIs(err, http.StatusUnauthorized) {
		t.Fatalf("authenticate with a deleted credential: %v", err)
	}
	if _, err := applicationcredentials.Get(ctx, identity, user.ID, ac.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("get a deleted credential: %v", err)
	}
}
