package agent

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is the agent's Prometheus registry. It is per agent, not
// global, so several agents in one test process do not collide.
type metrics struct {
	registry     *prometheus.Registry
	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec
	// apiRequests and apiDuration cover every HTTP API (http_metrics.go);
	// rateLimited counts the requests the rate limit refused.
	apiRequests *prometheus.CounterVec
	apiDuration *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
}

func newMetrics(a *Agent) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stratus_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "stratus_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"route"}),
		apiRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stratus_api_requests_total", Help: "HTTP API requests by API, route template and status code.",
		}, []string{"api", "route", "code"}),
		apiDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "stratus_api_request_duration_seconds", Help: "HTTP API request latency by API and route template.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"api", "route"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stratus_http_rate_limited_total", Help: "HTTP requests refused by the per-client rate limit, by interface.",
		}, []string{"interface"}),
	}
	m.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.apiRequests, m.apiDuration, m.rateLimited,
		&clusterCollector{a: a}, &stateCollector{a: a}, &serverCollector{a: a},
	)
	return m
}

// handler serves the agent's registry and the process's go-metrics
// (metrics_gometrics.go).
func (m *metrics) handler() http.Handler {
	gatherers := prometheus.Gatherers{m.registry}
	if g, err := goMetricsGatherer(); err == nil {
		gatherers = append(gatherers, g)
	}
	return promhttp.HandlerFor(gatherers, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ObserveHTTP counts and times one request of an API route (the native
// API's Observer).
func (m *metrics) ObserveHTTP(route string, code int, d time.Duration) {
	m.httpRequests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.httpDuration.WithLabelValues(route).Observe(d.Seconds())
}

// clusterCollector reads Raft and gossip figures at scrape time, so
// there is nothing to keep up to date between scrapes.
type clusterCollector struct{ a *Agent }

var (
	descRaftLeader  = prometheus.NewDesc("stratus_raft_leader", "1 if this server is the Raft leader.", nil, nil)
	descRaftIndex   = prometheus.NewDesc("stratus_raft_index", "Raft indexes of this server.", []string{"kind"}, nil)
	descRaftPeers   = prometheus.NewDesc("stratus_raft_peers", "Servers in the Raft configuration.", nil, nil)
	descGossipCount = prometheus.NewDesc("stratus_gossip_members", "Gossip members by status.", []string{"status"}, nil)
	descFSMLevel    = prometheus.NewDesc("stratus_fsm_level",
		"State machine feature level: this server's (of=\"server\") and the lowest any server advertises (of=\"cluster\").", []string{"of"}, nil)
	descHostsDown = prometheus.NewDesc("stratus_hosts_marked_down_total",
		"Hosts this server marked down while leader, by why: heartbeat (TTL expired), gossip (agent declared failed or gone), agent_exit (its RPC session closed and its gossip port refused).", []string{"reason"}, nil)
	descExitChecks = prometheus.NewDesc("stratus_agent_exit_checks_total",
		"Agents whose RPC session closed that this server checked while leader, by result: exited (gossip port refused) or alive.", []string{"result"}, nil)
)

func (c *clusterCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descRaftLeader
	ch <- descRaftIndex
	ch <- descRaftPeers
	ch <- descGossipCount
	ch <- descFSMLevel
	ch <- descHostsDown
	ch <- descExitChecks
}

func (c *clusterCollector) Collect(ch chan<- prometheus.Metric) {
	if srv := c.a.server; srv != nil {
		leader := 0.0
		if srv.IsLeader() {
			leader = 1
		}
		ch <- prometheus.MustNewConstMetric(descRaftLeader, prometheus.GaugeValue, leader)
		stats := srv.Raft().Stats()
		for _, kind := range []string{"last_log_index", "commit_index", "applied_index", "last_snapshot_index"} {
			if v, err := strconv.ParseFloat(stats[kind], 64); err == nil {
				ch <- prometheus.MustNewConstMetric(descRaftIndex, prometheus.GaugeValue, v, kind)
			}
		}
		if v, err := strconv.ParseFloat(stats["num_peers"], 64); err == nil {
			ch <- prometheus.MustNewConstMetric(descRaftPeers, prometheus.GaugeValue, v+1)
		}
		cluster, _ := srv.ClusterFSMLevel()
		ch <- prometheus.MustNewConstMetric(descFSMLevel, prometheus.GaugeValue, float64(srv.FSMLevel()), "server")
		ch <- prometheus.MustNewConstMetric(descFSMLevel, prometheus.GaugeValue, float64(cluster), "cluster")
		for reason, n := range srv.HostsMarkedDown() {
			ch <- prometheus.MustNewConstMetric(descHostsDown, prometheus.CounterValue, float64(n), reason)
		}
		for result, n := range srv.AgentExitChecks() {
			ch <- prometheus.MustNewConstMetric(descExitChecks, prometheus.CounterValue, float64(n), result)
		}
	}
	counts := map[string]float64{}
	for _, m := range c.a.gossip.Members() {
		counts[string(m.Status)]++
	}
	for status, n := range counts {
		ch <- prometheus.MustNewConstMetric(descGossipCount, prometheus.GaugeValue, n, status)
	}
}
