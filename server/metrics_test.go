package server

import (
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/stratus-cloud/stratus/structs"
)

// TestPlacementFailureMetrics: a failure counts once for each filter that
// rejected hosts; with no hosts, or a request no filter could judge, it
// counts under no_hosts or invalid_request.
func TestPlacementFailureMetrics(t *testing.T) {
	m := newServerMetrics()
	m.observePlacementFailures([]*structs.PlacementFailure{
		{InstanceID: "a", Filtered: map[string]int{"not in zone az2": 3, "host down": 1},
			FilteredBy: map[string]int{"AvailabilityZoneFilter": 3, "ComputeFilter": 1}, HostsEvaluated: 4},
		{InstanceID: "b", Filtered: map[string]int{"not in zone az2": 4},
			FilteredBy: map[string]int{"AvailabilityZoneFilter": 4}, HostsEvaluated: 4},
		{InstanceID: "c", Filtered: map[string]int{}, FilteredBy: map[string]int{}},
		{InstanceID: "d", Explanation: "bad extra spec"},
	})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m.placementFailures)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			if v := mt.GetCounter().GetValue(); v != 0 {
				got[labelValue(mt, "filter")] = v
			}
		}
	}
	want := map[string]float64{"AvailabilityZoneFilter": 2, "ComputeFilter": 1, "invalid_request": 1, "no_hosts": 1}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("placement failures %v, want %v", got, want)
	}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
