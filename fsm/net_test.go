package fsm

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// netFixture applies networking entries to a fresh FSM.
type netFixture struct {
	t     *testing.T
	f     *FSM
	index uint64
}

func newNetFixture(t *testing.T) *netFixture { return &netFixture{t: t, f: testFSM(t)} }

func (n *netFixture) apply(changes ...*structs.NetChange) error {
	n.t.Helper()
	n.index++
	resp := apply(n.t, n.f, n.index, structs.NetApplyType, &structs.NetApplyEntry{Changes: changes, At: int64(n.index)})
	if resp == nil {
		return nil
	}
	return resp.(error)
}

func (n *netFixture) must(changes ...*structs.NetChange) {
	n.t.Helper()
	if err := n.apply(changes...); err != nil {
		n.t.Fatal(err)
	}
}

func createNet(id, project string) *structs.NetChange {
	return &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindNetwork, Network: &structs.Network{
		ID: id, Name: "net-" + id, ProjectID: project, AdminStateUp: true, PortSecurityEnabled: true}}
}

func createSubnet(id, network, cidr, gateway string, pools ...structs.IPRange) *structs.NetChange {
	return &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindSubnet, Subnet: &structs.Subnet{
		ID: id, NetworkID: network, ProjectID: "p1", IPVersion: 4, CIDR: cidr, GatewayIP: gateway, AllocationPools: pools, EnableDHCP: true}}
}

func createPort(id, network, project string, ips ...structs.FixedIP) *structs.NetChange {
	return &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort, AutoIPs: ips == nil, Port: &structs.Port{
		ID: id, NetworkID: network, ProjectID: project, AdminStateUp: true, MACAddress: macOf(id), FixedIPs: ips}}
}

func deleteOf(kind, id string) *structs.NetChange {
	return &structs.NetChange{Op: structs.NetOpDelete, Kind: kind, ID: id}
}

func macOf(id string) string {
	var h byte
	for i := range id {
		h = h*31 + id[i]
	}
	return fmt.Sprintf("fa:16:3e:00:%02x:%02x", len(id), h)
}

func (n *netFixture) portIPs(id string) []string {
	n.t.Helper()
	p, err := n.f.State().PortByID(nil, id)
	if err != nil || p == nil {
		n.t.Fatalf("port %s: %v %v", id, p, err)
	}
	var out []string
	for _, ip := range p.FixedIPs {
		out = append(out, ip.IPAddress)
	}
	return out
}

