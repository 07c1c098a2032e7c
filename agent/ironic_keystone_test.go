package agent

import (
	"context"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/virt/ironic"
	"github.com/stratus-cloud/stratus/virt/ironic/ironictest"
)

// TestIronicDriverKeystoneAuth points the ironic driver's Keystone auth
// at a dev agent's Keystone-compatible identity API (as python-ironicclient
// would a real Keystone) and checks every Ironic request carries the
// token it got.
func TestIronicDriverKeystoneAuth(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	keystoneToken(t, a, "admin") // wait until the dev users are seeded
	srv := ironictest.New(t)
	node := srv.AddAvailable(ironictest.NodeSpec{Name: "bm-k", ResourceClass: "baremetal", CPUs: 4, MemoryMB: 4096})
	drv, err := ironic.New(ironic.Config{Endpoint: srv.URL, AuthType: ironic.AuthKeystone, PollInterval: 50 * time.Millisecond,
		Keystone: ironic.KeystoneConfig{AuthURL: a.url("/identity/v3"), Username: "admin", Password: "admin",
			ProjectName: "admin", UserDomainName: "Default", ProjectDomainName: "Default"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hosts, err := drv.Hosts(ctx)
	if err != nil || len(hosts) != 1 || hosts[0] != node {
		t.Fatalf("Hosts = %v, %v; want [%s]", hosts, err, node)
	}
	if toks := srv.Tokens(); len(toks) != 1 || toks[0] == "" {
		t.Errorf("Ironic saw tokens %v, want the one Keystone issued", toks)
	}

	bad, err := ironic.New(ironic.Config{Endpoint: srv.URL, AuthType: ironic.AuthKeystone,
		Keystone: ironic.KeystoneConfig{AuthURL: a.url("/identity/v3"), Username: "admin", Password: "wrong",
			ProjectName: "admin", UserDomainName: "Default", ProjectDomainName: "Default"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bad.Hosts(ctx); err == nil {
		t.Error("Hosts with a wrong password succeeded")
	}
}
