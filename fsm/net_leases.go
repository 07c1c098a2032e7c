package fsm

import (
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TablePortLeases is the table of ports' DHCP leases, as the hosts'
// DHCP servers report them (NetLeaseReport entries).
const TablePortLeases = "port_leases"

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TablePortLeases,
			Indexes: map[string]*memdb.IndexSchema{
				"id":   idIndex("PortID"),
				"host": {Name: "host", Indexer: &memdb.StringFieldIndex{Field: "HostID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.PortLeaseSnapshot,
		table:      TablePortLeases,
		newRecord:  func() any { return new(structs.PortLease) },
	})
	registerApply(structs.NetLeaseReportType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var req structs.NetLeaseReportRequest
		if err := decodeBody(structs.NetLeaseReportType, body, &req); err != nil {
			return err
		}
		return s.ReportPortLeases(index, &req)
	})
}

// ReportPortLeases records a host's DHCP leases. A lease of a port that
// no longer exists is skipped (the port went while the report was on its
// way); a lease the same as the stored one is left alone. With Full the
// host's other leases are dropped, else those of the Released ports
// (when this host holds them).
func (s *StateStore) ReportPortLeases(index uint64, req *structs.NetLeaseReportRequest) error {
	if req.HostID == "" {
		return structs.Errorf(structs.KindInvalid, "lease report without a host")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	changed := false
	seen := make(map[string]bool, len(req.Leases))
	for _, l := range req.Leases {
		if l == nil || l.PortID == "" {
			return structs.Errorf(structs.KindInvalid, "lease report with a lease without a port")
		}
		seen[l.PortID] = true
		port, err := first[*structs.Port](txn, nil, TablePorts, "id", l.PortID)
		if err != nil {
			return err
		}
		if port == nil {
			continue
		}
		c := *l
		c.HostID = req.HostID
		c.NetworkID = port.NetworkID
		old, err := first[*structs.PortLease](txn, nil, TablePortLeases, "id", c.PortID)
		if err != nil {
			return err
		}
		if old != nil {
			o := *old
			o.CreateIndex, o.ModifyIndex = 0, 0
			if o == c {
				continue
			}
		}
		err = upsert(txn, TablePortLeases, index, &c,
			func(create, modify uint64) { c.CreateIndex, c.ModifyIndex = create, modify },
			func(o any) uint64 { return o.(*structs.PortLease).CreateIndex }, c.PortID)
		if err != nil {
			return err
		}
		changed = true
	}
	drop, err := leasesToDrop(txn, req, seen)
	if err != nil {
		return err
	}
	for _, l := range drop {
		if err := txn.Delete(TablePortLeases, l); err != nil {
			return err
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return commitAt(txn, index, TablePortLeases)
}

// leasesToDrop are the host's leases a report ends: with Full every one
// it did not list, else those of the Released ports.
func leasesToDrop(txn *memdb.Txn, req *structs.NetLeaseReportRequest, seen map[string]bool) ([]*structs.PortLease, error) {
	var out []*structs.PortLease
	if req.Full {
		held, err := list[*structs.PortLease](txn, nil, TablePortLeases, "host", req.HostID)
		if err != nil {
			return nil, err
		}
		for _, l := range held {
			if !seen[l.PortID] {
				out = append(out, l)
			}
		}
		return out, nil
	}
	for _, id := range req.Released {
		if seen[id] {
			continue
		}
		l, err := first[*structs.PortLease](txn, nil, TablePortLeases, "id", id)
		if err != nil {
			return nil, err
		}
		if l != nil && l.HostID == req.HostID {
			out = append(out, l)
		}
	}
	return out, nil
}

// PortLeases lists leases: of the given ports, else of a host, else all;
// by port id.
func (s *StateStore) PortLeases(ws memdb.WatchSet, portIDs []string, hostID string) ([]*structs.PortLease, error) {
	txn := s.ReadTxn()
	var out []*structs.PortLease
	switch {
	case len(portIDs) > 0:
		for _, id := range portIDs {
			l, err := first[*structs.PortLease](txn, ws, TablePortLeases, "id", id)
			if err != nil {
				return nil, err
			}
			if l != nil {
				out = append(out, l)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].PortID < out[j].PortID })
		return out, nil
	case hostID != "":
		return list[*structs.PortLease](txn, ws, TablePortLeases, "host", hostID)
	default:
		return list[*structs.PortLease](txn, ws, TablePortLeases)
	}
}
