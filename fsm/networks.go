package fsm

import (
	"fmt"
	"net/netip"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Tables of networks and subnets, for Index and blocking queries.
const (
	TableNetworks = "networks"
	TableSubnets  = "subnets"
)

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableNetworks,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableSubnets,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("ID"),
				"network": {Name: "network", Indexer: &memdb.StringFieldIndex{Field: "NetworkID"}},
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.NetworkSnapshot,
		table:      TableNetworks,
		newRecord:  func() any { return new(structs.Network) },
	})
	registerSnapshot(snapshotTable{
		recordType: structs.SubnetSnapshot,
		table:      TableSubnets,
		newRecord:  func() any { return new(structs.Subnet) },
	})
}

// network applies a change of a network.
func (t *netTxn) network(c *structs.NetChange) error {
	if c.Op == structs.NetOpDelete {
		return t.deleteNetwork(c.ID)
	}
	if c.Network == nil || c.Network.ID == "" {
		return structs.Errorf(structs.KindInvalid, "network change without a network")
	}
	n := c.Network.Copy()
	if err := n.Validate(); err != nil {
		return err
	}
	old, err := first[*structs.Network](t.txn, nil, TableNetworks, "id", n.ID)
	if err != nil {
		return err
	}
	if done, err := checkChange(c, structs.NetKindNetwork, n.ID, old != nil, func() uint64 { return old.ModifyIndex }); done || err != nil {
		return err
	}
	seg := structs.DefaultNetSegments
	if c.Segments != nil {
		seg = *c.Segments
		if err := seg.Validate(); err != nil {
			return structs.Errorf(structs.KindInvalid, "network %s: %v", n.ID, err)
		}
	}
	if old == nil {
		if n.NetworkType == "" {
			n.NetworkType = structs.NetTypeVXLAN
		}
		// The input's own error comes before an exhausted range.
		if err := networkMTU(n, seg, c.Segments != nil); err != nil {
			return err
		}
		if err := t.allocateSegment(n, seg); err != nil {
			return err
		}
		t.countCreate(n.ProjectID, structs.QuotaNetwork)
	} else {
		// The segment is the network's for good.
		n.NetworkType, n.PhysicalNetwork, n.SegmentationID = old.NetworkType, old.PhysicalNetwork, old.SegmentationID
		if old.Shared && !n.Shared {
			if err := t.checkUnshare(n); err != nil {
				return err
			}
		}
		// Only a changed MTU is checked: a network an older build let
		// have a larger one keeps it through other updates.
		if err := networkMTU(n, seg, c.Segments != nil && n.MTU != old.MTU); err != nil {
			return err
		}
	}
	if n.IsDefault && n.External {
		nets, err := list[*structs.Network](t.txn, nil, TableNetworks)
		if err != nil {
			return err
		}
		for _, o := range nets {
			if o.ID != n.ID && o.IsDefault && o.External {
				return structs.NetErrorf(structs.KindConflict, structs.ErrDefaultExternalNetworkExists,
					"Unable to complete operation on network %s. There is already a default external network %s.", n.ID, o.ID)
			}
		}
	}
	var oc uint64
	var ot int64
	var orev uint64
	if old != nil {
		oc, ot, orev = old.CreateIndex, old.CreatedAt, old.Revision
	}
	n.CreateIndex, n.CreatedAt, n.Revision = t.stamps(oc, ot, orev)
	n.ModifyIndex, n.UpdatedAt = t.index, t.at
	return t.insert(TableNetworks, n)
}

