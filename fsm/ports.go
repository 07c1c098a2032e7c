package fsm

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"slices"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TablePorts is the name of the ports table.
const TablePorts = "ports"

// IPAM. A port's fixed IPs are the only record of an allocation: the
// "ip" index maps (subnet, address) to the ports holding it, so an
// address is free exactly when no port has it, and deleting a port (or
// dropping an address from it) releases the address in the same
// transaction, without bookkeeping. An address is chosen in Apply from
// the state, as the lowest free address of the subnet's allocation
// pools; every server applies the entries in the same order, so every
// server chooses the same address, and two creates can never get one
// address because each sees the allocation of the entries before it.

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TablePorts,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"network": {Name: "network", Indexer: &memdb.StringFieldIndex{Field: "NetworkID"}},
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
				"device":  {Name: "device", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "DeviceID"}},
				"ip":      {Name: "ip", AllowMissing: true, Indexer: fixedIPIndex{}},
				"mac": {Name: "mac", Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "NetworkID"},
					&memdb.StringFieldIndex{Field: "MACAddress", Lowercase: true},
				}}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.PortSnapshot,
		table:      TablePorts,
		newRecord:  func() any { return new(structs.Port) },
	})
}

// fixedIPIndex indexes ports by each of their fixed IPs:
// "<subnet id>\x00<the 16-byte address in hex>". Lookups take (subnet,
// address); prefix lookups ("ip_prefix") take a subnet and list every
// port with an address on it.
type fixedIPIndex struct{}

func ipKey(subnetID string, a netip.Addr) []byte {
	b := a.As16()
	return []byte(subnetID + "\x00" + hex.EncodeToString(b[:]))
}

func (fixedIPIndex) FromObject(obj any) (bool, [][]byte, error) {
	p, ok := obj.(*structs.Port)
	if !ok {
		return false, nil, fmt.Errorf("fixed ip index on %T", obj)
	}
	var keys [][]byte
	for _, ip := range p.FixedIPs {
		if a, err := netip.ParseAddr(ip.IPAddress); err == nil {
			keys = append(keys, ipKey(ip.SubnetID, a))
		}
	}
	return len(keys) > 0, keys, nil
}

func (fixedIPIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 2 {
		return nil, fmt.Errorf("fixed ip index takes a subnet and an address")
	}
	subnet, ok1 := args[0].(string)
	addr, ok2 := args[1].(string)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("fixed ip index takes strings")
	}
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return nil, err
	}
	return ipKey(subnet, a), nil
}

func (fixedIPIndex) PrefixFromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("fixed ip prefix takes a subnet")
	}
	subnet, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("fixed ip prefix takes a string")
	}
	return []byte(subnet + "\x00"), nil
}

// port applies a change of a port.
func (t *netTxn) port(c *structs.NetChange) error {
	if c.Op == structs.NetOpDelete {
		return t.deletePort(c.ID)
	}
	if c.Port == nil || c.Port.ID == "" {
		return structs.Errorf(structs.KindInvalid, "port change without a port")
	}
	p := c.Port.Copy()
	old, err := first[*structs.Port](t.txn, nil, TablePorts, "id", p.ID)
	if err != nil {
		return err
	}
	if done, err := checkChange(c, structs.NetKindPort, p.ID, old != nil, func() uint64 { return old.ModifyIndex }); done || err != nil {
		return err
	}
	if old != nil {
		p.NetworkID = old.NetworkID
		if c.Claim && old.DeviceID != "" && old.DeviceID != p.DeviceID {
			return structs.NetErrorf(structs.KindConflict, structs.ErrPortInUse,
				"Unable to complete operation on port %s for network %s. Port already has an attached device %s.", p.ID, p.NetworkID, old.DeviceID)
		}
	}
	if err := p.Validate(); err != nil {
		return err
	}
	n, err := first[*structs.Network](t.txn, nil, TableNetworks, "id", p.NetworkID)
	if err != nil {
		return err
	}
	if n == nil {
		return structs.NetNotFound(structs.NetKindNetwork, p.NetworkID)
	}
	if err := t.checkMAC(p); err != nil {
		return err
	}
	if p.DeviceOwner == structs.DeviceOwnerRouterInterface {
		// A router's second interface on a subnet is refused as such,
		// before its address is found taken.
		if err := t.checkRouterInterface(p); err != nil {
			return err
		}
	}
	req := p.FixedIPs
	var found map[string]netip.Addr
	if c.AutoIPs && old == nil {
		if req, found, err = t.autoIPs(n, p); err != nil {
			return err
		}
	}
	if p.FixedIPs, err = t.assignIPs(n, p, req, old, found); err != nil {
		return err
	}
	if err := t.checkPortGroups(p); err != nil {
		return err
	}
	if err := t.checkDevice(p); err != nil {
		return err
	}
	var oc uint64
	var ot int64
	var orev uint64
	if old != nil {
		oc, ot, orev = old.CreateIndex, old.CreatedAt, old.Revision
	} else {
		t.countCreate(p.ProjectID, structs.QuotaPort)
	}
	p.CreateIndex, p.CreatedAt, p.Revision = t.stamps(oc, ot, orev)
	p.ModifyIndex, p.UpdatedAt = t.index, t.at
	if err := t.insert(TablePorts, p); err != nil {
		return err
	}
	return t.syncOwner(p, old)
}

