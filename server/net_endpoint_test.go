package server

import (
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

var netAdmin = structs.NetCaller{ProjectID: "p-admin", Admin: true}

func netCreate(t testing.TB, s *Server, req *structs.NetWriteRequest) *structs.NetWriteResponse {
	t.Helper()
	var out structs.NetWriteResponse
	if err := s.RPC("Net.Create", req, &out); err != nil {
		t.Fatalf("create %s: %v", req.Kind, err)
	}
	return &out
}

// tenantNetwork creates a network and one subnet of cidr for a project.
func tenantNetwork(t testing.TB, s *Server, project, cidr string) (string, string) {
	t.Helper()
	caller := structs.NetCaller{ProjectID: project}
	n := netCreate(t, s, &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: caller,
		Network: &structs.Network{Name: "net-" + project, AdminStateUp: true, PortSecurityEnabled: true}}).Networks[0]
	sub := netCreate(t, s, &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: caller, Fields: []string{"cidr", "ip_version"},
		Subnet: &structs.Subnet{NetworkID: n.ID, CIDR: cidr, IPVersion: 4, EnableDHCP: true}}).Subnets[0]
	return n.ID, sub.ID
}

// TestIPAMUnderConcurrentPortCreates creates ports on one small subnet
// from many goroutines through every server of a cluster (followers
// forward to the leader): every address is distinct, exhaustion is a
// clear IpAddressGenerationFailure, and deletes release addresses.
func TestIPAMUnderConcurrentPortCreates(t *testing.T) {
	servers := testCluster(t, 3, nil)
	leader := waitForLeader(t, servers...)
	netID, subID := tenantNetwork(t, leader, "p1", "10.20.0.0/27") // .2-.30: 29 addresses
	const workers = 40
	var mu sync.Mutex
	var ports []*structs.Port
	var failures []error
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var out structs.NetWriteResponse
			err := servers[i%len(servers)].RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindPort,
				Caller: structs.NetCaller{ProjectID: "p1"}, Port: &structs.Port{NetworkID: netID, AdminStateUp: true,
					Name: fmt.Sprintf("w%d", i)}}, &out)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures = append(failures, err)
				return
			}
			ports = append(ports, out.Ports[0])
		}(i)
	}
	wg.Wait()
	if len(ports) != 29 || len(failures) != workers-29 {
		t.Fatalf("%d ports, %d failures (%v)", len(ports), len(failures), failures)
	}
	for _, err := range failures {
		if structs.KindOf(err) != structs.KindConflict || structs.ErrorType(err) != structs.ErrIPAddressGenerationFailure ||
			structs.Message(err) != "No more IP addresses available on network "+netID+"." {
			t.Fatalf("exhaustion error: %v", err)
		}
	}
	seen := map[string]string{}
	macs := map[string]bool{}
	for _, p := range ports {
		if len(p.FixedIPs) != 1 || p.FixedIPs[0].SubnetID != subID {
			t.Fatalf("port %s ips %+v", p.ID, p.FixedIPs)
		}
		ip := p.FixedIPs[0].IPAddress
		if other, dup := seen[ip]; dup {
			t.Fatalf("%s given to %s and %s", ip, other, p.ID)
		}
		seen[ip] = p.ID
		if macs[p.MACAddress] || p.MACAddress[:9] != "fa:16:3e:" {
			t.Fatalf("mac %s", p.MACAddress)
		}
		macs[p.MACAddress] = true
	}
	for i := 2; i <= 30; i++ {
		if seen[fmt.Sprintf("10.20.0.%d", i)] == "" {
			t.Fatalf("10.20.0.%d was never allocated: %v", i, seen)
		}
	}
	// Every server holds the same allocations.
	waitFor(t, "followers caught up", 10_000_000_000, func() error {
		for _, s := range servers {
			got, err := s.fsm.State().PortsOnSubnet(nil, subID)
			if err != nil || len(got) != 29 {
				return fmt.Errorf("%s has %d ports (%v)", s.config.NodeName, len(got), err)
			}
			for _, p := range got {
				if seen[p.FixedIPs[0].IPAddress] != p.ID {
					return fmt.Errorf("%s disagrees on %s", s.config.NodeName, p.FixedIPs[0].IPAddress)
				}
			}
		}
		return nil
	})
	// Deleting five ports releases their addresses to the next creates,
	// lowest first.
	sort.Slice(ports, func(i, j int) bool { return ports[i].ID < ports[j].ID })
	var freed []string
	for _, p := range ports[:5] {
		if err := servers[1].RPC("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindPort, ID: p.ID,
			Caller: structs.NetCaller{ProjectID: "p1"}}, &structs.NetWriteResponse{}); err != nil {
			t.Fatal(err)
		}
		freed = append(freed, p.FixedIPs[0].IPAddress)
	}
	var got []string
	for i := 0; i < 5; i++ {
		p := netCreate(t, servers[2], &structs.NetWriteRequest{Kind: structs.NetKindPort, Caller: structs.NetCaller{ProjectID: "p1"},
			Port: &structs.Port{NetworkID: netID, AdminStateUp: true}}).Ports[0]
		got = append(got, p.FixedIPs[0].IPAddress)
	}
	sortIPs := func(ips []string) {
		sort.Slice(ips, func(i, j int) bool {
			var a, b int
			fmt.Sscanf(ips[i], "10.20.0.%d", &a)
			fmt.Sscanf(ips[j], "10.20.0.%d", &b)
			return a < b
		})
	}
	sortIPs(freed)
	if fmt.Sprint(got) != fmt.Sprint(freed) {
		t.Fatalf("re-allocated %v, freed %v", got, freed)
	}
}

