package fsm

import (
	"bytes"
	"io"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// inRange makes a network create carry a segmentation config, as a
// server with vni_range configured proposes it.
func inRange(c *structs.NetChange, lo, hi, mtu int) *structs.NetChange {
	c.Segments = &structs.NetSegments{VNIMin: lo, VNIMax: hi, PhysnetMTU: mtu}
	return c
}

func (n *netFixture) network(id string) *structs.Network {
	n.t.Helper()
	net, err := n.f.State().NetworkByID(nil, id)
	if err != nil || net == nil {
		n.t.Fatalf("network %s: %v %v", id, net, err)
	}
	return net
}

func TestVNIRangeAllocationFreeAndExhaustion(t *testing.T) {
	n := newNetFixture(t)
	n.must(inRange(createNet("a", "p1"), 1000, 1002, 1500), inRange(createNet("b", "p1"), 1000, 1002, 1500))
	if a, b := n.network("a"), n.network("b"); a.SegmentationID != 1000 || b.SegmentationID != 1001 ||
		a.NetworkType != structs.NetTypeVXLAN || a.MTU != 1450 {
		t.Fatalf("a %+v b %+v", a, b)
	}
	n.must(inRange(createNet("c", "p2"), 1000, 1002, 1500))
	if err := n.apply(inRange(createNet("d", "p2"), 1000, 1002, 1500)); structs.ErrorType(err) != structs.ErrNoNetworkAvailable ||
		structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("exhausted range: %v", err)
	}
	// Deleting a network frees its VNI for the next create, lowest first.
	n.must(deleteOf(structs.NetKindNetwork, "b"))
	n.must(inRange(createNet("d", "p2"), 1000, 1002, 1500))
	if got := n.network("d").SegmentationID; got != 1001 {
		t.Fatalf("freed VNI not reused: %d", got)
	}
	// A wider range (the servers' config changed) continues above.
	n.must(inRange(createNet("e", "p2"), 1000, 1005, 9000))
	if e := n.network("e"); e.SegmentationID != 1003 || e.MTU != 8950 {
		t.Fatalf("e %+v", e)
	}
	// Without a config, an entry allocates as entries always did.
	n.must(createNet("old", "p1"))
	if o := n.network("old"); o.SegmentationID != 1 || o.MTU != structs.VXLANMTU {
		t.Fatalf("old-style entry: %+v", o)
	}
	// A config no server could have is refused, not applied.
	if err := n.apply(inRange(createNet("bad", "p1"), 10, 5, 1500)); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("bad range: %v", err)
	}
}

func TestProviderSegmentsAreUnique(t *testing.T) {
	n := newNetFixture(t)
	provider := func(id, typ, physnet string, seg int) *structs.NetChange {
		c := inRange(createNet(id, "admin"), 1000, 1999, 1500)
		c.Network.NetworkType, c.Network.PhysicalNetwork, c.Network.SegmentationID = typ, physnet, seg
		return c
	}
	n.must(provider("flat", structs.NetTypeFlat, "public", 0), provider("v100", structs.NetTypeVLAN, "physnet1", 100),
		provider("v100b", structs.NetTypeVLAN, "physnet2", 100), provider("x5", structs.NetTypeVXLAN, "", 5))
	if f := n.network("flat"); f.MTU != 1500 || f.SegmentationID != 0 {
		t.Fatalf("flat %+v", f)
	}
	if x := n.network("x5"); x.SegmentationID != 5 || x.MTU != 1450 {
		t.Fatalf("explicit VNI outside the range: %+v", x)
	}
	for _, tc := range []struct {
		c    *structs.NetChange
		want string
	}{
		{provider("flat2", structs.NetTypeFlat, "public", 0), structs.ErrFlatNetworkInUse},
		{provider("v100c", structs.NetTypeVLAN, "physnet1", 100), structs.ErrVlanIDInUse},
		{provider("x5b", structs.NetTypeVXLAN, "", 5), structs.ErrTunnelIDInUse},
	} {
		err := n.apply(tc.c)
		if structs.ErrorType(err) != tc.want || structs.KindOf(err) != structs.KindConflict {
			t.Fatalf("%s: %v, want %s", tc.c.Network.ID, err, tc.want)
		}
	}
	// The tenant range skips an explicit VNI taken inside it.
	n.must(provider("x1000", structs.NetTypeVXLAN, "", 1000), inRange(createNet("t", "p1"), 1000, 1999, 1500))
	if got := n.network("t").SegmentationID; got != 1001 {
		t.Fatalf("tenant VNI %d", got)
	}
	// An MTU above what the segment carries is refused; below is kept.
	big := inRange(createNet("big", "p1"), 1000, 1999, 1500)
	big.Network.MTU = 1500
	if err := n.apply(big); structs.ErrorType(err) != structs.ErrInvalidInput {
		t.Fatalf("MTU too big: %v", err)
	}
	small := inRange(createNet("small", "p1"), 1000, 1999, 1500)
	small.Network.MTU = 1400
	n.must(small)
	if got := n.network("small").MTU; got != 1400 {
		t.Fatalf("MTU %d", got)
	}
	// The segment is the network's for good: an update cannot move it.
	upd := n.network("t").Copy()
	upd.SegmentationID, upd.Name = 1500, "renamed"
	n.must(&structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindNetwork, Network: upd})
	if got := n.network("t"); got.SegmentationID != 1001 || got.Name != "renamed" {
		t.Fatalf("updated %+v", got)
	}
}