// checkMAC refuses a MAC another port of the network has.
func (t *netTxn) checkMAC(p *structs.Port) error {
	others, err := list[*structs.Port](t.txn, nil, TablePorts, "mac", p.NetworkID, p.MACAddress)
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.ID != p.ID {
			return structs.NetErrorf(structs.KindConflict, structs.ErrMacAddressInUse,
				"Unable to complete operation for network %s. The mac address %s is in use.", p.NetworkID, p.MACAddress)
		}
	}
	return nil
}

// networkSubnets lists a network's subnets, oldest first.
func (t *netTxn) networkSubnets(networkID string) ([]*structs.Subnet, error) {
	subs, err := list[*structs.Subnet](t.txn, nil, TableSubnets, "network", networkID)
	sortByCreate(subs, func(s *structs.Subnet) (uint64, string) { return s.CreateIndex, s.ID })
	return subs, err
}

// allocated lists the addresses ports hold on a subnet, sorted.
func allocated(txn *memdb.Txn, subnetID string) ([]netip.Addr, error) {
	// Every create of a port on the subnet reads all its addresses, so
	// this runs once per port over every port: no intermediate list of
	// ports and no set. The index yields the ports in address order (a
	// port with several addresses here once per address), so the
	// addresses come nearly sorted, and a sort and a compaction drop
	// the repeats.
	it, err := txn.Get(TablePorts, "ip_prefix", subnetID)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", TablePorts, err)
	}
	var out []netip.Addr
	var last *structs.Port
	for raw := it.Next(); raw != nil; raw = it.Next() {
		p := raw.(*structs.Port)
		if p == last {
			continue // the same port again, for its next address
		}
		last = p
		for _, ip := range p.FixedIPs {
			if ip.SubnetID != subnetID {
				continue
			}
			if a, err := netip.ParseAddr(ip.IPAddress); err == nil {
				out = append(out, a)
			}
		}
	}
	slices.SortFunc(out, func(a, b netip.Addr) int { return a.Compare(b) })
	return slices.Compact(out), nil
}

// lowestFree is the subnet's lowest free pool address, also skipping
// extra (addresses this port already chose), or false when exhausted.
func lowestFree(txn *memdb.Txn, s *structs.Subnet, extra []netip.Addr) (netip.Addr, bool, error) {
	used, err := allocated(txn, s.ID)
	if err != nil {
		return netip.Addr{}, false, err
	}
	if len(extra) > 0 {
		used = append(used, extra...)
		sort.Slice(used, func(i, j int) bool { return used[i].Less(used[j]) })
	}
	a, ok := structs.LowestFree(s.AllocationPools, used)
	return a, ok, nil
}

func noMoreIPs(networkID string) error {
	return structs.NetErrorf(structs.KindConflict, structs.ErrIPAddressGenerationFailure,
		"No more IP addresses available on network %s.", networkID)
}

// autoIPs are Neutron's default addresses of a new port: one from the
// first IPv4 subnet with a free address, one from the first stateful
// IPv6 subnet with one, and the SLAAC address of every SLAAC subnet. A
// network whose subnets of a version are all full refuses the port. The
// free addresses it found, by subnet, are handed to assignIPs, which
// would otherwise search each subnet a second time in the same
// transaction for the same answer.
func (t *netTxn) autoIPs(n *structs.Network, p *structs.Port) ([]structs.FixedIP, map[string]netip.Addr, error) {
	subs, err := t.networkSubnets(n.ID)
	if err != nil {
		return nil, nil, err
	}
	found := map[string]netip.Addr{}
	var out []structs.FixedIP
	for _, version := range []int{4, 6} {
		tried, done := false, false
		for _, s := range subs {
			if s.IPVersion != version {
				continue
			}
			if s.SLAAC() {
				out = append(out, structs.FixedIP{SubnetID: s.ID})
				continue
			}
			if done {
				continue
			}
			tried = true
			if a, ok, err := lowestFree(t.txn, s, nil); err != nil {
				return nil, nil, err
			} else if ok {
				out = append(out, structs.FixedIP{SubnetID: s.ID})
				found[s.ID] = a
				done = true
			}
		}
		if tried && !done {
			return nil, nil, noMoreIPs(n.ID)
		}
	}
	return out, found, nil
}

