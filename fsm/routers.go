package fsm

import (
	"net/netip"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Tables of routers and floating IPs. A router's interfaces are ports
// it owns (device owner network:router_interface), its gateway a port
// on the external network; a floating IP holds its address on a port of
// its external network too, so the IPAM of ports.go serves them all.
const (
	TableRouters     = "routers"
	TableFloatingIPs = "floating_ips"
)

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableRouters,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableFloatingIPs,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
				"port":    {Name: "port", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "PortID"}},
				"router":  {Name: "router", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "RouterID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.RouterSnapshot,
		table:      TableRouters,
		newRecord:  func() any { return new(structs.Router) },
	})
	registerSnapshot(snapshotTable{
		recordType: structs.FloatingIPSnapshot,
		table:      TableFloatingIPs,
		newRecord:  func() any { return new(structs.FloatingIP) },
	})
}

func badRequest(resource, format string, args ...any) error {
	return structs.NetErrorf(structs.KindInvalid, structs.ErrBadRequest, "Bad "+resource+" request: "+format, args...)
}

// router applies a change of a router. A new gateway's port follows in
// the same entry (device owner network:router_gateway) and its
// addresses are copied to the gateway when it is applied; a replaced
// gateway's port is deleted here.
func (t *netTxn) router(c *structs.NetChange) error {
	if c.Op == structs.NetOpDelete {
		return t.deleteRouter(c.ID)
	}
	if c.Router == nil || c.Router.ID == "" {
		return structs.Errorf(structs.KindInvalid, "router change without a router")
	}
	r := c.Router.Copy()
	var err error
	if r.Routes, err = structs.ValidateRoutes(r.Routes); err != nil {
		return err
	}
	old, err := first[*structs.Router](t.txn, nil, TableRouters, "id", r.ID)
	if err != nil {
		return err
	}
	if done, err := checkChange(c, structs.NetKindRouter, r.ID, old != nil, func() uint64 { return old.ModifyIndex }); done || err != nil {
		return err
	}
	if r.Gateway != nil {
		n, err := first[*structs.Network](t.txn, nil, TableNetworks, "id", r.Gateway.NetworkID)
		if err != nil {
			return err
		}
		if n == nil {
			return structs.NetNotFound(structs.NetKindNetwork, r.Gateway.NetworkID)
		}
		if !n.External {
			return badRequest("router", "Network %s is not an external network", n.ID)
		}
		if r.GatewayPortID == "" {
			return structs.Errorf(structs.KindInvalid, "router %s gateway without a port", r.ID)
		}
	} else {
		r.GatewayPortID = ""
	}
	if old != nil && old.Gateway != nil && old.GatewayPortID != r.GatewayPortID {
		// The gateway goes away or moves: floating IPs NATed through it
		// keep it.
		if r.Gateway == nil || r.Gateway.NetworkID != old.Gateway.NetworkID {
			fips, err := list[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "router", r.ID)
			if err != nil {
				return err
			}
			for _, f := range fips {
				if f.FloatingNetworkID == old.Gateway.NetworkID {
					return structs.NetErrorf(structs.KindConflict, structs.ErrRouterExternalGatewayInUseByFIP,
						"Gateway cannot be updated for router %s, since a gateway to external network %s is required by one or more floating IPs.",
						r.ID, old.Gateway.NetworkID)
				}
			}
		}
		if gp, err := first[*structs.Port](t.txn, nil, TablePorts, "id", old.GatewayPortID); err != nil {
			return err
		} else if gp != nil {
			if err := t.remove(TablePorts, gp); err != nil {
				return err
			}
		}
	}
	var oc uint64
	var ot int64
	var orev uint64
	if old != nil {
		oc, ot, orev = old.CreateIndex, old.CreatedAt, old.Revision
		r.ProjectID = old.ProjectID
		if r.Gateway != nil && old.Gateway != nil && old.GatewayPortID == r.GatewayPortID {
			r.Gateway.ExternalFixedIPs = old.Gateway.ExternalFixedIPs
		} else if r.Gateway != nil {
			r.Gateway.ExternalFixedIPs = nil
		}
	} else {
		if r.Gateway != nil {
			r.Gateway.ExternalFixedIPs = nil
		}
		t.countCreate(r.ProjectID, structs.QuotaRouter)
	}
	r.CreateIndex, r.CreatedAt, r.Revision = t.stamps(oc, ot, orev)
	r.ModifyIndex, r.UpdatedAt = t.index, t.at
	return t.insert(TableRouters, r)
}

