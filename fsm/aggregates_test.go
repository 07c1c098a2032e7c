package fsm

import (
	"strconv"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func (q *quotaFixture) agg(e *structs.AggregateEntry) error {
	return q.s.ApplyAggregate(q.next(), e)
}

func (q *quotaFixture) newAgg(name, az string) int64 {
	q.t.Helper()
	e := &structs.AggregateEntry{Op: structs.AggregateOpCreate, UUID: "u-" + name, Name: name, At: 1}
	if az != "" {
		e.AZ = &az
	}
	q.must(q.agg(e))
	return int64(q.index)
}

func wantKind(t *testing.T, err error, kind structs.ErrorKind, msg string) {
	t.Helper()
	if structs.KindOf(err) != kind || (msg != "" && structs.Message(err) != msg) {
		t.Fatalf("got %v, want %s %q", err, kind, msg)
	}
}

func strp(s string) *string { return &s }

func TestAggregatesAndZones(t *testing.T) {
	q := newQuotaFixture(t)
	h2 := bootHost("h2")
	h2.AZ = "" // no zone of its own: the default
	q.must(q.s.RegisterHost(q.next(), h2))
	zone := func(id string) string {
		t.Helper()
		h, _ := q.s.HostByID(nil, id)
		z, err := q.s.HostZone(nil, h)
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	if zone("h1") != "nova" || zone("h2") != structs.DefaultAvailabilityZone {
		t.Fatal("zones before aggregates")
	}

	london := q.newAgg("london-agg", "london")
	a, _ := q.s.AggregateByID(nil, london)
	if a == nil || a.UUID != "u-london-agg" || a.AZ() != "london" || a.CreateIndex != uint64(london) {
		t.Fatalf("aggregate %+v", a)
	}
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpCreate, Name: "london-agg"}), structs.KindConflict, "Aggregate london-agg already exists.")
	ssd := q.newAgg("ssd", "")

	q.must(q.agg(&structs.AggregateEntry{Op: structs.AggregateOpAddHost, AggregateID: london, HostID: "h2"}))
	q.must(q.agg(&structs.AggregateEntry{Op: structs.AggregateOpAddHost, AggregateID: ssd, HostID: "h2"}))
	if zone("h2") != "london" || zone("h1") != "nova" {
		t.Fatalf("h2 in %s", zone("h2"))
	}
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpAddHost, AggregateID: london, HostID: "h2"}),
		structs.KindConflict, "The aggregate "+itoa(london)+" already has host hv-h2.")
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpAddHost, AggregateID: london, HostID: "h9"}),
		structs.KindNotFound, "Compute host h9 could not be found.")
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpAddHost, AggregateID: 999, HostID: "h1"}),
		structs.KindNotFound, "Aggregate 999 could not be found.")

	// One zone per host: a second zone's aggregate cannot take h2 (409),
	// nor can the zone-less aggregate holding h2 become another zone (400).
	paris := q.newAgg("paris-agg", "paris")
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpAddHost, AggregateID: paris, HostID: "h2"}),
		structs.KindConflict, "Cannot add host to aggregate "+itoa(paris)+". Reason: One or more hosts already in availability zone(s) ['london'].")
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpUpdate, AggregateID: ssd, AZ: strp("paris")}),
		structs.KindInvalid, "Cannot update aggregate "+itoa(ssd)+". Reason: One or more hosts already in availability zone(s) ['london'].")
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpSetMetadata, AggregateID: ssd, SetMetadata: map[string]string{"availability_zone": "paris"}}),
		structs.KindInvalid, "Cannot update metadata of aggregate "+itoa(ssd)+". Reason: One or more hosts already in availability zone(s) ['london'].")
	// The same zone is no conflict.
	q.must(q.agg(&structs.AggregateEntry{Op: structs.AggregateOpSetMetadata, AggregateID: ssd,
		SetMetadata: map[string]string{"availability_zone": "london", "ssd": "true"}}))
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpSetMetadata, AggregateID: ssd, DeleteMetadata: []string{"availability_zone"}}),
		structs.KindInvalid, "Cannot update metadata of aggregate "+itoa(ssd)+". Reason: Aggregate ssd does not support empty named availability zone.")
	q.must(q.agg(&structs.AggregateEntry{Op: structs.AggregateOpSetMetadata, AggregateID: ssd, DeleteMetadata: []string{"ssd"},
		SetMetadata: map[string]string{"disk": "fast"}, At: 5}))
	a, _ = q.s.AggregateByID(nil, ssd)
	if a.Metadata["disk"] != "fast" || a.Metadata["ssd"] != "" || a.UpdatedAt == 0 {
		t.Fatalf("metadata %+v", a)
	}

	// An instance on h2 pins its zone: renaming it is refused.
	inst := q.instance("p1", "u1", 0)
	q.must(q.create(inst))
	res, _ := structs.FlavorResources(inst.Flavor)
	q.must(q.s.ApplyPlan(q.next(), &structs.PlanApplyEntry{Placements: []*structs.Allocation{{ID: "a1", InstanceID: inst.ID, HostID: "h2",
		Resources: res, DesiredState: structs.AllocDesiredRunning}}}))
	if got, _ := q.s.InstanceByID(nil, inst.ID); got.AZ != "london" {
		t.Fatalf("placed instance in zone %q, want the aggregate's", got.AZ)
	}
	q.must(q.agg(&structs.AggregateEntry{Op: structs.AggregateOpRemoveHost, AggregateID: ssd, HostID: "h2"}))
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpUpdate, AggregateID: london, AZ: strp("berlin")}),
		structs.KindInvalid, "Cannot update aggregate "+itoa(london)+". Reason: One or more hosts contain instances in this zone.")
	q.must(q.agg(&structs.AggregateEntry{Op: structs.AggregateOpUpdate, AggregateID: london, Name: "london-2"}))
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpUpdate, AggregateID: london, Name: "ssd"}), structs.KindConflict, "Aggregate ssd already exists.")
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpUpdate, AggregateID: london, AZ: strp("")}),
		structs.KindInvalid, "Cannot update aggregate "+itoa(london)+". Reason: Aggregate london-2 does not support empty named availability zone.")

	zones, _ := q.s.AvailabilityZones(nil)
	if len(zones) != 2 || len(zones["london"]) != 1 || len(zones["nova"]) != 1 {
		t.Fatalf("zones %v", zones)
	}
	if byHost, _ := q.s.AggregatesByHost(nil, "h2"); len(byHost) != 1 || byHost[0].Name != "london-2" {
		t.Fatalf("h2 in %v", byHost)
	}

	// Only an empty aggregate can be deleted.
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpDelete, AggregateID: london}),
		structs.KindInvalid, "Cannot remove host from aggregate "+itoa(london)+". Reason: Host aggregate is not empty.")
	wantKind(t, q.agg(&structs.AggregateEntry{Op: structs.AggregateOpRemoveHost, AggregateID: paris, HostID: "h2"}), structs.KindNotFound, "")
	q.must(q.agg(&structs.AggregateEntry{Op: structs.AggregateOpDelete, AggregateID: ssd}))
	q.must(q.agg(&structs.AggregateEntry{Op: structs.AggregateOpRemoveHost, AggregateID: london, HostID: "h2"}))
	if zone("h2") != "nova" {
		t.Fatalf("h2 back in %s", zone("h2"))
	}
	if all, _ := q.s.Aggregates(nil); len(all) != 2 {
		t.Fatalf("%d aggregates left", len(all))
	}
	wantKind(t, q.agg(&structs.AggregateEntry{Op: "paint", AggregateID: london}), structs.KindInvalid, "")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