// assignIPs resolves and checks a port's requested addresses: each names
// a subnet of the port's network, by id or by containing the address;
// an address given must be free (or already the port's), an address
// not given is allocated (a SLAAC subnet's derives from the MAC): the
// subnet's lowest free one, which found already holds when autoIPs
// looked it up in this transaction.
func (t *netTxn) assignIPs(n *structs.Network, p *structs.Port, req []structs.FixedIP, old *structs.Port, found map[string]netip.Addr) ([]structs.FixedIP, error) {
	if len(req) == 0 {
		return nil, nil
	}
	subs, err := t.networkSubnets(n.ID)
	if err != nil {
		return nil, err
	}
	byID := map[string]*structs.Subnet{}
	for _, s := range subs {
		byID[s.ID] = s
	}
	chosen := map[string][]netip.Addr{}
	out := make([]structs.FixedIP, 0, len(req))
	for _, r := range req {
		var s *structs.Subnet
		var a netip.Addr
		if r.IPAddress != "" {
			if a, err = structs.ParseIP(r.IPAddress); err != nil {
				return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput,
					"Invalid input for operation: '%s' is not a valid IP address.", r.IPAddress)
			}
		}
		switch {
		case r.SubnetID != "":
			if s = byID[r.SubnetID]; s == nil {
				return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput,
					"Invalid input for operation: Failed to create port on network %s, because fixed_ips included invalid subnet %s.", n.ID, r.SubnetID)
			}
		case a.IsValid():
			for _, c := range subs {
				if pr, err := netip.ParsePrefix(c.CIDR); err == nil && pr.Contains(a) {
					s = c
					break
				}
			}
			if s == nil {
				return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidIPForNetwork,
					"IP address %s is not a valid IP for any of the subnets on the specified network.", a)
			}
		default:
			return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput,
				"Invalid input for operation: A fixed IP needs a subnet_id or an ip_address.")
		}
		prefix, err := netip.ParsePrefix(s.CIDR)
		if err != nil {
			return nil, err
		}
		switch {
		case a.IsValid():
			if err := t.checkAddress(s, prefix, a, p, old); err != nil {
				return nil, err
			}
		case s.SLAAC():
			if a, err = structs.EUI64(prefix, p.MACAddress); err != nil {
				return nil, err
			}
			if err := t.checkFree(s, a, p); err != nil {
				return nil, err
			}
		default:
			if pre, ok := found[s.ID]; ok && len(chosen[s.ID]) == 0 {
				a = pre // lowestFree(t.txn, s, nil), unchanged since
				delete(found, s.ID)
				break
			}
			var ok bool
			if a, ok, err = lowestFree(t.txn, s, chosen[s.ID]); err != nil {
				return nil, err
			} else if !ok {
				return nil, noMoreIPs(n.ID)
			}
		}
		for _, prev := range chosen[s.ID] {
			if prev == a {
				return nil, structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput,
					"Invalid input for operation: Duplicate IP address '%s'.", a)
			}
		}
		chosen[s.ID] = append(chosen[s.ID], a)
		out = append(out, structs.FixedIP{SubnetID: s.ID, IPAddress: a.String()})
	}
	return out, nil
}

// checkAddress checks an address asked for by name: in the subnet's
// usable range, not its gateway (which only a router may take), and
// free unless the port already has it.
func (t *netTxn) checkAddress(s *structs.Subnet, prefix netip.Prefix, a netip.Addr, p, old *structs.Port) error {
	first, last := structs.UsableRange(prefix)
	if !prefix.Contains(a) || a.Less(first) || last.Less(a) {
		return structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidIPForSubnet,
			"IP address %s is not a valid IP for the specified subnet.", a)
	}
	if s.SLAAC() && !p.IsRouterPort() {
		if want, err := structs.EUI64(prefix, p.MACAddress); err != nil || want != a {
			return structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput,
				"Invalid input for operation: IPv6 address %s cannot be directly assigned to a port on subnet %s as the subnet is configured for automatic addresses.", a, s.ID)
		}
	}
	if old != nil && old.HasIP(a.String()) {
		return nil
	}
	if s.GatewayIP == a.String() && p.DeviceOwner != structs.DeviceOwnerRouterInterface {
		return structs.NetErrorf(structs.KindConflict, structs.ErrIPAddressAlreadyAllocated,
			"IP address %s already allocated in subnet %s", a, s.ID)
	}
	return t.checkFree(s, a, p)
}