// deleteRouter deletes a router without interfaces, and its gateway
// port.
func (t *netTxn) deleteRouter(id string) error {
	r, err := first[*structs.Router](t.txn, nil, TableRouters, "id", id)
	if err != nil {
		return err
	}
	if r == nil {
		return structs.NetNotFound(structs.NetKindRouter, id)
	}
	ports, err := list[*structs.Port](t.txn, nil, TablePorts, "device", id)
	if err != nil {
		return err
	}
	fips, err := list[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "router", id)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if p.DeviceOwner == structs.DeviceOwnerRouterInterface {
			return structs.NetErrorf(structs.KindConflict, structs.ErrRouterInUse, "Router %s still has ports", id)
		}
	}
	if len(fips) > 0 {
		return structs.NetErrorf(structs.KindConflict, structs.ErrRouterInUse, "Router %s still has ports", id)
	}
	for _, p := range ports {
		if err := t.remove(TablePorts, p); err != nil {
			return err
		}
	}
	return t.remove(TableRouters, r)
}

// checkRouterInterface checks a router interface port: its router
// exists, it has an address, and the router has no other interface on
// its subnets or on a subnet that overlaps one.
func (t *netTxn) checkRouterInterface(p *structs.Port) error {
	r, err := first[*structs.Router](t.txn, nil, TableRouters, "id", p.DeviceID)
	if err != nil {
		return err
	}
	if r == nil {
		return structs.NetNotFound(structs.NetKindRouter, p.DeviceID)
	}
	if len(p.FixedIPs) == 0 {
		return badRequest("router", "Router port must have at least one fixed IP")
	}
	others, err := list[*structs.Port](t.txn, nil, TablePorts, "device", r.ID)
	if err != nil {
		return err
	}
	for _, ip := range p.FixedIPs {
		mine, err := first[*structs.Subnet](t.txn, nil, TableSubnets, "id", ip.SubnetID)
		if err != nil || mine == nil {
			return err
		}
		mp, _ := netip.ParsePrefix(mine.CIDR)
		for _, o := range others {
			if o.ID == p.ID || o.DeviceOwner != structs.DeviceOwnerRouterInterface {
				continue
			}
			for _, oip := range o.FixedIPs {
				if oip.SubnetID == ip.SubnetID {
					return badRequest("router", "Router already has a port on subnet %s", ip.SubnetID)
				}
				theirs, err := first[*structs.Subnet](t.txn, nil, TableSubnets, "id", oip.SubnetID)
				if err != nil || theirs == nil {
					continue
				}
				if tp, err := netip.ParsePrefix(theirs.CIDR); err == nil && tp.Overlaps(mp) {
					return badRequest("router", "Cidr %s of subnet %s overlaps with cidr %s of subnet %s",
						mine.CIDR, mine.ID, theirs.CIDR, theirs.ID)
				}
			}
		}
	}
	return nil
}

// checkInterfaceUnused refuses to remove a router interface a floating
// IP is NATed through.
func (t *netTxn) checkInterfaceUnused(p *structs.Port) error {
	fips, err := list[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "router", p.DeviceID)
	if err != nil || len(fips) == 0 {
		return err
	}
	subnets := map[string]bool{}
	for _, ip := range p.FixedIPs {
		subnets[ip.SubnetID] = true
	}
	for _, f := range fips {
		if s := t.fixedIPSubnet(f.PortID, f.FixedIPAddress); subnets[s] {
			return structs.NetErrorf(structs.KindConflict, structs.ErrRouterInterfaceInUseByFloatingIP,
				"Router interface for subnet %s on router %s cannot be deleted, as it is required by one or more floating IPs.", s, p.DeviceID)
		}
	}
	return nil
}

