package scheduler

import (
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func aggTopology(aggs ...*structs.Aggregate) *Topology {
	topo := emptyTopology()
	for _, a := range aggs {
		for _, h := range a.Hosts {
			topo.HostAggregates[h] = append(topo.HostAggregates[h], a)
			if az := a.AZ(); az != "" {
				topo.HostZones[h] = az
			}
		}
	}
	return topo
}

func TestAggregateSpecsParse(t *testing.T) {
	got := aggregateSpecs(map[string]string{
		"aggregate_instance_extra_specs:ssd": "true", "gpu": "<in> nvidia", "hw:cpu_policy": "dedicated",
		"resources:VCPU": "2", "aggregate_instance_extra_specs:": "x",
	})
	var keys []string
	for _, s := range got {
		keys = append(keys, s.key)
	}
	if !reflect.DeepEqual(keys, []string{"ssd"}) {
		t.Fatalf("keys %v", keys)
	}
}

func TestAggregateInstanceExtraSpecsFilter(t *testing.T) {
	topo := aggTopology(
		&structs.Aggregate{ID: 1, Hosts: []string{"a"}, Metadata: map[string]string{"ssd": "true", "gpu": "nvidia-a100, amd"}},
		&structs.Aggregate{ID: 2, Hosts: []string{"b"}, Metadata: map[string]string{"ssd": "false"}},
	)
	f := AggregateInstanceExtraSpecsFilter{}
	for _, c := range []struct {
		specs []string
		host  string
		ok    bool
	}{
		{[]string{"aggregate_instance_extra_specs:ssd=true"}, "a", true},
		{[]string{"aggregate_instance_extra_specs:ssd=true"}, "b", false},
		{[]string{"aggregate_instance_extra_specs:ssd=true"}, "c", false},
		{[]string{"ssd=true"}, "c", true}, // unscoped keys are not read (the filter runs by default)
		{[]string{"aggregate_instance_extra_specs:gpu=<in> amd"}, "a", true},
		{[]string{"aggregate_instance_extra_specs:gpu=s== amd"}, "a", true},
		{[]string{"aggregate_instance_extra_specs:gpu=nvidia"}, "a", false},
		{[]string{"aggregate_instance_extra_specs:ssd=true", "aggregate_instance_extra_specs:gpu=amd"}, "a", true},
		{[]string{"aggregate_instance_extra_specs:ssd=true", "aggregate_instance_extra_specs:gpu=intel"}, "a", false},
		{[]string{"hw:cpu_policy=dedicated", "capabilities:arch=x86_64"}, "c", true}, // other scopes are not read
		{nil, "c", true},
	} {
		inst := testInstance("i", small(c.specs...))
		req, _ := boundRequest(t, topo, inst)
		ok, reason := f.Filter(NewHostView(testHost(c.host)), req)
		if ok != c.ok || (!ok && reason != "aggregate metadata mismatch") {
			t.Errorf("%v on %s: (%v, %q), want %v", c.specs, c.host, ok, reason, c.ok)
		}
	}
	if f.applies(mustRequest(t, testInstance("i", small("aggregate_instance_extra_specs:ssd=true")))) {
		t.Fatal("applies without a topology")
	}
}

func TestAggregateMultiTenancyIsolation(t *testing.T) {
	topo := aggTopology(
		&structs.Aggregate{ID: 1, Hosts: []string{"a"}, Metadata: map[string]string{"filter_tenant_id": "p1,p2"}},
		&structs.Aggregate{ID: 2, Hosts: []string{"b"}, Metadata: map[string]string{"filter_tenant_id_2": "p3", "x": "y"}},
		&structs.Aggregate{ID: 3, Hosts: []string{"c"}, Metadata: map[string]string{"other": "p1"}},
	)
	f := AggregateMultiTenancyIsolation{}
	for _, c := range []struct {
		project, host string
		ok            bool
	}{
		{"p1", "a", true}, {"p2", "a", true}, {"p3", "a", false},
		{"p3", "b", true}, {"p1", "b", false},
		{"p1", "c", true}, {"p9", "d", true},
	} {
		inst := testInstance("i", small())
		inst.ProjectID = c.project
		req, _ := boundRequest(t, topo, inst)
		ok, reason := f.Filter(NewHostView(testHost(c.host)), req)
		if ok != c.ok || (!ok && reason != "isolated to other projects") {
			t.Errorf("%s on %s: (%v, %q), want %v", c.project, c.host, ok, reason, c.ok)
		}
	}
	req, _ := boundRequest(t, aggTopology(&structs.Aggregate{Hosts: []string{"a"}, Metadata: map[string]string{"k": "v"}}), testInstance("i", small()))
	if f.applies(req) {
		t.Fatal("applies without isolated aggregates")
	}
}

func TestAvailabilityZoneFilterUsesEffectiveZones(t *testing.T) {
	topo := aggTopology(&structs.Aggregate{ID: 1, Hosts: []string{"a"}, Metadata: map[string]string{"availability_zone": "london"}})
	f := AvailabilityZoneFilter{}
	for _, c := range []struct {
		zone string
		host *structs.Host
		ok   bool
	}{
		{"london", testHost("a", withAZ("az1")), true}, // the aggregate's zone wins
		{"az1", testHost("a", withAZ("az1")), false},
		{"az1", testHost("b", withAZ("az1")), true}, // the agent's zone
		{"nova", testHost("c", withAZ("")), true},   // the default zone
		{"london", testHost("c", withAZ("")), false},
	} {
		inst := testInstance("i", small())
		inst.AZ = c.zone
		req, _ := boundRequest(t, topo, inst)
		if ok, _ := f.Filter(NewHostView(c.host), req); ok != c.ok {
			t.Errorf("zone %s on %s: %v, want %v", c.zone, c.host.ID, ok, c.ok)
		}
	}
}