func TestIPAMLowestFreeReleaseAndExhaustion(t *testing.T) {
	n := newNetFixture(t)
	// A /29 has 6 usable addresses; the gateway takes .1, so .2-.6.
	n.must(createNet("n1", "p1"), createSubnet("s1", "n1", "10.1.0.0/29", "10.1.0.1"))
	for i := 1; i <= 5; i++ {
		n.must(createPort(fmt.Sprintf("p%d", i), "n1", "p1"))
		if got, want := n.portIPs(fmt.Sprintf("p%d", i)), []string{fmt.Sprintf("10.1.0.%d", i+1)}; !reflect.DeepEqual(got, want) {
			t.Fatalf("port %d: %v, want %v", i, got, want)
		}
	}
	err := n.apply(createPort("p6", "n1", "p1"))
	if structs.KindOf(err) != structs.KindConflict || structs.ErrorType(err) != structs.ErrIPAddressGenerationFailure ||
		structs.Message(err) != "No more IP addresses available on network n1." {
		t.Fatalf("exhausted subnet: %v (%s)", err, structs.ErrorType(err))
	}
	// A delete releases its address: the next port gets the lowest free.
	n.must(deleteOf(structs.NetKindPort, "p3"))
	n.must(createPort("p7", "n1", "p1"))
	if got := n.portIPs("p7"); !reflect.DeepEqual(got, []string{"10.1.0.4"}) {
		t.Fatalf("after release: %v", got)
	}
	// An address asked for: free, in range, not the gateway.
	n.must(deleteOf(structs.NetKindPort, "p5"))
	for _, c := range []struct {
		ip   string
		kind structs.ErrorKind
		typ  string
	}{
		{"10.1.0.2", structs.KindConflict, structs.ErrIPAddressAlreadyAllocated},
		{"10.1.0.1", structs.KindConflict, structs.ErrIPAddressAlreadyAllocated},
		{"10.1.0.7", structs.KindInvalid, structs.ErrInvalidIPForSubnet},
		{"10.2.0.9", structs.KindInvalid, structs.ErrInvalidIPForNetwork},
	} {
		err := n.apply(createPort("px", "n1", "p1", structs.FixedIP{IPAddress: c.ip}))
		if structs.KindOf(err) != c.kind || structs.ErrorType(err) != c.typ {
			t.Fatalf("%s: %v", c.ip, err)
		}
	}
	n.must(createPort("p8", "n1", "p1", structs.FixedIP{SubnetID: "s1", IPAddress: "10.1.0.6"}))
	// A failed entry changes nothing: the port of a batch whose second
	// change fails is not created.
	if err := n.apply(createPort("p9", "n1", "p1", structs.FixedIP{SubnetID: "s1"}), createPort("p10", "n1", "p1")); err == nil {
		t.Fatal("batch past exhaustion applied")
	}
	if p, _ := n.f.State().PortByID(nil, "p9"); p != nil {
		t.Fatal("a failed batch left a port behind")
	}
	// The subnet is in use until its ports go; the network too.
	if err := n.apply(deleteOf(structs.NetKindSubnet, "s1")); structs.ErrorType(err) != structs.ErrSubnetInUse {
		t.Fatalf("delete subnet in use: %v", err)
	}
	if err := n.apply(deleteOf(structs.NetKindNetwork, "n1")); structs.ErrorType(err) != structs.ErrNetworkInUse {
		t.Fatalf("delete network in use: %v", err)
	}
	for _, id := range []string{"p1", "p2", "p4", "p7", "p8"} {
		n.must(deleteOf(structs.NetKindPort, id))
	}
	n.must(deleteOf(structs.NetKindNetwork, "n1"))
	if s, _ := n.f.State().SubnetByID(nil, "s1"); s != nil {
		t.Fatal("a network's subnets outlived it")
	}
}

func TestIPAMPoolsMACsAndVNIs(t *testing.T) {
	n := newNetFixture(t)
	n.must(createNet("n1", "p1"), createNet("n2", "p1"),
		createSubnet("s1", "n1", "10.0.0.0/24", "10.0.0.1", structs.IPRange{Start: "10.0.0.100", End: "10.0.0.101"}, structs.IPRange{Start: "10.0.0.50", End: "10.0.0.50"}))
	// Pools are used lowest address first, whatever their order.
	for i, want := range []string{"10.0.0.50", "10.0.0.100", "10.0.0.101"} {
		n.must(createPort(fmt.Sprintf("p%d", i), "n1", "p1"))
		if got := n.portIPs(fmt.Sprintf("p%d", i)); got[0] != want {
			t.Fatalf("port %d got %v want %s", i, got, want)
		}
	}
	// Outside the pools but inside the subnet is fine when asked for.
	n.must(createPort("p9", "n1", "p1", structs.FixedIP{IPAddress: "10.0.0.9"}))
	// A MAC is unique on its network, not across networks.
	dup := createPort("dup", "n1", "p1", structs.FixedIP{IPAddress: "10.0.0.10"})
	dup.Port.MACAddress = macOf("p0")
	if err := n.apply(dup); structs.ErrorType(err) != structs.ErrMacAddressInUse {
		t.Fatalf("duplicate MAC: %v", err)
	}
	other := createPort("other", "n2", "p1")
	other.Port.MACAddress = macOf("p0")
	n.must(other)
	// VNIs are allocated lowest first, and reused once free.
	vni := func(id string) int {
		net, _ := n.f.State().NetworkByID(nil, id)
		return net.SegmentationID
	}
	if vni("n1") != 1 || vni("n2") != 2 {
		t.Fatalf("VNIs %d %d", vni("n1"), vni("n2"))
	}
	n.must(deleteOf(structs.NetKindPort, "other"), deleteOf(structs.NetKindNetwork, "n2"), createNet("n3", "p2"))
	if vni("n3") != 2 {
		t.Fatalf("VNI not reused: %d", vni("n3"))
	}
	// Overlapping subnets of one network are refused.
	if err := n.apply(createSubnet("s2", "n1", "10.0.0.128/25", "10.0.0.129")); structs.ErrorType(err) != structs.ErrInvalidInput {
		t.Fatalf("overlap: %v", err)
	}
}

