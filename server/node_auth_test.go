package server

import (
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Node secrets of two agents, and one an attacker made up.
var (
	secretA = strings.Repeat("a", 64)
	secretB = strings.Repeat("b", 64)
	forged  = strings.Repeat("f", 64)
)

// registerWithSecret registers a host as its agent does, with an
// introduction for it when ACLs are on.
func registerWithSecret(s *Server, h *structs.Host, secret string) error {
	intro := ""
	if s.aclEnabled() {
		var err error
		if intro, _, err = s.NodeIntroToken(h.Name, time.Minute); err != nil {
			return err
		}
	}
	return s.RPC("Host.Register", &structs.HostRegisterRequest{Host: h, IntroToken: intro,
		WriteRequest: structs.WriteRequest{AuthToken: secret}}, &structs.HostRegisterResponse{})
}

func wantDenied(t *testing.T, what string, err error) {
	t.Helper()
	if structs.KindOf(err) != structs.KindPermission {
		t.Errorf("%s: got %v, want permission denied", what, err)
	}
}

func TestNodeSecretsGuardNodeEndpoints(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	if err := registerWithSecret(s, testHost("h1", 8, 16384), secretA); err != nil {
		t.Fatal(err)
	}
	resp := createInstances(t, s, "web", "m1.small", 1)
	inst := waitSettled(t, s, ids(resp))[resp.Instances[0].ID]
	if inst.HostID != "h1" {
		t.Fatalf("placed on %q", inst.HostID)
	}
	if err := registerWithSecret(s, testHost("h2", 8, 16384), secretB); err != nil {
		t.Fatal(err)
	}
	if h, _ := s.fsm.State().HostByID(nil, "h1"); !structs.NodeSecretMatches(h.SecretHash, secretA) {
		t.Fatalf("host record %+v keeps no hash of its secret", h)
	}
	var one structs.SingleHostResponse
	var all structs.HostListResponse
	if err := s.RPC("Host.Get", &structs.HostSpecificRequest{HostID: "h1"}, &one); err != nil || one.Host.SecretHash != nil {
		t.Fatalf("Host.Get answers the secret's hash: %v", err)
	}
	if err := s.RPC("Host.List", &structs.HostListRequest{}, &all); err != nil || len(all.Hosts) != 2 || all.Hosts[0].SecretHash != nil {
		t.Fatalf("Host.List answers the secret's hash: %v", err)
	}

	// The genuine agent of h1 works.
	q := func(secret string) structs.QueryOptions { return structs.QueryOptions{AuthToken: secret} }
	w := func(secret string) structs.WriteRequest { return structs.WriteRequest{AuthToken: secret} }
	var hostAllocs structs.AllocIndexResponse
	if err := s.RPC("Alloc.GetHostAllocs", &structs.AllocHostRequest{HostID: "h1", QueryOptions: q(secretA)}, &hostAllocs); err != nil || len(hostAllocs.Allocs) != 1 {
		t.Fatalf("own allocations: %v %v", hostAllocs.Allocs, err)
	}
	var allocID string
	for id := range hostAllocs.Allocs {
		allocID = id
	}
	var got structs.AllocListResponse
	if err := s.RPC("Alloc.GetAllocs", &structs.AllocsGetRequest{AllocIDs: []string{allocID}, QueryOptions: q(secretA)}, &got); err != nil || len(got.Allocs) != 1 {
		t.Fatalf("own allocation: %v %v", got.Allocs, err)
	}
	report := func(hostID, secret string) error {
		return s.RPC("Alloc.UpdateFromClient", &structs.AllocUpdateRequest{HostID: hostID, WriteRequest: w(secret),
			Updates: []*structs.AllocClientUpdate{{AllocID: allocID, ClientState: structs.AllocClientSpawning}}}, &structs.GenericResponse{})
	}
	if err := report("h1", secretA); err != nil {
		t.Fatalf("own report: %v", err)
	}
	heartbeat := func(secret string, hosts ...string) error {
		return s.RPC("Host.Heartbeat", &structs.HostHeartbeatRequest{HostIDs: hosts, WriteRequest: w(secret)}, &structs.HostRegisterResponse{})
	}
	if err := heartbeat(secretA, "h1"); err != nil {
		t.Fatalf("own heartbeat: %v", err)
	}

	// h2's secret (stolen from its agent), a forged one and none at all
	// can do nothing about h1.
	for _, secret := range []string{secretB, forged, ""} {
		wantDenied(t, "heartbeat another host", heartbeat(secret, "h1"))
		wantDenied(t, "heartbeat own and another host", heartbeat(secret, "h2", "h1"))
		wantDenied(t, "list another host's allocations", s.RPC("Alloc.GetHostAllocs",
			&structs.AllocHostRequest{HostID: "h1", QueryOptions: q(secret)}, &structs.AllocIndexResponse{}))
		wantDenied(t, "read another host's allocation", s.RPC("Alloc.GetAllocs",
			&structs.AllocsGetRequest{AllocIDs: []string{allocID}, QueryOptions: q(secret)}, &structs.AllocListResponse{}))
		wantDenied(t, "report as another host", report("h1", secret))
		wantDenied(t, "report snapshot progress on another host", s.RPC("Instance.SnapshotProgress",
			&structs.SnapshotProgressRequest{InstanceID: inst.ID, AllocID: allocID, TaskState: structs.TaskImageUploading, WriteRequest: w(secret)},
			&structs.GenericResponse{}))
		wantDenied(t, "report leases of another host", s.RPC("NetLease.Report",
			&structs.NetLeaseReportRequest{HostID: "h1", Full: true, WriteRequest: w(secret)}, &structs.WriteMeta{}))
		wantDenied(t, "re-register another host", registerWithSecret(s, testHost("h1", 64, 65536), secret))
	}
	// With its own secret, h2 still cannot report on h1's allocation.
	wantDenied(t, "report on another host's allocation", report("h2", secretB))
	if err := heartbeat(secretB, "h2"); err != nil {
		t.Fatalf("h2's own heartbeat: %v", err)
	}
	if h, _ := s.fsm.State().HostByID(nil, "h1"); h.Inventories[structs.ResourceVCPU].Total != 8 {
		t.Fatalf("a refused registration changed the host: %+v", h.Inventories[structs.ResourceVCPU])
	}

	// An operator resets a lost secret by deregistering the host.
	if err := s.RPC("Host.ForceDown", &structs.HostForceDownRequest{HostID: "h2", ForcedDown: true}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Host.Deregister", &structs.HostDeregisterRequest{HostID: "h2"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := registerWithSecret(s, testHost("h2", 8, 16384), forged); err != nil {
		t.Fatalf("register after deregistration: %v", err)
	}
	wantDenied(t, "old secret after reset", heartbeat(secretB, "h2"))
}

func TestNodeSecretShortIsInvalid(t *testing.T) {
	t.Parallel()
	s := testServer(t, func(c *Config) { c.NumSchedulers = -1 })
	waitForLeader(t, s)
	if err := registerWithSecret(s, testHost("h1", 8, 16384), "short"); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("short secret: %v", err)
	}
}
