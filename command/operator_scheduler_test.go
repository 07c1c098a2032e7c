package command

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// TestOperatorSchedulerAgainstDevAgent reads and changes the scheduler
// configuration of a real agent, including a stale -check-index.
func TestOperatorSchedulerAgainstDevAgent(t *testing.T) {
	addr := devAgent(t)
	t.Setenv(api.EnvAddress, addr)
	t.Setenv(api.EnvToken, "")
	var out string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		o, _, code := run(t, "operator", "scheduler", "get-config")
		if code == 0 {
			out = o
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("get-config never succeeded: %q", o)
		}
	}
	assertContains(t, "defaults", out, "Source                               = config\n", "Algorithm                            = spread\n",
		"Host Subset Size                     = 1\n", "Modify Index                         = 0\n")

	out = runOK(t, "operator", "scheduler", "set-config", "-algorithm", "binpack", "-host-subset-size", "2", "-check-index", "0")
	assertContains(t, "set", out, "Scheduler configuration updated at index ")

	out = runOK(t, "operator", "scheduler", "get-config", "-json")
	var got api.SchedulerConfigurationResponse
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-json: %v %q", err, out)
	}
	c := got.SchedulerConfig
	if got.Source != "operator" || c.RAMWeightMultiplier != -1 || c.CPUWeightMultiplier != -1 || c.HostSubsetSize != 2 || c.ModifyIndex == 0 {
		t.Fatalf("after set: %+v from %q", c, got.Source)
	}

	// The configuration moved on from index 0: a stale check fails and
	// changes nothing.
	_, stderr, code := run(t, "operator", "scheduler", "set-config", "-ram-weight-multiplier", "5", "-check-index", "0")
	if code != 1 || !strings.Contains(stderr, "not updated") {
		t.Fatalf("stale -check-index: code %d, %q", code, stderr)
	}
	_, stderr, code = run(t, "operator", "scheduler", "set-config", "-host-subset-size", "0")
	if code != 1 || !strings.Contains(stderr, "host_subset_size must be 1 or more") {
		t.Fatalf("host-subset-size 0: code %d, %q", code, stderr)
	}
	_, stderr, code = run(t, "operator", "scheduler", "set-config", "-algorithm", "random")
	if code != 2 || !strings.Contains(stderr, "spread or binpack") {
		t.Fatalf("bad algorithm: code %d, %q", code, stderr)
	}
	out = runOK(t, "operator", "scheduler", "get-config")
	assertContains(t, "unchanged", out, "Algorithm                            = binpack\n", "RAM Weight Multiplier                = -1\n")
}