func TestNetworkQuotas(t *testing.T) {
	n := newNetFixture(t)
	n.index++
	if resp := apply(t, n.f, n.index, structs.QuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaPort: 2, structs.QuotaNetwork: 1}}); resp != nil {
		t.Fatal(resp)
	}
	n.must(createNet("n1", "p1"), createSubnet("s1", "n1", "10.0.0.0/24", "10.0.0.1"))
	if err := n.apply(createNet("n2", "p1")); structs.ErrorType(err) != structs.ErrOverQuota || structs.Message(err) != "Quota exceeded for resources: ['network']." {
		t.Fatalf("network over quota: %v", err)
	}
	n.must(createPort("a", "n1", "p1"), createPort("b", "n1", "p1"))
	if err := n.apply(createPort("c", "n1", "p1")); structs.KindOf(err) != structs.KindQuotaReached {
		t.Fatalf("port over quota: %v", err)
	}
	// Another project's ports count against its own quota only.
	n.must(createPort("d", "n1", "p2"))
	n.must(deleteOf(structs.NetKindPort, "a"))
	n.must(createPort("c", "n1", "p1"))
	used, err := n.f.State().NetworkQuotaUsage(nil, "p1")
	if err != nil || used[structs.QuotaPort] != 2 || used[structs.QuotaNetwork] != 1 || used[structs.QuotaSubnet] != 1 {
		t.Fatalf("usage %v %v", used, err)
	}
}

// routerFixture builds an external network, a tenant network and a
// router between them.
func routerFixture(t *testing.T) *netFixture {
	n := newNetFixture(t)
	ext := createNet("ext", "admin")
	ext.Network.External, ext.Network.NetworkType, ext.Network.PhysicalNetwork = true, structs.NetTypeFlat, "public"
	n.must(ext, createSubnet("ext-s", "ext", "172.24.4.0/24", "172.24.4.1"),
		createNet("n1", "p1"), createSubnet("s1", "n1", "10.0.0.0/24", "10.0.0.1"))
	r := &structs.Router{ID: "r1", ProjectID: "p1", AdminStateUp: true, Gateway: &structs.RouterGateway{NetworkID: "ext", EnableSNAT: true}, GatewayPortID: "r1-gw"}
	gw := &structs.Port{ID: "r1-gw", NetworkID: "ext", AdminStateUp: true, MACAddress: macOf("r1-gw"), DeviceOwner: structs.DeviceOwnerRouterGateway, DeviceID: "r1"}
	iface := &structs.Port{ID: "r1-if", NetworkID: "n1", ProjectID: "p1", AdminStateUp: true, MACAddress: macOf("r1-if"),
		DeviceOwner: structs.DeviceOwnerRouterInterface, DeviceID: "r1", FixedIPs: []structs.FixedIP{{SubnetID: "s1", IPAddress: "10.0.0.1"}}}
	n.must(&structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindRouter, Router: r},
		&structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort, Port: gw, AutoIPs: true},
		&structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort, Port: iface})
	return n
}