func TestSegmentsSurviveSnapshotRestore(t *testing.T) {
	n := newNetFixture(t)
	n.must(inRange(createNet("a", "p1"), 1000, 1001, 1500), inRange(createNet("b", "p1"), 1000, 1001, 1500))
	var buf bytes.Buffer
	if err := n.f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	r := &netFixture{t: t, f: testFSM(t), index: n.index}
	if err := r.f.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.network("a"), n.network("a")) || !reflect.DeepEqual(r.network("b"), n.network("b")) {
		t.Fatal("restored networks differ")
	}
	// The restored state knows which VNIs are taken: the range is full,
	// and freeing one gives it back.
	if err := r.apply(inRange(createNet("c", "p1"), 1000, 1001, 1500)); structs.ErrorType(err) != structs.ErrNoNetworkAvailable {
		t.Fatalf("after restore: %v", err)
	}
	r.must(deleteOf(structs.NetKindNetwork, "a"), inRange(createNet("c", "p1"), 1000, 1001, 1500))
	if got := r.network("c").SegmentationID; got != 1000 {
		t.Fatalf("after restore, VNI %d", got)
	}
}

// TestOldNetworksKeepTheirSegments: networks an older build allocated
// (VNIs from 1, entries without a config), restored from its snapshot,
// keep their segments and MTU when a range is configured; the range
// allocates around them, and an update of one leaves its MTU alone.
func TestOldNetworksKeepTheirSegments(t *testing.T) {
	n := newNetFixture(t)
	n.must(createNet("old1", "p1"), createNet("old2", "p1"))
	var buf bytes.Buffer
	if err := n.f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	r := &netFixture{t: t, f: testFSM(t), index: n.index}
	if err := r.f.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	r.must(inRange(createNet("new1", "p1"), 1, 10, 9000))
	if got := r.network("new1"); got.SegmentationID != 3 || got.MTU != 8950 {
		t.Fatalf("new network beside old ones: %+v", got)
	}
	upd := r.network("old1").Copy()
	upd.Name = "renamed"
	r.must(inRange(&structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindNetwork, Network: upd}, 1, 10, 9000))
	if got := r.network("old1"); got.SegmentationID != 1 || got.MTU != 1450 || got.Name != "renamed" {
		t.Fatalf("old network after an update: %+v", got)
	}
}

// TestLegacyLargeMTUSurvivesUpdates: an MTU an older build accepted
// above what the segment carries stays through updates that do not
// change it; changing it is checked.
func TestLegacyLargeMTUSurvivesUpdates(t *testing.T) {
	n := newNetFixture(t)
	big := createNet("big", "p1")
	big.Network.MTU = 9000
	n.must(big) // no config: accepted, as before the check
	upd := n.network("big").Copy()
	upd.Name = "renamed"
	n.must(inRange(&structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindNetwork, Network: upd}, 1, 10, 1500))
	if got := n.network("big"); got.MTU != 9000 || got.Name != "renamed" {
		t.Fatalf("after a rename: %+v", got)
	}
	upd = n.network("big").Copy()
	upd.MTU = 8000
	err := n.apply(inRange(&structs.NetChange{Op: structs.NetOpUpdate, Kind: structs.NetKindNetwork, Network: upd}, 1, 10, 1500))
	if structs.ErrorType(err) != structs.ErrInvalidInput {
		t.Fatalf("MTU change above the segment's: %v", err)
	}
}