// allocateSegment gives a new VXLAN network the lowest free VNI of the
// range the change carries, and checks that an explicit segment is
// free. A VNI is free again once its network is deleted: the used set
// is read from the networks themselves, as a subnet's free addresses
// are read from its ports.
func (t *netTxn) allocateSegment(n *structs.Network, seg structs.NetSegments) error {
	nets, err := list[*structs.Network](t.txn, nil, TableNetworks)
	if err != nil {
		return err
	}
	switch n.NetworkType {
	case structs.NetTypeVXLAN:
		used := map[int]bool{}
		for _, o := range nets {
			if o.NetworkType == structs.NetTypeVXLAN {
				used[o.SegmentationID] = true
			}
		}
		if n.SegmentationID == 0 {
			for vni := seg.VNIMin; vni <= seg.VNIMax; vni++ {
				if !used[vni] {
					n.SegmentationID = vni
					return nil
				}
			}
			return structs.NetErrorf(structs.KindUnavailable, structs.ErrNoNetworkAvailable,
				"Unable to create the network. No tenant network is available for allocation.")
		}
		if used[n.SegmentationID] {
			return structs.NetErrorf(structs.KindConflict, structs.ErrTunnelIDInUse,
				"Unable to create the network. The tunnel ID %d is in use.", n.SegmentationID)
		}
	case structs.NetTypeFlat, structs.NetTypeVLAN:
		for _, o := range nets {
			if o.NetworkType != n.NetworkType || o.PhysicalNetwork != n.PhysicalNetwork || o.SegmentationID != n.SegmentationID {
				continue
			}
			if n.NetworkType == structs.NetTypeFlat {
				return structs.NetErrorf(structs.KindConflict, structs.ErrFlatNetworkInUse,
					"Unable to create the flat network. Physical network %s is in use.", n.PhysicalNetwork)
			}
			return structs.NetErrorf(structs.KindConflict, structs.ErrVlanIDInUse,
				"Unable to create the network. The VLAN %d on physical network %s is in use.", n.SegmentationID, n.PhysicalNetwork)
		}
	}
	return nil
}

// networkMTU fills a network's MTU from the physical MTU when none was
// asked for, and refuses one larger than its segment carries. Only a
// change that carries its segmentation config is refused: an entry from
// before the check existed must apply as it did.
func networkMTU(n *structs.Network, seg structs.NetSegments, checked bool) error {
	limit := seg.MaxMTU(n.NetworkType)
	if n.MTU == 0 {
		n.MTU = limit
		return nil
	}
	if checked && n.MTU > limit {
		return structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput,
			"Invalid input for operation: Requested MTU is too big, maximum is %d.", limit)
	}
	return nil
}

// checkUnshare refuses to stop sharing a network other projects use.
func (t *netTxn) checkUnshare(n *structs.Network) error {
	ports, err := list[*structs.Port](t.txn, nil, TablePorts, "network", n.ID)
	if err != nil {
		return err
	}
	for _, p := range ports {
		if p.ProjectID != "" && p.ProjectID != n.ProjectID {
			return structs.NetErrorf(structs.KindConflict, structs.ErrInvalidSharedSetting,
				"Unable to reconfigure sharing settings for network %s. Multiple tenants are using it.", n.ID)
		}
	}
	return nil
}

// deleteNetwork deletes a network without ports, and its subnets.
func (t *netTxn) deleteNetwork(id string) error {
	n, err := first[*structs.Network](t.txn, nil, TableNetworks, "id", id)
	if err != nil {
		return err
	}
	if n == nil {
		return structs.NetNotFound(structs.NetKindNetwork, id)
	}
	ports, err := list[*structs.Port](t.txn, nil, TablePorts, "network", id)
	if err != nil {
		return err
	}
	if len(ports) > 0 {
		return structs.NetErrorf(structs.KindConflict, structs.ErrNetworkInUse,
			"Unable to complete operation on network %s. There are one or more ports still in use on the network.", id)
	}
	subnets, err := list[*structs.Subnet](t.txn, nil, TableSubnets, "network", id)
	if err != nil {
		return err
	}
	for _, s := range subnets {
		if err := t.remove(TableSubnets, s); err != nil {
			return err
		}
	}
	return t.remove(TableNetworks, n)
}