// fixedIPSubnet is the subnet of one of a port's addresses, "" when
// unknown.
func (t *netTxn) fixedIPSubnet(portID, addr string) string {
	p, err := first[*structs.Port](t.txn, nil, TablePorts, "id", portID)
	if err != nil || p == nil {
		return ""
	}
	for _, ip := range p.FixedIPs {
		if ip.IPAddress == addr {
			return ip.SubnetID
		}
	}
	return ""
}

// floatingIP applies a change of a floating IP. A new one's port (on
// its external network, device owner network:floatingip) follows in the
// same entry and gives it its address. An association is checked here:
// the port exists and has the fixed IP, no other floating IP of the
// network has it, and a router connects its subnet to the network.
func (t *netTxn) floatingIP(c *structs.NetChange) error {
	if c.Op == structs.NetOpDelete {
		f, err := first[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "id", c.ID)
		if err != nil {
			return err
		}
		if f == nil {
			return structs.NetNotFound(structs.NetKindFloatingIP, c.ID)
		}
		if p, err := first[*structs.Port](t.txn, nil, TablePorts, "id", f.FloatingPortID); err != nil {
			return err
		} else if p != nil {
			if err := t.remove(TablePorts, p); err != nil {
				return err
			}
		}
		return t.remove(TableFloatingIPs, f)
	}
	if c.FloatingIP == nil || c.FloatingIP.ID == "" {
		return structs.Errorf(structs.KindInvalid, "floating IP change without a floating IP")
	}
	f := c.FloatingIP.Copy()
	old, err := first[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "id", f.ID)
	if err != nil {
		return err
	}
	if done, err := checkChange(c, structs.NetKindFloatingIP, f.ID, old != nil, func() uint64 { return old.ModifyIndex }); done || err != nil {
		return err
	}
	if old != nil {
		f.ProjectID, f.FloatingNetworkID, f.FloatingIPAddress, f.FloatingPortID =
			old.ProjectID, old.FloatingNetworkID, old.FloatingIPAddress, old.FloatingPortID
	} else {
		n, err := first[*structs.Network](t.txn, nil, TableNetworks, "id", f.FloatingNetworkID)
		if err != nil {
			return err
		}
		if n == nil {
			return structs.NetNotFound(structs.NetKindNetwork, f.FloatingNetworkID)
		}
		if !n.External {
			return badRequest("floatingip", "Network %s is not a valid external network", n.ID)
		}
		if f.FloatingPortID == "" {
			return structs.Errorf(structs.KindInvalid, "floating IP %s without a port", f.ID)
		}
		f.FloatingIPAddress = ""
		t.countCreate(f.ProjectID, structs.QuotaFloatingIP)
	}
	if err := t.associate(f); err != nil {
		return err
	}
	var oc uint64
	var ot int64
	var orev uint64
	if old != nil {
		oc, ot, orev = old.CreateIndex, old.CreatedAt, old.Revision
	}
	f.CreateIndex, f.CreatedAt, f.Revision = t.stamps(oc, ot, orev)
	f.ModifyIndex, f.UpdatedAt = t.index, t.at
	return t.insert(TableFloatingIPs, f)
}

