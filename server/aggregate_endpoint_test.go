package server

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestAggregatesZonesAndTargetHosts(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	seedFlavors(t, s)
	for _, id := range []string{"h1", "h2", "h3"} {
		registerHost(t, s, testHost(id, 8, 16384))
	}
	var agg structs.SingleAggregateResponse
	if err := s.RPC("Aggregate.Create", &structs.AggregateCreateRequest{Name: "rack-1", AZ: "london"}, &agg); err != nil {
		t.Fatal(err)
	}
	a := agg.Aggregate
	if a.ID == 0 || a.UUID == "" || a.AZ() != "london" || a.CreatedAt == 0 {
		t.Fatalf("aggregate %+v", a)
	}
	for _, bad := range []*structs.AggregateCreateRequest{{Name: ""}, {Name: "x", AZ: "a:b"}} {
		if err := s.RPC("Aggregate.Create", bad, &agg); structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("%+v: %v", bad, err)
		}
	}
	if err := s.RPC("Aggregate.Create", &structs.AggregateCreateRequest{Name: "rack-1"}, &agg); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("same name: %v", err)
	}
	// Hosts by name or id.
	if err := s.RPC("Aggregate.AddHost", &structs.AggregateHostRequest{AggregateID: a.ID, Host: "hv-h2"}, &agg); err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Aggregate.AddHost", &structs.AggregateHostRequest{AggregateID: a.ID, Host: "h3"}, &agg); err != nil {
		t.Fatal(err)
	}
	if got := agg.Aggregate.Hosts; len(got) != 2 || got[0] != "h2" || got[1] != "h3" {
		t.Fatalf("hosts %v", got)
	}
	if err := s.RPC("Aggregate.AddHost", &structs.AggregateHostRequest{AggregateID: a.ID, Host: "nope"}, &agg); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("unknown host: %v", err)
	}
	if err := s.RPC("Aggregate.SetMetadata", &structs.AggregateMetadataRequest{AggregateID: a.ID,
		Set: map[string]string{"ssd": "true"}}, &agg); err != nil || agg.Aggregate.Metadata["ssd"] != "true" {
		t.Fatalf("metadata %v %v", agg.Aggregate, err)
	}
	var list structs.AggregateListResponse
	if err := s.RPC("Aggregate.List", &structs.AggregateListRequest{}, &list); err != nil || len(list.Aggregates) != 1 {
		t.Fatalf("list %v %v", list.Aggregates, err)
	}

	// A boot into the aggregate's zone lands on its hosts; "nova" is
	// what is left.
	create := func(req structs.InstanceCreateRequest) (*structs.Instance, error) {
		req.Name, req.FlavorID, req.ImageID = "web", "m1.tiny", "cirros"
		var resp structs.InstanceCreateResponse
		if err := s.RPC("Instance.Create", &req, &resp); err != nil {
			return nil, err
		}
		return waitSettled(t, s, ids(&resp))[resp.Instances[0].ID], nil
	}
	for _, zone := range []string{"london", "nova"} {
		inst, err := create(structs.InstanceCreateRequest{AZ: zone})
		if err != nil {
			t.Fatal(err)
		}
		inLondon := inst.HostID == "h2" || inst.HostID == "h3"
		if inst.HostID == "" || inLondon != (zone == "london") || inst.AZ != zone {
			t.Fatalf("zone %s: placed on %q in %q", zone, inst.HostID, inst.AZ)
		}
	}
	// Without a zone the instance records where it landed.
	inst, err := create(structs.InstanceCreateRequest{TargetHost: "hv-h3"})
	if err != nil {
		t.Fatal(err)
	}
	if inst.HostID != "h3" || inst.TargetHostID != "h3" || inst.AZ != "london" {
		t.Fatalf("targeted instance on %q in %q", inst.HostID, inst.AZ)
	}
	if _, err := create(structs.InstanceCreateRequest{TargetHost: "hv-h9"}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("unknown target: %v", err)
	}
	// A target outside the asked zone is a NoValidHost that says so.
	inst, err = create(structs.InstanceCreateRequest{AZ: "nova", TargetHost: "h2"})
	if err != nil {
		t.Fatal(err)
	}
	if inst.Status() != "ERROR" || inst.Fault.Message != "No valid host was found. 0/3 hosts: 2 not the requested host, 1 not in zone nova" {
		t.Fatalf("fault %+v", inst.Fault)
	}

	// The zone of hosts with instances cannot change; an aggregate with
	// hosts cannot go.
	if err := s.RPC("Aggregate.Update", &structs.AggregateUpdateRequest{AggregateID: a.ID, AZ: strPtr("paris")}, &agg); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("zone change with instances: %v", err)
	}
	if err := s.RPC("Aggregate.Update", &structs.AggregateUpdateRequest{AggregateID: a.ID, Name: strPtr("rack-one")}, &agg); err != nil || agg.Aggregate.Name != "rack-one" {
		t.Fatalf("rename %v %v", agg.Aggregate, err)
	}
	if err := s.RPC("Aggregate.Delete", &structs.AggregateDeleteRequest{AggregateID: a.ID}, &structs.GenericResponse{}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("delete with hosts: %v", err)
	}
	for _, h := range []string{"h2", "h3"} {
		if err := s.RPC("Aggregate.RemoveHost", &structs.AggregateHostRequest{AggregateID: a.ID, Host: h}, &agg); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RPC("Aggregate.RemoveHost", &structs.AggregateHostRequest{AggregateID: a.ID, Host: "h2"}, &agg); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("remove twice: %v", err)
	}
	if err := s.RPC("Aggregate.Delete", &structs.AggregateDeleteRequest{AggregateID: a.ID}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Aggregate.Get", &structs.AggregateSpecificRequest{AggregateID: a.ID}, &agg); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("deleted aggregate: %v", err)
	}
	// Its zone is gone with it.
	if _, err := create(structs.InstanceCreateRequest{AZ: "london"}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("boot into a zone without hosts: %v", err)
	}
}

func strPtr(s string) *string { return &s }