func createFIP(id, port string) []*structs.NetChange {
	return []*structs.NetChange{
		{Op: structs.NetOpCreate, Kind: structs.NetKindFloatingIP, FloatingIP: &structs.FloatingIP{ID: id, ProjectID: "p1",
			FloatingNetworkID: "ext", FloatingPortID: id + "-port", PortID: port}},
		{Op: structs.NetOpCreate, Kind: structs.NetKindPort, AutoIPs: true, Port: &structs.Port{ID: id + "-port", NetworkID: "ext",
			AdminStateUp: true, MACAddress: macOf(id + "-port"), DeviceOwner: structs.DeviceOwnerFloatingIP, DeviceID: id}},
	}
}

func TestRoutersAndFloatingIPs(t *testing.T) {
	n := routerFixture(t)
	r, _ := n.f.State().RouterByID(nil, "r1")
	if r.Gateway == nil || len(r.Gateway.ExternalFixedIPs) != 1 || r.Gateway.ExternalFixedIPs[0].IPAddress != "172.24.4.2" {
		t.Fatalf("router gateway %+v", r.Gateway)
	}
	// The gateway address belongs to the router's interface; a second
	// interface on the subnet is refused.
	dup := createPort("r1-if2", "n1", "p1", structs.FixedIP{SubnetID: "s1", IPAddress: "10.0.0.9"})
	dup.Port.DeviceOwner, dup.Port.DeviceID = structs.DeviceOwnerRouterInterface, "r1"
	if err := n.apply(dup); structs.ErrorType(err) != structs.ErrBadRequest {
		t.Fatalf("second interface on a subnet: %v", err)
	}
	n.must(createPort("vm", "n1", "p1"))
	n.must(createFIP("f1", "vm")...)
	f, _ := n.f.State().FloatingIPByID(nil, "f1")
	if f.FloatingIPAddress != "172.24.4.3" || f.FixedIPAddress != "10.0.0.2" || f.RouterID != "r1" || f.Status() != structs.NetStatusActive {
		t.Fatalf("floating ip %+v", f)
	}
	// One fixed IP has one floating IP per external network.
	if err := n.apply(createFIP("f2", "vm")...); structs.ErrorType(err) != structs.ErrFloatingIPPortAlreadyAssociated {
		t.Fatalf("second floating IP on a fixed IP: %v", err)
	}
	// The interface and the gateway are in use while a floating IP needs them.
	if err := n.apply(deleteOf(structs.NetKindPort, "r1-if")); structs.ErrorType(err) != structs.ErrRouterInterfaceInUseByFloatingIP {
		t.Fatalf("interface in use: %v", err)
	}
	noGW := r.Copy()
	noGW.Gateway, noGW.GatewayPortID = nil, ""
	if err := n.apply(&structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindRouter, Router: noGW}); structs.ErrorType(err) != structs.ErrRouterExternalGatewayInUseByFIP {
		t.Fatalf("gateway in use: %v", err)
	}
	if err := n.apply(deleteOf(structs.NetKindRouter, "r1")); structs.ErrorType(err) != structs.ErrRouterInUse {
		t.Fatalf("router in use: %v", err)
	}
	// Deleting the port disassociates its floating IP.
	n.must(deleteOf(structs.NetKindPort, "vm"))
	if f, _ = n.f.State().FloatingIPByID(nil, "f1"); f.PortID != "" || f.RouterID != "" || f.Status() != structs.NetStatusDown {
		t.Fatalf("floating ip after its port went %+v", f)
	}
	// A port whose subnet no router joins to the network cannot have one.
	n.must(createNet("n2", "p1"), createSubnet("s2", "n2", "10.9.0.0/24", "10.9.0.1"), createPort("lonely", "n2", "p1"))
	assoc := f.Copy()
	assoc.PortID = "lonely"
	if err := n.apply(&structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindFloatingIP, FloatingIP: assoc}); structs.ErrorType(err) != structs.ErrExternalGatewayForFloatingIP {
		t.Fatalf("unreachable association: %v", err)
	}
	// Deleting the floating IP frees its address.
	n.must(deleteOf(structs.NetKindFloatingIP, "f1"))
	if p, _ := n.f.State().PortByID(nil, "f1-port"); p != nil {
		t.Fatal("floating IP's port outlived it")
	}
	n.must(deleteOf(structs.NetKindPort, "r1-if"), deleteOf(structs.NetKindRouter, "r1"))
	if p, _ := n.f.State().PortByID(nil, "r1-gw"); p != nil {
		t.Fatal("router's gateway port outlived it")
	}
}

