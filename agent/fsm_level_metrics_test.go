package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestMetricsShowTheFSMLevels checks the gauges an operator watches
// during a rolling upgrade: this server's FSM level and the cluster's
// (the lowest any server advertises).
func TestMetricsShowTheFSMLevels(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	code, _, body := do(t, "GET", a.url("/v1/metrics"), nil)
	for _, of := range []string{"server", "cluster"} {
		want := fmt.Sprintf("stratus_fsm_level{of=%q} %d\n", of, structs.CurrentFSMLevel)
		if code != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("metrics answered %d without %q:\n%s", code, want, body)
		}
	}
}

// TestMetricsCountHostsMarkedDown checks that the counters of hosts
// marked down, by why, and of agent exit checks are served from the
// start, at zero.
func TestMetricsCountHostsMarkedDown(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	code, _, body := do(t, "GET", a.url("/v1/metrics"), nil)
	for _, want := range []string{
		`stratus_hosts_marked_down_total{reason="agent_exit"} 0`,
		`stratus_hosts_marked_down_total{reason="gossip"} 0`,
		`stratus_hosts_marked_down_total{reason="heartbeat"} 0`,
		`stratus_agent_exit_checks_total{result="alive"} 0`,
		`stratus_agent_exit_checks_total{result="exited"} 0`,
	} {
		if code != 200 || !strings.Contains(string(body), want+"\n") {
			t.Fatalf("metrics answered %d without %q:\n%s", code, want, body)
		}
	}
}