func TestNetPolicy(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	alice := structs.NetCaller{ProjectID: "p-alice"}
	bob := structs.NetCaller{ProjectID: "p-bob"}
	netID, _ := tenantNetwork(t, s, "p-alice", "10.1.0.0/24")
	shared := netCreate(t, s, &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: netAdmin, Fields: []string{"shared"},
		Network: &structs.Network{Name: "shared", Shared: true, AdminStateUp: true, PortSecurityEnabled: true}}).Networks[0]
	netCreate(t, s, &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: netAdmin,
		Subnet: &structs.Subnet{NetworkID: shared.ID, CIDR: "10.2.0.0/24", IPVersion: 4}})

	// Members may not share networks or make them external.
	var out structs.NetWriteResponse
	err := s.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, Caller: alice, Fields: []string{"shared"},
		Network: &structs.Network{Shared: true}}, &out)
	if structs.KindOf(err) != structs.KindPermission || structs.ErrorType(err) != structs.ErrPolicyNotAuthorized {
		t.Fatalf("member shares a network: %v", err)
	}
	// Bob sees the shared network, not Alice's.
	var list structs.NetListResponse
	if err := s.RPC("Net.List", &structs.NetListRequest{Kind: structs.NetKindNetwork, Caller: bob}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Networks) != 1 || list.Networks[0].ID != shared.ID || len(list.SubnetIDs[shared.ID]) != 1 {
		t.Fatalf("bob's networks %+v", list.Networks)
	}
	if err := s.RPC("Net.Get", &structs.NetGetRequest{Kind: structs.NetKindNetwork, ID: netID, Caller: bob}, &list); structs.ErrorType(err) != structs.ErrNetworkNotFound {
		t.Fatalf("bob reads alice's network: %v", err)
	}
	// Bob may put a port on the shared network, with his default group,
	// but may not delete it or add a subnet.
	port := netCreate(t, s, &structs.NetWriteRequest{Kind: structs.NetKindPort, Caller: bob, Port: &structs.Port{NetworkID: shared.ID, AdminStateUp: true}}).Ports[0]
	if len(port.SecurityGroups) != 1 || port.ProjectID != "p-bob" || !port.PortSecurityEnabled {
		t.Fatalf("bob's port %+v", port)
	}
	var groups structs.NetListResponse
	if err := s.RPC("Net.List", &structs.NetListRequest{Kind: structs.NetKindSecurityGroup, Caller: bob}, &groups); err != nil {
		t.Fatal(err)
	}
	if len(groups.SecurityGroups) != 1 || groups.SecurityGroups[0].Name != "default" || groups.SecurityGroups[0].ID != port.SecurityGroups[0] ||
		len(groups.SecurityGroupRules) != 4 {
		t.Fatalf("bob's groups %+v rules %d", groups.SecurityGroups, len(groups.SecurityGroupRules))
	}
	if err := s.RPC("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindNetwork, ID: shared.ID, Caller: bob}, &out); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("bob deletes the shared network: %v", err)
	}
	if err := s.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindSubnet, Caller: bob,
		Subnet: &structs.Subnet{NetworkID: shared.ID, CIDR: "10.3.0.0/24", IPVersion: 4}}, &out); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("bob adds a subnet to the shared network: %v", err)
	}
	if err := s.RPC("Net.Create", &structs.NetWriteRequest{Kind: structs.NetKindPort, Caller: bob, Fields: []string{"fixed_ips"},
		Port: &structs.Port{NetworkID: shared.ID, FixedIPs: []structs.FixedIP{{IPAddress: "10.2.0.50"}}}}, &out); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("bob picks an address on the shared network: %v", err)
	}
	// Alice, owning nothing on it, does not see Bob's port.
	if err := s.RPC("Net.Get", &structs.NetGetRequest{Kind: structs.NetKindPort, ID: port.ID, Caller: alice}, &list); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("alice reads bob's port: %v", err)
	}
	// The default group cannot be deleted by its project.
	if err := s.RPC("Net.Delete", &structs.NetWriteRequest{Kind: structs.NetKindSecurityGroup, ID: port.SecurityGroups[0], Caller: bob}, &out); structs.ErrorType(err) != structs.ErrSecurityGroupCannotRemoveDefault {
		t.Fatalf("delete default group: %v", err)
	}
	// Updates merge the named attributes only.
	var upd structs.NetWriteResponse
	if err := s.RPC("Net.Update", &structs.NetWriteRequest{Kind: structs.NetKindPort, ID: port.ID, Caller: bob, Fields: []string{"name"},
		Port: &structs.Port{Name: "renamed", AdminStateUp: false}}, &upd); err != nil {
		t.Fatal(err)
	}
	if p := upd.Ports[0]; p.Name != "renamed" || !p.AdminStateUp || p.Revision != 2 || p.FixedIPs[0] != port.FixedIPs[0] {
		t.Fatalf("updated port %+v", p)
	}
}
