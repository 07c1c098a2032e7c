package server

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratus-cloud/stratus/server/scheduler"
	"github.com/stratus-cloud/stratus/structs"
)

// The server's own figures, which only it can measure: every RPC it
// answers (rpc.Server's CallObserver), how long a plan waits from the
// leader's queue to its outcome, and the placements the scheduler could
// not make, by the filter that rejected hosts. The agent registers them
// (Server.MetricCollectors) with its /v1/metrics; figures read from the
// state or the broker at scrape time are the agent's (metrics_state.go).

// serverMetrics are one server's collectors; each server has its own, so
// several servers in one process (tests) do not share counts.
type serverMetrics struct {
	rpcCalls          *prometheus.CounterVec
	rpcDuration       *prometheus.HistogramVec
	planApply         prometheus.Histogram
	placementFailures *prometheus.CounterVec
}

// Reasons a placement failure has no filter to blame.
const (
	// failureNoHosts: the cluster had no hosts to filter.
	failureNoHosts = "no_hosts"
	// failureInvalid: the instance's request could not be built (a bad
	// flavor extra spec or image property), so no filter ran.
	failureInvalid = "invalid_request"
)

func newServerMetrics() *serverMetrics {
	m := &serverMetrics{
		rpcCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stratus_rpc_requests_total",
			Help: "RPCs this server answered, by method and outcome (ok, error); forwarded calls count on both servers.",
		}, []string{"method", "outcome"}),
		rpcDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "stratus_rpc_request_duration_seconds",
			Help:    "Time from reading an RPC's request to answering it, by method (blocking queries included).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"method"}),
		planApply: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "stratus_plan_apply_duration_seconds",
			Help:    "Time from a plan entering the leader's plan queue to its outcome: the queue wait, the re-check and the Raft commit.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}),
		placementFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stratus_placement_failures_total",
			Help: "Instances the scheduler could not place, counted once for each filter that rejected hosts for them (no_hosts: none registered; invalid_request: no filter ran).",
		}, []string{"filter"}),
	}
	// Every filter's series exists from the start, at zero, so that a
	// dashboard's rate() sees the first failure.
	for _, f := range scheduler.DefaultFilters() {
		m.placementFailures.WithLabelValues(f.Name())
	}
	m.placementFailures.WithLabelValues(failureNoHosts)
	m.placementFailures.WithLabelValues(failureInvalid)
	return m
}

// MetricCollectors are the server's own collectors, for the agent's
// registry.
func (s *Server) MetricCollectors() []prometheus.Collector {
	m := s.metrics
	return []prometheus.Collector{m.rpcCalls, m.rpcDuration, m.planApply, m.placementFailures}
}

// observeRPC is the RPC server's CallObserver.
func (m *serverMetrics) observeRPC(method string, took time.Duration, failed bool) {
	outcome := "ok"
	if failed {
		outcome = "error"
	}
	m.rpcCalls.WithLabelValues(method, outcome).Inc()
	m.rpcDuration.WithLabelValues(method).Observe(took.Seconds())
}

// observePlanApply records one plan's wait for its outcome.
func (m *serverMetrics) observePlanApply(took time.Duration) {
	m.planApply.Observe(took.Seconds())
}

// observePlacementFailures counts a plan's failed placements by the
// filters that rejected hosts for them.
func (m *serverMetrics) observePlacementFailures(failures []*structs.PlacementFailure) {
	for _, f := range failures {
		switch {
		case len(f.FilteredBy) > 0:
			for filter := range f.FilteredBy {
				m.placementFailures.WithLabelValues(filter).Inc()
			}
		case f.Filtered == nil:
			// The scheduler explains a request it could not build with
			// its error alone: no filter ran.
			m.placementFailures.WithLabelValues(failureInvalid).Inc()
		default:
			m.placementFailures.WithLabelValues(failureNoHosts).Inc()
		}
	}
}
