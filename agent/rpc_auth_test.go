package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// TestBootAndDeleteWithServerSideACLs runs a member's whole boot and
// delete through a client-only agent while the servers enforce their RPC
// rules: the member's token rides every call made for it, the client
// agent's hypervisor agent registers, pulls its allocations and reports
// with its node secret, the Compute API renders the server with the
// agent's own credential, and console output is forwarded to the
// hosting agent. The server's RPC port refuses a call without a
// credential.
func TestBootAndDeleteWithServerSideACLs(t *testing.T) {
	t.Parallel()
	srv := aclAgent(t)
	pool := rpc.NewConnPool(rpc.PoolConfig{})
	t.Cleanup(func() { _ = pool.Shutdown() })
	err := pool.RPC(srv.RPCAddr(), "Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{
		{ID: "x", Name: "x", VCPUs: 1, MemoryMB: 64, RootGB: 1}}}, &structs.FlavorUpsertResponse{})
	if structs.KindOf(err) != structs.KindUnauthenticated {
		t.Fatalf("an RPC without a credential: %v", err)
	}

	// A separate client agent registers its new host with an
	// introduction an operator issued (POST /v1/operator/node-intro).
	adminTok := keystoneToken(t, srv, "admin")
	code, _, body := call(t, "POST", srv.url("/v1/operator/node-intro"), adminTok, `{"TTL": "10m", "HostName": "hv-acl"}`)
	var intro structs.NodeIntroCreateResponse
	if code != http.StatusOK || json.Unmarshal(body, &intro) != nil || intro.Token == "" {
		t.Fatalf("node-intro: %d %s", code, body)
	}
	zero := 0
	ccfg := &Config{NodeName: "hv-acl", DataDir: t.TempDir(), BindAddr: "127.0.0.1",
		Ports:  &PortsConfig{HTTP: &zero, RPC: &zero, Gossip: &zero},
		Client: &ClientConfig{Enabled: true, RetryJoin: []string{srv.GossipAddr()}, IntroToken: intro.Token}}
	if err := ccfg.Finalize(); err != nil {
		t.Fatal(err)
	}
	if !ccfg.ACLEnabled() {
		t.Fatal("a client agent outside dev mode has ACLs off")
	}
	hv, err := New(ccfg, hclog.New(&hclog.LoggerOptions{Name: "hv-acl", Level: hclog.Warn}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hv.Shutdown() })

	admin, demo := keystoneToken(t, srv, "admin"), keystoneToken(t, srv, "demo")
	var local, remote string
	waitLong(t, "both hosts up", func() error {
		var out structs.HostListResponse
		if err := srv.self.RPC("Host.List", &structs.HostListRequest{}, &out); err != nil {
			return err
		}
		local, remote = "", ""
		for _, h := range out.Hosts {
			switch {
			case !h.Up():
			case h.Name == "test":
				local = h.ID
			case h.Name == "hv-acl":
				remote = h.ID
			}
		}
		if local == "" || remote == "" {
			return fmt.Errorf("hosts up: %d", len(out.Hosts))
		}
		return nil
	})
	if code, _, body := call(t, "POST", srv.url("/v1/hosts/"+local+"/disable"), admin, `{}`); code != http.StatusOK {
		t.Fatalf("disable the server's host: %d %s", code, body)
	}
	waitDevImages(t, srv)

	// The member boots through the client agent's Compute API.
	code, out := computeCall(t, hv, "POST", "/servers", demo, "2.37", map[string]any{"server": map[string]any{
		"name": "acl-vm", "flavorRef": "1", "imageRef": devImageID, "networks": "none"}})
	if code != http.StatusAccepted {
		t.Fatalf("boot: %d %v", code, out)
	}
	id, _ := out["server"].(map[string]any)["id"].(string)
	waitLong(t, "the member's server ACTIVE on the client agent's host", func() error {
		code, out := computeCall(t, hv, "GET", "/servers/"+id, demo, "2.37", nil)
		if code != http.StatusOK {
			return fmt.Errorf("show: %d %v", code, out)
		}
		if s, _ := out["server"].(map[string]any)["status"].(string); s != "ACTIVE" {
			return fmt.Errorf("status %s", s)
		}
		return nil
	})
	var got structs.SingleInstanceResponse
	if err := srv.self.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &got); err != nil || got.Instance.HostID != remote {
		t.Fatalf("placed on %q, want the client agent's host %q (%v)", got.Instance.HostID, remote, err)
	}

	// Console output through the server agent, forwarded to hv.
	code, out = computeCall(t, srv, "POST", "/servers/"+id+"/action", demo, "2.37", map[string]any{"os-getConsoleOutput": map[string]any{}})
	if code != http.StatusOK {
		t.Fatalf("console output: %d %v", code, out)
	}
	// Another project's member does not see it; its list is its own.
	code, out = computeCall(t, hv, "GET", "/servers/detail", demo, "2.37", nil)
	if code != http.StatusOK || !strings.Contains(fmt.Sprint(out), id) {
		t.Fatalf("member's list: %d %v", code, out)
	}

	if code, out := computeCall(t, hv, "DELETE", "/servers/"+id, demo, "2.37", nil); code != http.StatusNoContent {
		t.Fatalf("delete: %d %v", code, out)
	}
	waitLong(t, "the server gone", func() error {
		if code, out := computeCall(t, hv, "GET", "/servers/"+id, demo, "2.37", nil); code != http.StatusNotFound {
			return fmt.Errorf("show: %d %v", code, out)
		}
		return nil
	})
}