func TestSecurityGroupsAndRules(t *testing.T) {
	n := newNetFixture(t)
	g := &structs.SecurityGroup{ID: "g1", Name: "default", ProjectID: "p1", Stateful: true}
	changes := []*structs.NetChange{{Op: structs.NetOpEnsure, Kind: structs.NetKindSecurityGroup, SecurityGroup: g}}
	for _, r := range structs.DefaultSecurityGroupRules("g1", "p1", [4]string{"r1", "r2", "r3", "r4"}) {
		changes = append(changes, &structs.NetChange{Op: structs.NetOpEnsure, Kind: structs.NetKindSecurityGroupRule, Rule: r})
	}
	n.must(changes...)
	n.must(changes...) // ensure is idempotent
	rules, _ := n.f.State().SecurityGroupRules(nil, "g1")
	if len(rules) != 4 {
		t.Fatalf("default rules %d", len(rules))
	}
	dup := &structs.SecurityGroupRule{ID: "r5", SecurityGroupID: "g1", Direction: structs.DirectionEgress, EtherType: structs.EtherTypeIPv4}
	if err := n.apply(&structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroupRule, Rule: dup}); structs.ErrorType(err) != structs.ErrSecurityGroupRuleExists {
		t.Fatalf("duplicate rule: %v", err)
	}
	n.must(createNet("n1", "p1"), createSubnet("s1", "n1", "10.0.0.0/24", "10.0.0.1"))
	p := createPort("p", "n1", "p1")
	p.Port.SecurityGroups = []string{"g1"}
	n.must(p)
	if err := n.apply(deleteOf(structs.NetKindSecurityGroup, "g1")); structs.ErrorType(err) != structs.ErrSecurityGroupInUse {
		t.Fatalf("group in use: %v", err)
	}
	other := createPort("q", "n1", "p2")
	other.Port.SecurityGroups = []string{"g1"}
	if err := n.apply(other); structs.ErrorType(err) != structs.ErrSecurityGroupNotFound {
		t.Fatalf("another project's group: %v", err)
	}
	n.must(deleteOf(structs.NetKindPort, "p"), deleteOf(structs.NetKindSecurityGroup, "g1"))
	if rules, _ := n.f.State().SecurityGroupRules(nil, ""); len(rules) != 0 {
		t.Fatalf("rules outlived their group: %d", len(rules))
	}
}

