package e2e

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/applicationcredentials"
	"github.com/gophercloud/gophercloud/v2/openstack/identity/v3/tokens"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/networks"
	"github.com/gophercloud/gophercloud/v2/openstack/networking/v2/subnets"
	"golang.org/x/crypto/ssh"
)

// TestGophercloudTerraformCalls makes, with gophercloud (the library the
// Terraform OpenStack provider is built on), the calls the provider
// makes for TestTofuSmoke's configuration: authenticate with an
// application credential, create a key pair, a network, a subnet and a
// server found by image and flavor names, then delete them in reverse
// order, waiting for each as the provider does. It runs where OpenTofu
// is not built (TestTofuSmoke then skips, outside CI).
func TestGophercloudTerraformCalls(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dev := startAgent(t, "gctf", "--dev")
	_, userProvider := computeClient(t, ctx, dev.http, "demo")
	identity, err := openstack.NewIdentityV3(userProvider, gophercloud.EndpointOpts{Region: "RegionOne"})
	if err != nil {
		t.Fatal(err)
	}
	user, err := userProvider.GetAuthResult().(tokens.CreateResult).ExtractUser()
	if err != nil {
		t.Fatal(err)
	}
	ac, err := applicationcredentials.Create(ctx, identity, user.ID, applicationcredentials.CreateOpts{Name: "terraform-calls"}).Extract()
	if err != nil {
		t.Fatalf("application credential: %v", err)
	}
	provider, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{IdentityEndpoint: dev.http + "/identity/v3",
		ApplicationCredentialID: ac.ID, ApplicationCredentialSecret: ac.Secret})
	if err != nil {
		t.Fatalf("authenticate with the application credential: %v", err)
	}
	eo := gophercloud.EndpointOpts{Region: "RegionOne"}
	compute, err := openstack.NewComputeV2(provider, eo)
	if err != nil {
		t.Fatal(err)
	}
	network, err := openstack.NewNetworkV2(provider, eo)
	if err != nil {
		t.Fatal(err)
	}
	image, err := openstack.NewImageV2(provider, eo)
	if err != nil {
		t.Fatal(err)
	}

	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := keypairs.Create(ctx, compute, keypairs.CreateOpts{Name: "tf-kp",
		PublicKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub)))}).Extract()
	if err != nil {
		t.Fatalf("key pair: %v", err)
	}
	up := true
	net, err := networks.Create(ctx, network, networks.CreateOpts{Name: "tf-net", AdminStateUp: &up}).Extract()
	if err != nil || net.Status != "ACTIVE" {
		t.Fatalf("network: %+v %v", net, err)
	}
	sub, err := subnets.Create(ctx, network, subnets.CreateOpts{Name: "tf-sub", NetworkID: net.ID, CIDR: "192.168.78.0/24",
		IPVersion: gophercloud.IPv4}).Extract()
	if err != nil || sub.GatewayIP != "192.168.78.1" || !sub.EnableDHCP {
		t.Fatalf("subnet: %+v %v", sub, err)
	}
	// image_name and flavor_name: the provider lists and matches names.
	imgPages, err := images.List(image, images.ListOpts{Name: "cirros"}).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	imgs, err := images.ExtractImages(imgPages)
	if err != nil || len(imgs) != 1 {
		t.Fatalf("image cirros: %+v %v", imgs, err)
	}
	flvPages, err := flavors.ListDetail(compute, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	flvs, _ := flavors.ExtractFlavors(flvPages)
	flavorID := ""
	for _, f := range flvs {
		if f.Name == "m1.tiny" {
			flavorID = f.ID
		}
	}
	if flavorID == "" {
		t.Fatalf("no m1.tiny among %+v", flvs)
	}
	srv, err := servers.Create(ctx, compute, keypairs.CreateOptsExt{CreateOptsBuilder: servers.CreateOpts{Name: "tf-vm",
		ImageRef: imgs[0].ID, FlavorRef: flavorID, Networks: []servers.Network{{UUID: net.ID}}}, KeyName: kp.Name}, nil).Extract()
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	s := waitServer(ctx, t, compute, srv.ID, "ACTIVE")
	if addrs := serverAddrs(s, "tf-net"); len(addrs) != 1 || !strings.HasPrefix(addrs[0], "fixed:192.168.78.") || s.KeyName != "tf-kp" {
		t.Fatalf("server %+v (addresses %v)", s, addrs)
	}
	// A subnet with a server on it is not deleted (Neutron's 409).
	if err := subnets.Delete(ctx, network, sub.ID).ExtractErr(); !gophercloud.ResponseCodeIs(err, http.StatusConflict) {
		t.Fatalf("subnet delete under a server: %v", err)
	}

	// Destroy, in the provider's order, each waited for.
	if err := servers.Delete(ctx, compute, srv.ID).ExtractErr(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "server gone", 90*time.Second, func() error {
		if _, err := servers.Get(ctx, compute, srv.ID).Extract(); !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
			return errors.New("server still there")
		}
		return nil
	})
	for _, d := range []struct {
		what string
		del  func() error
	}{
		{"subnet", func() error { return subnets.Delete(ctx, network, sub.ID).ExtractErr() }},
		{"network", func() error { return networks.Delete(ctx, network, net.ID).ExtractErr() }},
		{"key pair", func() error { return keypairs.Delete(ctx, compute, kp.Name, nil).ExtractErr() }},
	} {
		// The server's port goes with it, asynchronously.
		eventually(t, d.what+" deleted", 30*time.Second, d.del)
	}
	_, err = subnets.Get(ctx, network, sub.ID).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("subnet after delete: %v", err)
	}
	_, err = networks.Get(ctx, network, net.ID).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("network after delete: %v", err)
	}
	_, err = keypairs.Get(ctx, compute, kp.Name, nil).Extract()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("key pair after delete: %v", err)
	}
}
