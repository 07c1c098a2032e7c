package structs

// DHCP leases of ports, as the hypervisor agents' DHCP servers hand
// them out (nova-dhcpbridge's role): recorded in state so operators and
// clients see which address a guest actually took, and when.

// PortLease is the DHCP lease a port's guest holds: the address the
// host's DHCP server (dnsmasq) leased to the port's MAC.
type PortLease struct {
	// PortID is the port, and the lease's id: a port has one lease per
	// address family at most, and the newest report wins.
	PortID    string
	NetworkID string
	// HostID is the host whose DHCP server leased it.
	HostID     string
	MACAddress string
	IPAddress  string
	// Hostname is what the guest asked for (DHCP option 12), or "".
	Hostname string
	// ExpiresAt is when the lease ends (Unix seconds; 0: never).
	ExpiresAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a copy.
func (l *PortLease) Copy() *PortLease {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

// NetLeaseReportRequest is a host's report of its DHCP leases
// (NetLease.Report): Leases are upserted; with Full, every other lease
// of HostID is dropped (the host's whole lease table), else Released
// names the ports whose leases ended.
type NetLeaseReportRequest struct {
	HostID   string
	Leases   []*PortLease
	Released []string
	Full     bool
	WriteRequest
}

// NetLeaseListRequest lists leases: of the ports PortIDs names, or of
// the host HostID, or all.
type NetLeaseListRequest struct {
	PortIDs []string
	HostID  string
	QueryOptions
}

// NetLeaseListResponse answers NetLeaseListRequest, by port id order.
type NetLeaseListResponse struct {
	Leases []*PortLease
	QueryMeta
}
