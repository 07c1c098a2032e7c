package fsm

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestPortLeasesReportReleaseAndSnapshot records leases of ports, skips
// those of unknown ports and unchanged ones, drops leases with Released
// and with a full report, and survives a snapshot.
func TestPortLeasesReportReleaseAndSnapshot(t *testing.T) {
	n := newNetFixture(t)
	n.must(createNet("n1", "p1"), createSubnet("s1", "n1", "10.0.0.0/24", "10.0.0.1"),
		createPort("a", "n1", "p1"), createPort("b", "n1", "p1"))
	report := func(req *structs.NetLeaseReportRequest) {
		t.Helper()
		n.index++
		if resp := apply(t, n.f, n.index, structs.NetLeaseReportType, req); resp != nil {
			t.Fatalf("report: %v", resp)
		}
	}
	lease := func(port, ip string) *structs.PortLease {
		return &structs.PortLease{PortID: port, MACAddress: macOf(port), IPAddress: ip, ExpiresAt: 100}
	}
	report(&structs.NetLeaseReportRequest{HostID: "h1", Leases: []*structs.PortLease{
		lease("a", "10.0.0.2"), lease("b", "10.0.0.3"), lease("gone", "10.0.0.9")}})
	got, err := n.f.State().PortLeases(nil, nil, "h1")
	if err != nil || len(got) != 2 || got[0].NetworkID != "n1" || got[0].HostID != "h1" {
		t.Fatalf("leases %+v, %v", got, err)
	}
	modify := got[0].ModifyIndex
	report(&structs.NetLeaseReportRequest{HostID: "h1", Leases: []*structs.PortLease{lease("a", "10.0.0.2")}})
	if l, _ := n.f.State().PortLeases(nil, []string{"a"}, ""); len(l) != 1 || l[0].ModifyIndex != modify {
		t.Fatalf("an unchanged lease was rewritten: %+v", l)
	}
	// Another host cannot release h1's lease; h1 can.
	report(&structs.NetLeaseReportRequest{HostID: "h2", Released: []string{"b"}})
	if l, _ := n.f.State().PortLeases(nil, []string{"b"}, ""); len(l) != 1 {
		t.Fatal("another host released the lease")
	}
	report(&structs.NetLeaseReportRequest{HostID: "h1", Released: []string{"b"}})
	if l, _ := n.f.State().PortLeases(nil, []string{"b"}, ""); len(l) != 0 {
		t.Fatal("the released lease remains")
	}

	var buf bytes.Buffer
	if err := n.f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	want, _ := n.f.State().PortLeases(nil, nil, "")
	back, _ := g.State().PortLeases(nil, nil, "")
	if len(back) != 1 || !reflect.DeepEqual(want, back) {
		t.Fatalf("restored %+v, want %+v", back, want)
	}

	// A full report with nothing drops the host's leases.
	report(&structs.NetLeaseReportRequest{HostID: "h1", Full: true})
	if l, _ := n.f.State().PortLeases(nil, nil, ""); len(l) != 0 {
		t.Fatalf("leases after an empty full report: %+v", l)
	}
	n.index++
	if resp := apply(t, n.f, n.index, structs.NetLeaseReportType, &structs.NetLeaseReportRequest{}); resp == nil {
		t.Fatal("a report without a host was accepted")
	}
}

// populatePortLeases fills the lease table for the snapshot test (after
// populateNetworks, whose port "vm" it leases).
func populatePortLeases(t *testing.T, s *StateStore) {
	t.Helper()
	err := s.ReportPortLeases(6, &structs.NetLeaseReportRequest{HostID: "h1", Leases: []*structs.PortLease{
		{PortID: "vm", MACAddress: macOf("vm"), IPAddress: "10.0.0.2", Hostname: "web", ExpiresAt: 86400}}})
	if err != nil {
		t.Fatal(err)
	}
}