// subnet applies a change of a subnet.
func (t *netTxn) subnet(c *structs.NetChange) error {
	if c.Op == structs.NetOpDelete {
		return t.deleteSubnet(c.ID)
	}
	if c.Subnet == nil || c.Subnet.ID == "" {
		return structs.Errorf(structs.KindInvalid, "subnet change without a subnet")
	}
	s := c.Subnet.Copy()
	if err := s.Normalize(); err != nil {
		return err
	}
	old, err := first[*structs.Subnet](t.txn, nil, TableSubnets, "id", s.ID)
	if err != nil {
		return err
	}
	if done, err := checkChange(c, structs.NetKindSubnet, s.ID, old != nil, func() uint64 { return old.ModifyIndex }); done || err != nil {
		return err
	}
	n, err := first[*structs.Network](t.txn, nil, TableNetworks, "id", s.NetworkID)
	if err != nil {
		return err
	}
	if n == nil {
		return structs.NetNotFound(structs.NetKindNetwork, s.NetworkID)
	}
	if old != nil {
		s.NetworkID, s.CIDR, s.IPVersion = old.NetworkID, old.CIDR, old.IPVersion
	} else {
		if err := t.checkSubnetOverlap(s); err != nil {
			return err
		}
		t.countCreate(s.ProjectID, structs.QuotaSubnet)
	}
	var oc uint64
	var ot int64
	var orev uint64
	if old != nil {
		oc, ot, orev = old.CreateIndex, old.CreatedAt, old.Revision
	}
	s.CreateIndex, s.CreatedAt, s.Revision = t.stamps(oc, ot, orev)
	s.ModifyIndex, s.UpdatedAt = t.index, t.at
	return t.insert(TableSubnets, s)
}

// checkSubnetOverlap refuses a subnet whose CIDR overlaps another of its
// network's.
func (t *netTxn) checkSubnetOverlap(s *structs.Subnet) error {
	p, err := netip.ParsePrefix(s.CIDR)
	if err != nil {
		return err
	}
	others, err := list[*structs.Subnet](t.txn, nil, TableSubnets, "network", s.NetworkID)
	if err != nil {
		return err
	}
	for _, o := range others {
		if op, err := netip.ParsePrefix(o.CIDR); err == nil && op.Overlaps(p) {
			return structs.NetErrorf(structs.KindInvalid, structs.ErrInvalidInput,
				"Invalid input for operation: Requested subnet with cidr: %s for network: %s overlaps with another subnet.", s.CIDR, s.NetworkID)
		}
	}
	return nil
}

// deleteSubnet deletes a subnet no port has an address on.
func (t *netTxn) deleteSubnet(id string) error {
	s, err := first[*structs.Subnet](t.txn, nil, TableSubnets, "id", id)
	if err != nil {
		return err
	}
	if s == nil {
		return structs.NetNotFound(structs.NetKindSubnet, id)
	}
	it, err := t.txn.Get(TablePorts, "ip_prefix", id)
	if err != nil {
		return fmt.Errorf("ports of subnet %s: %w", id, err)
	}
	if it.Next() != nil {
		return structs.NetErrorf(structs.KindConflict, structs.ErrSubnetInUse,
			"Unable to complete operation on subnet %s: One or more ports have an IP allocation from this subnet.", id)
	}
	return t.remove(TableSubnets, s)
}

// NetworkByID returns a network or nil.
func (s *StateStore) NetworkByID(ws memdb.WatchSet, id string) (*structs.Network, error) {
	return netGet[*structs.Network](s.ReadTxn(), ws, structs.NetKindNetwork, id)
}

// SubnetByID returns a subnet or nil.
func (s *StateStore) SubnetByID(ws memdb.WatchSet, id string) (*structs.Subnet, error) {
	return netGet[*structs.Subnet](s.ReadTxn(), ws, structs.NetKindSubnet, id)
}

// Networks lists every network, oldest first.
func (s *StateStore) Networks(ws memdb.WatchSet) ([]*structs.Network, error) {
	return netList[*structs.Network](s.ReadTxn(), ws, structs.NetKindNetwork, "")
}

// Subnets lists every subnet, or one network's, oldest first.
func (s *StateStore) Subnets(ws memdb.WatchSet, networkID string) ([]*structs.Subnet, error) {
	return netList[*structs.Subnet](s.ReadTxn(), ws, structs.NetKindSubnet, networkID)
}

// sortByCreate orders objects by creation, ties by id, so that lists
// are stable and oldest first.
func sortByCreate[T any](objs []T, key func(T) (uint64, string)) {
	sort.SliceStable(objs, func(i, j int) bool {
		ci, ii := key(objs[i])
		cj, ij := key(objs[j])
		if ci != cj {
			return ci < cj
		}
		return ii < ij
	})
}
