package agent

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestServerMetrics: a server agent's /v1/metrics has the RPCs it
// answered by method, the plan apply latency, the evaluation broker by
// trigger, and a placement that failed counted under the filter that
// rejected the host.
func TestServerMetrics(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	// A trait no host has: the TraitsFilter rejects the one host.
	unplaceable := &structs.Flavor{ID: "unplaceable", Name: "m1.unplaceable", VCPUs: 1, MemoryMB: 64, RootGB: 1,
		ExtraSpecs: map[string]string{"trait:CUSTOM_NOWHERE": "required"}}
	if err := a.rpc.RPC("Flavor.Upsert", &structs.FlavorUpsertRequest{Flavors: []*structs.Flavor{unplaceable}}, &structs.FlavorUpsertResponse{}); err != nil {
		t.Fatal(err)
	}
	var out structs.InstanceCreateResponse
	if err := a.rpc.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "too-big", FlavorID: "unplaceable", ImageID: "cirros",
		ProjectID: "p1", UserID: "u1", RequestID: "req-too-big"}, &out); err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() {
		_ = a.rpc.RPC("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{out.Instances[0].ID}, ProjectID: "p1", Admin: true, Force: true}, &structs.GenericResponse{})
	})
	wants := []*regexp.Regexp{
		regexp.MustCompile(`(?m)^stratus_rpc_requests_total\{method="Instance\.Create",outcome="ok"\} [1-9]`),
		regexp.MustCompile(`(?m)^stratus_rpc_request_duration_seconds_count\{method="Flavor\.Upsert"\} [1-9]`),
		regexp.MustCompile(`(?m)^stratus_plan_apply_duration_seconds_count [1-9]`),
		regexp.MustCompile(`(?m)^stratus_placement_failures_total\{filter="TraitsFilter"\} [1-9]`),
		regexp.MustCompile(`(?m)^stratus_placement_failures_total\{filter="AvailabilityZoneFilter"\} 0`),
		regexp.MustCompile(`(?m)^stratus_eval_broker_evals\{state="blocked",trigger="instance-create"\} \d`),
	}
	waitFor(t, "server metrics", func() error {
		_, _, body := do(t, "GET", a.url("/v1/metrics"), nil)
		for _, re := range wants {
			if !re.Match(body) {
				return fmt.Errorf("metrics lack %s", re)
			}
		}
		return nil
	})
}