func TestInstancePortsGoWithTheInstance(t *testing.T) {
	n := newNetFixture(t)
	n.must(createNet("n1", "p1"), createSubnet("s1", "n1", "10.0.0.0/24", "10.0.0.1"))
	user := createPort("mine", "n1", "p1")
	n.must(user)
	bound := user.Port.Copy()
	bound.FixedIPs = nil
	n.must() // no-op entry
	// The create entry carries the instance's new port and binds the
	// user's port, in one transaction with the instance.
	mine, _ := n.f.State().PortByID(nil, "mine")
	bound = mine.Copy()
	bound.DeviceID, bound.DeviceOwner, bound.PreserveOnDelete, bound.DeviceSeq = "i1", "compute:nova", true, 2
	made := createPort("made", "n1", "p1")
	made.Port.DeviceID, made.Port.DeviceOwner, made.Port.DeviceSeq = "i1", "compute:nova", 1
	n.index++
	resp := apply(t, n.f, n.index, structs.InstanceCreateType, &structs.InstanceCreateEntry{
		Instances: []*structs.Instance{{ID: "i1", Name: "vm", ProjectID: "p1", Flavor: structs.DevFlavors()[0],
			VMState: structs.VMStateBuilding}},
		RequestID: "req-1", CreatedAt: 1,
		Network: []*structs.NetChange{made, {Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Claim: true, Port: bound}},
	})
	if resp != nil {
		t.Fatal(resp)
	}
	ports, _ := n.f.State().PortsByDevice(nil, "i1")
	if len(ports) != 2 || ports[0].ID != "made" || ports[1].ID != "mine" {
		t.Fatalf("instance ports %+v", ports)
	}
	// A port bound to another device cannot be claimed.
	steal := bound.Copy()
	steal.DeviceID = "i2"
	if err := n.apply(&structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindPort, Claim: true, Port: steal}); structs.ErrorType(err) != structs.ErrPortInUse {
		t.Fatalf("claim of a bound port: %v", err)
	}
	// A create whose ports fail creates no instance.
	n.index++
	bad := createPort("bad", "n1", "p1", structs.FixedIP{IPAddress: "10.0.0.2"})
	bad.Port.DeviceID = "i3"
	resp = apply(t, n.f, n.index, structs.InstanceCreateType, &structs.InstanceCreateEntry{
		Instances: []*structs.Instance{{ID: "i3", Name: "vm3", ProjectID: "p1", Flavor: structs.DevFlavors()[0], VMState: structs.VMStateBuilding}},
		Network:   []*structs.NetChange{bad},
	})
	if err, _ := resp.(error); structs.ErrorType(err) != structs.ErrIPAddressAlreadyAllocated {
		t.Fatalf("create with a taken address: %v", resp)
	}
	if inst, _ := n.f.State().InstanceByID(nil, "i3"); inst != nil {
		t.Fatal("an instance was created without its port")
	}
	// Purging the instance deletes the port made for it and unbinds the
	// user's.
	n.index++
	if resp := apply(t, n.f, n.index, structs.InstanceDeleteType, &structs.InstanceDeleteEntry{Purge: []string{"i1"}, UpdatedAt: 2}); resp != nil {
		t.Fatal(resp)
	}
	if p, _ := n.f.State().PortByID(nil, "made"); p != nil {
		t.Fatal("the instance's port outlived it")
	}
	if p, _ := n.f.State().PortByID(nil, "mine"); p == nil || p.DeviceID != "" || p.DeviceOwner != "" || len(p.FixedIPs) != 1 {
		t.Fatalf("the user's port after the instance: %+v", p)
	}
	n.must(createPort("next", "n1", "p1"))
	if got := n.portIPs("next"); got[0] != "10.0.0.3" {
		t.Fatalf("released address not reused: %v", got)
	}
}

// TestNetworkingIsDeterministic applies one sequence of entries to two
// FSMs and through a snapshot: every address, VNI and association is the
// same.
func TestNetworkingIsDeterministic(t *testing.T) {
	build := func() *netFixture {
		n := routerFixture(t)
		for i := 0; i < 20; i++ {
			n.must(createPort(fmt.Sprintf("vm%d", i), "n1", "p1"))
			if i%3 == 0 {
				n.must(deleteOf(structs.NetKindPort, fmt.Sprintf("vm%d", i/2)))
			}
		}
		n.must(createFIP("f1", "vm19")...)
		return n
	}
	a, b := build(), build()
	if !reflect.DeepEqual(dump(t, a.f.State()), dump(t, b.f.State())) {
		t.Fatal("two servers applying the same entries disagree")
	}
	var buf bytes.Buffer
	if err := a.f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	c := testFSM(t)
	if err := c.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dump(t, a.f.State()), dump(t, c.State())) {
		t.Fatal("a restored snapshot differs")
	}
	// And it keeps allocating as the original would.
	a.must(createPort("after", "n1", "p1"))
	b.must(createPort("after", "n1", "p1"))
	if !reflect.DeepEqual(a.portIPs("after"), b.portIPs("after")) {
		t.Fatal("allocation after the same history differs")
	}
}

