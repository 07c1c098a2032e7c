package server

import (
	"net"
	"net/netip"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// NetLease is the endpoint through which hosts' network agents record
// the DHCP leases their dnsmasq hands out (nova-dhcpbridge's role), and
// through which they are read.
type NetLease struct{ srv *Server }

// Report records a host's leases in one NetLeaseReport entry. Leases of
// ports that are gone are skipped by the FSM.
func (e *NetLease) Report(args *structs.NetLeaseReportRequest, reply *structs.WriteMeta) error {
	if err := e.srv.authenticateNode(args.AuthToken, args.HostID); err != nil {
		return err
	}
	if done, err := e.srv.forward("NetLease.Report", args, args, reply); done {
		return err
	}
	if args.HostID == "" {
		return structs.Errorf(structs.KindInvalid, "lease report without a host id")
	}
	for _, l := range args.Leases {
		if l == nil || l.PortID == "" {
			return structs.Errorf(structs.KindInvalid, "lease without a port id")
		}
		if _, err := netip.ParseAddr(l.IPAddress); err != nil {
			return structs.Errorf(structs.KindInvalid, "lease of port %s: bad address %q", l.PortID, l.IPAddress)
		}
		if _, err := net.ParseMAC(l.MACAddress); err != nil {
			return structs.Errorf(structs.KindInvalid, "lease of port %s: bad MAC %q", l.PortID, l.MACAddress)
		}
	}
	// The node secret stays out of the Raft log.
	entry := *args
	entry.AuthToken = ""
	index, err := e.srv.apply(structs.NetLeaseReportType, &entry)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// List reads leases (of ports, of a host, or all) as a blocking query.
func (e *NetLease) List(args *structs.NetLeaseListRequest, reply *structs.NetLeaseListResponse) error {
	if done, err := e.srv.forward("NetLease.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		leases, err := state.PortLeases(ws, args.PortIDs, args.HostID)
		reply.Leases = leases
		return leases, state.Index(fsm.TablePortLeases), err
	})
}
