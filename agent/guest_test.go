package agent

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/hypervisors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestGuestCallsForwardToTheHostingAgent drives changePassword and the
// hypervisor uptime with gophercloud against an agent that does not run
// the instance's host: it forwards them to the agent that does, whose
// fake driver receives the password; the password is nowhere in the
// servers' state.
func TestGuestCallsForwardToTheHostingAgent(t *testing.T) {
	t.Parallel()
	srv := testAgent(t, nil)
	zero := 0
	ccfg := &Config{NodeName: "hv-guest", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports:  &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		Client: &ClientConfig{Enabled: true, RetryJoin: []string{srv.GossipAddr()}}}
	if err := ccfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	hv, err := New(ccfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hv.Shutdown() })
	var local, remote string
	waitLong(t, "both hosts up", func() error {
		var out structs.HostListResponse
		if err := srv.rpc.RPC("Host.List", &structs.HostListRequest{}, &out); err != nil {
			return err
		}
		local, remote = "", ""
		for _, h := range out.Hosts {
			switch {
			case !h.Up():
			case h.Name == "test":
				local = h.ID
			default:
				remote = h.ID
			}
		}
		if local == "" || remote == "" {
			return fmt.Errorf("hosts %d, local %q remote %q", len(out.Hosts), local, remote)
		}
		return nil
	})
	if code, _, body := do(t, "POST", srv.url("/v1/hosts/"+local+"/disable"), strings.NewReader(`{}`)); code != http.StatusOK {
		t.Fatalf("disable the server's host: %d %s", code, body)
	}
	waitDevImages(t, srv)
	id := bootActive(t, srv, &structs.InstanceCreateRequest{Name: "pw", FlavorID: "1", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", RequestID: "req-pw"}, func(inst *structs.Instance) error {
		if inst.HostID != remote {
			return fmt.Errorf("on %s, want hv-guest", inst.HostID)
		}
		return nil
	}).ID

	compute := computeClient(t, srv, "2.53")
	const secret = "gopher-s3cret"
	if err := servers.ChangeAdminPassword(t.Context(), compute, id, secret).ExtractErr(); err != nil {
		t.Fatalf("ChangeAdminPassword: %v", err)
	}
	drv, ok := hv.hostDrivers[0].driver.(*fake.Driver)
	if !ok {
		t.Fatalf("hv-guest's driver is %T", hv.hostDrivers[0].driver)
	}
	if got, _ := drv.AdminPassword(id, "root"); got != secret {
		t.Fatalf("the guest's root password is %q, want %q", got, secret)
	}
	// The password went to the hosting agent only, never into state.
	code, _, snap := do(t, "GET", srv.url("/v1/operator/snapshot"), nil)
	if code != http.StatusOK || len(snap) == 0 {
		t.Fatalf("snapshot: %d", code)
	}
	if strings.Contains(string(snap), secret) {
		t.Fatal("the password is in the servers' state")
	}
	// An unknown server is Nova's 404.
	err = servers.ChangeAdminPassword(t.Context(), compute, "00000000-0000-0000-0000-000000000000", "x").ExtractErr()
	if !gophercloud.ResponseCodeIs(err, http.StatusNotFound) {
		t.Fatalf("ChangeAdminPassword of an unknown server: %v", err)
	}

	for _, host := range []string{remote, local} {
		up, err := hypervisors.GetUptime(t.Context(), compute, host).Extract()
		if err != nil {
			t.Fatalf("GetUptime %s: %v", host, err)
		}
		if up.ID != host || up.State != "up" || !strings.Contains(up.Uptime, " up ") ||
			!strings.Contains(up.Uptime, "load average: ") {
			t.Fatalf("GetUptime %s = %+v", host, up)
		}
	}
}