// associate checks and completes a floating IP's association (its fixed
// IP, its router), or clears it when it has no port.
func (t *netTxn) associate(f *structs.FloatingIP) error {
	if f.PortID == "" {
		f.FixedIPAddress, f.RouterID = "", ""
		return nil
	}
	p, err := first[*structs.Port](t.txn, nil, TablePorts, "id", f.PortID)
	if err != nil {
		return err
	}
	if p == nil {
		return structs.NetNotFound(structs.NetKindPort, f.PortID)
	}
	if p.NetworkID == f.FloatingNetworkID {
		return badRequest("floatingip", "Port %s is on the floating IP's own network %s", p.ID, f.FloatingNetworkID)
	}
	var subnetID string
	if f.FixedIPAddress == "" {
		for _, ip := range p.FixedIPs {
			if a, err := netip.ParseAddr(ip.IPAddress); err == nil && a.Is4() {
				f.FixedIPAddress, subnetID = ip.IPAddress, ip.SubnetID
				break
			}
		}
		if f.FixedIPAddress == "" {
			return badRequest("floatingip", "Port %s does not have any IPv4 address", p.ID)
		}
	} else {
		for _, ip := range p.FixedIPs {
			if ip.IPAddress == f.FixedIPAddress {
				subnetID = ip.SubnetID
			}
		}
		if subnetID == "" {
			return badRequest("floatingip", "Port %s does not have fixed ip %s", p.ID, f.FixedIPAddress)
		}
	}
	others, err := list[*structs.FloatingIP](t.txn, nil, TableFloatingIPs, "port", p.ID)
	if err != nil {
		return err
	}
	for _, o := range others {
		if o.ID != f.ID && o.FixedIPAddress == f.FixedIPAddress && o.FloatingNetworkID == f.FloatingNetworkID {
			return structs.NetErrorf(structs.KindConflict, structs.ErrFloatingIPPortAlreadyAssociated,
				"Cannot associate floating IP %s (%s) with port %s using fixed IP %s, as that fixed IP already has a floating IP on external network %s.",
				f.FloatingIPAddress, f.ID, p.ID, f.FixedIPAddress, f.FloatingNetworkID)
		}
	}
	// The router: one with an interface on the fixed IP's subnet and its
	// gateway on the floating IP's network (the lowest id when several).
	ifaces, err := list[*structs.Port](t.txn, nil, TablePorts, "ip_prefix", subnetID)
	if err != nil {
		return err
	}
	var routers []string
	for _, ip := range ifaces {
		if ip.DeviceOwner != structs.DeviceOwnerRouterInterface {
			continue
		}
		r, err := first[*structs.Router](t.txn, nil, TableRouters, "id", ip.DeviceID)
		if err != nil {
			return err
		}
		if r != nil && r.Gateway != nil && r.Gateway.NetworkID == f.FloatingNetworkID {
			routers = append(routers, r.ID)
		}
	}
	if len(routers) == 0 {
		return structs.NetErrorf(structs.KindNotFound, structs.ErrExternalGatewayForFloatingIP,
			"External network %s is not reachable from subnet %s.  Therefore, cannot associate Port %s with a Floating IP.",
			f.FloatingNetworkID, subnetID, p.ID)
	}
	sort.Strings(routers)
	f.RouterID = routers[0]
	return nil
}

// disassociate clears a floating IP's association.
func (t *netTxn) disassociate(f *structs.FloatingIP) error {
	c := f.Copy()
	c.PortID, c.FixedIPAddress, c.RouterID = "", "", ""
	c.Revision++
	c.ModifyIndex, c.UpdatedAt = t.index, t.at
	return t.insert(TableFloatingIPs, c)
}

// RouterByID returns a router or nil.
func (s *StateStore) RouterByID(ws memdb.WatchSet, id string) (*structs.Router, error) {
	return netGet[*structs.Router](s.ReadTxn(), ws, structs.NetKindRouter, id)
}

// Routers lists every router, or one project's, oldest first.
func (s *StateStore) Routers(ws memdb.WatchSet, projectID string) ([]*structs.Router, error) {
	return netList[*structs.Router](s.ReadTxn(), ws, structs.NetKindRouter, projectID)
}

// FloatingIPByID returns a floating IP or nil.
func (s *StateStore) FloatingIPByID(ws memdb.WatchSet, id string) (*structs.FloatingIP, error) {
	return netGet[*structs.FloatingIP](s.ReadTxn(), ws, structs.NetKindFloatingIP, id)
}

// FloatingIPs lists every floating IP, or one project's, oldest first.
func (s *StateStore) FloatingIPs(ws memdb.WatchSet, projectID string) ([]*structs.FloatingIP, error) {
	return netList[*structs.FloatingIP](s.ReadTxn(), ws, structs.NetKindFloatingIP, projectID)
}

// FloatingIPsByPort lists the floating IPs associated with a port.
func (s *StateStore) FloatingIPsByPort(ws memdb.WatchSet, portID string) ([]*structs.FloatingIP, error) {
	return list[*structs.FloatingIP](s.ReadTxn(), ws, TableFloatingIPs, "port", portID)
}
