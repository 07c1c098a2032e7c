package agent

import (
	"sync"
	"time"

	gometrics "github.com/hashicorp/go-metrics"
	gmprom "github.com/hashicorp/go-metrics/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Raft and memberlist emit their metrics (commit and apply times, leader
// contact, gossip probes and messages, …) through go-metrics' global
// sink, which is one per process. The agent installs a Prometheus sink
// into a registry of the process, and every agent's /v1/metrics serves
// it beside its own figures, as stratus_raft_*, stratus_memberlist_* and
// the rest. (Only tests run several agents in one process; they then
// share these figures.)

var (
	goMetricsOnce     sync.Once
	goMetricsRegistry = prometheus.NewRegistry()
	goMetricsErr      error
)

// ownNames are the agent's own figures that go-metrics also names (Raft
// emits raft.peers): the agent's are served, go-metrics' dropped.
var ownNames = map[string]bool{
	"stratus_raft_leader": true, "stratus_raft_index": true, "stratus_raft_peers": true,
	"stratus_gossip_members": true, "stratus_fsm_level": true,
}

// goMetricsGatherer routes go-metrics into the process's registry (once)
// and returns what it gathers, less the names the agent serves itself.
func goMetricsGatherer() (prometheus.Gatherer, error) {
	if err := installGoMetrics(); err != nil {
		return nil, err
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		fams, err := goMetricsRegistry.Gather()
		out := fams[:0]
		for _, f := range fams {
			if !ownNames[f.GetName()] {
				out = append(out, f)
			}
		}
		return out, err
	}), nil
}

func installGoMetrics() error {
	goMetricsOnce.Do(func() {
		sink, err := gmprom.NewPrometheusSinkFrom(gmprom.PrometheusOpts{
			Registerer: goMetricsRegistry, Name: "stratus_go_metrics",
			// A figure not updated for this long (a follower's leader
			// metrics after it lost the leadership) goes away.
			Expiration: 5 * time.Minute,
		})
		if err != nil {
			goMetricsErr = err
			return
		}
		cfg := gometrics.DefaultConfig("stratus")
		cfg.EnableHostname = false
		cfg.EnableHostnameLabel = false
		cfg.EnableRuntimeMetrics = false // the Go collector has them
		_, goMetricsErr = gometrics.NewGlobal(cfg, sink)
	})
	return goMetricsErr
}