// checkFree refuses an address another port holds.
func (t *netTxn) checkFree(s *structs.Subnet, a netip.Addr, p *structs.Port) error {
	holders, err := list[*structs.Port](t.txn, nil, TablePorts, "ip", s.ID, a.String())
	if err != nil {
		return err
	}
	for _, h := range holders {
		if h.ID != p.ID {
			return structs.NetErrorf(structs.KindConflict, structs.ErrIPAddressAlreadyAllocated,
				"IP address %s already allocated in subnet %s", a, s.ID)
		}
	}
	return nil
}

// checkPortGroups checks that a port's security groups exist and are its
// project's.
func (t *netTxn) checkPortGroups(p *structs.Port) error {
	seen := map[string]bool{}
	groups := p.SecurityGroups[:0]
	for _, id := range p.SecurityGroups {
		if seen[id] {
			continue
		}
		seen[id] = true
		g, err := first[*structs.SecurityGroup](t.txn, nil, TableSecurityGroups, "id", id)
		if err != nil {
			return err
		}
		if g == nil || (p.ProjectID != "" && g.ProjectID != p.ProjectID) {
			return structs.NetNotFound(structs.NetKindSecurityGroup, id)
		}
		groups = append(groups, id)
	}
	p.SecurityGroups = groups
	return nil
}

// checkDevice checks what a router's or floating IP's port must be.
func (t *netTxn) checkDevice(p *structs.Port) error {
	switch p.DeviceOwner {
	case structs.DeviceOwnerRouterInterface:
		return t.checkRouterInterface(p)
	case structs.DeviceOwnerRouterGateway:
		r, err := first[*structs.Router](t.txn, nil, TableRouters, "id", p.DeviceID)
		if err != nil {
			return err
		}
		if r == nil || r.GatewayPortID != p.ID {
			return structs.NetNotFound(structs.NetKindRouter, p.DeviceID)
		}
	case structs.DeviceOwnerFloatingIP:
		f, err := first[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "id", p.DeviceID)
		if err != nil {
			return err
		}
		if f == nil || f.FloatingPortID != p.ID {
			return structs.NetNotFound(structs.NetKindFloatingIP, p.DeviceID)
		}
		if len(p.FixedIPs) == 0 {
			return structs.NetErrorf(structs.KindConflict, structs.ErrIPAddressGenerationFailure,
				"No more IP addresses available on network %s.", p.NetworkID)
		}
	}
	return nil
}