// populateNetworks fills the networking tables for the snapshot test,
// at indexes up to 6.
func populateNetworks(t *testing.T, s *StateStore) {
	t.Helper()
	txn := s.writeTxn()
	defer txn.Abort()
	ext := createNet("ext", "admin")
	ext.Network.External, ext.Network.NetworkType, ext.Network.PhysicalNetwork = true, structs.NetTypeFlat, "public"
	g := &structs.SecurityGroup{ID: "g1", Name: "default", ProjectID: "p1", Stateful: true}
	changes := []*structs.NetChange{ext, createSubnet("ext-s", "ext", "172.24.4.0/24", "172.24.4.1"),
		createNet("n1", "p1"), createSubnet("s1", "n1", "10.0.0.0/24", "10.0.0.1"),
		{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroup, SecurityGroup: g}}
	for _, r := range structs.DefaultSecurityGroupRules("g1", "p1", [4]string{"r1", "r2", "r3", "r4"}) {
		changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindSecurityGroupRule, Rule: r})
	}
	r := &structs.Router{ID: "r1", ProjectID: "p1", AdminStateUp: true, Gateway: &structs.RouterGateway{NetworkID: "ext"}, GatewayPortID: "r1-gw"}
	changes = append(changes, &structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindRouter, Router: r},
		&structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort, AutoIPs: true, Port: &structs.Port{ID: "r1-gw",
			NetworkID: "ext", MACAddress: macOf("r1-gw"), DeviceOwner: structs.DeviceOwnerRouterGateway, DeviceID: "r1"}},
		&structs.NetChange{Op: structs.NetOpCreate, Kind: structs.NetKindPort, Port: &structs.Port{ID: "r1-if", NetworkID: "n1",
			ProjectID: "p1", MACAddress: macOf("r1-if"), DeviceOwner: structs.DeviceOwnerRouterInterface, DeviceID: "r1",
			FixedIPs: []structs.FixedIP{{SubnetID: "s1", IPAddress: "10.0.0.1"}}}})
	vm := createPort("vm", "n1", "p1")
	vm.Port.SecurityGroups, vm.Port.DeviceID, vm.Port.DeviceOwner = []string{"g1"}, "i1", "compute:nova"
	changes = append(changes, vm)
	changes = append(changes, createFIP("f1", "vm")...)
	if err := applyNetChanges(txn, 6, 6, changes); err != nil {
		t.Fatal(err)
	}
	txn.Commit()
}

// A port with several addresses on a subnet holds each of them: the
// next automatic address skips them all and takes the lowest gap.
func TestIPAMSkipsEveryAddressOfMultiAddressPorts(t *testing.T) {
	n := newNetFixture(t)
	n.must(createNet("n1", "p1"), createSubnet("s1", "n1", "10.0.0.0/24", "10.0.0.1"))
	ip := func(a string) structs.FixedIP { return structs.FixedIP{SubnetID: "s1", IPAddress: a} }
	n.must(createPort("multi", "n1", "p1", ip("10.0.0.4"), ip("10.0.0.2"), ip("10.0.0.6")))
	n.must(createPort("one", "n1", "p1", ip("10.0.0.3")))
	for _, want := range []string{"10.0.0.5", "10.0.0.7"} {
		id := "auto-" + want
		n.must(createPort(id, "n1", "p1"))
		if got := n.portIPs(id); len(got) != 1 || got[0] != want {
			t.Fatalf("port %s got %v, want %s", id, got, want)
		}
	}
}