// syncOwner copies a router gateway's or floating IP's addresses from
// their port, and drops floating IP associations with addresses the
// port no longer has.
func (t *netTxn) syncOwner(p, old *structs.Port) error {
	switch p.DeviceOwner {
	case structs.DeviceOwnerRouterGateway:
		r, err := first[*structs.Router](t.txn, nil, TableRouters, "id", p.DeviceID)
		if err != nil || r == nil || r.Gateway == nil {
			return err
		}
		c := r.Copy()
		c.Gateway.ExternalFixedIPs = append([]structs.FixedIP(nil), p.FixedIPs...)
		c.ModifyIndex = t.index
		return t.insert(TableRouters, c)
	case structs.DeviceOwnerFloatingIP:
		f, err := first[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "id", p.DeviceID)
		if err != nil || f == nil {
			return err
		}
		c := f.Copy()
		c.FloatingIPAddress = p.FixedIPs[0].IPAddress
		c.ModifyIndex = t.index
		return t.insert(TableFloatingIPs, c)
	}
	if old == nil {
		return nil
	}
	fips, err := list[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "port", p.ID)
	if err != nil {
		return err
	}
	for _, f := range fips {
		if !p.HasIP(f.FixedIPAddress) {
			if err := t.disassociate(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// deletePort deletes a port, releasing its addresses and disassociating
// its floating IPs. A router interface some floating IP needs stays.
func (t *netTxn) deletePort(id string) error {
	p, err := first[*structs.Port](t.txn, nil, TablePorts, "id", id)
	if err != nil {
		return err
	}
	if p == nil {
		return structs.NetNotFound(structs.NetKindPort, id)
	}
	if p.DeviceOwner == structs.DeviceOwnerRouterInterface {
		if err := t.checkInterfaceUnused(p); err != nil {
			return err
		}
	}
	fips, err := list[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "port", id)
	if err != nil {
		return err
	}
	for _, f := range fips {
		if err := t.disassociate(f); err != nil {
			return err
		}
	}
	return t.remove(TablePorts, p)
}

// PortByID returns a port or nil.
func (s *StateStore) PortByID(ws memdb.WatchSet, id string) (*structs.Port, error) {
	return netGet[*structs.Port](s.ReadTxn(), ws, structs.NetKindPort, id)
}

// Ports lists every port, or one network's, oldest first.
func (s *StateStore) Ports(ws memdb.WatchSet, networkID string) ([]*structs.Port, error) {
	return netList[*structs.Port](s.ReadTxn(), ws, structs.NetKindPort, networkID)
}

// MACInUse reports whether a port of the network has the MAC.
func (s *StateStore) MACInUse(networkID, mac string) (bool, error) {
	raw, err := s.ReadTxn().First(TablePorts, "mac", networkID, mac)
	return raw != nil, err
}

// PortsByDevice lists a device's ports in their order (an instance's
// NICs: eth0 first).
func (s *StateStore) PortsByDevice(ws memdb.WatchSet, deviceID string) ([]*structs.Port, error) {
	ports, err := list[*structs.Port](s.ReadTxn(), ws, TablePorts, "device", deviceID)
	sortDevicePorts(ports)
	return ports, err
}

// PortsByHost lists the ports bound to a host: those of the instances
// placed on it, instance by instance in their NIC order. A host's
// dataplane wires exactly these.
//
// A host with no instances has no node of its own in the instances'
// host index, and a watch on an absent key is its nearest ancestor's:
// every host's agent watches its ports (client/interfaces.go), so each
// instance change anywhere used to wake the watches of many empty
// hosts (issue #31: a quarter of the agent-path boot's CPU). An empty
// host's watch is its host record instead, which every placement on it
// rewrites (its usage, fsm/placement_usage.go).
func (s *StateStore) PortsByHost(ws memdb.WatchSet, hostID string) ([]*structs.Port, error) {
	txn := s.ReadTxn()
	var iws memdb.WatchSet
	if ws != nil {
		iws = memdb.NewWatchSet()
	}
	insts, err := list[*structs.Instance](txn, iws, TableInstances, "host", hostID)
	if err != nil {
		return nil, err
	}
	if ws != nil {
		if len(insts) > 0 {
			for ch := range iws {
				ws.Add(ch)
			}
		} else if _, err := first[*structs.Host](txn, ws, TableHosts, "id", hostID); err != nil {
			return nil, err
		}
	}
	var out []*structs.Port
	for _, inst := range insts {
		ports, err := list[*structs.Port](txn, ws, TablePorts, "device", inst.ID)
		if err != nil {
			return nil, err
		}
		sortDevicePorts(ports)
		for _, p := range ports {
			if p.IsCompute() {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// PortsOnSubnet lists the ports with an address on a subnet.
func (s *StateStore) PortsOnSubnet(ws memdb.WatchSet, subnetID string) ([]*structs.Port, error) {
	ports, err := list[*structs.Port](s.ReadTxn(), ws, TablePorts, "ip_prefix", subnetID)
	out := ports[:0:0]
	seen := map[string]bool{}
	for _, p := range ports {
		if !seen[p.ID] {
			seen[p.ID] = true
			out = append(out, p)
		}
	}
	sortPorts(out)
	return out, err
}

// sortPorts orders ports by creation.
func sortPorts(ports []*structs.Port) {
	sortByCreate(ports, func(p *structs.Port) (uint64, string) { return p.CreateIndex, p.ID })
}

// sortDevicePorts orders one device's ports by their device order, then
// creation.
func sortDevicePorts(ports []*structs.Port) {
	sort.SliceStable(ports, func(i, j int) bool {
		a, b := ports[i], ports[j]
		if a.DeviceSeq != b.DeviceSeq {
			return a.DeviceSeq < b.DeviceSeq
		}
		if a.CreateIndex != b.CreateIndex {
			return a.CreateIndex < b.CreateIndex
		}
		return a.ID < b.ID
	})
}
