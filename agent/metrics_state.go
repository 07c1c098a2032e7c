package agent

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// stateCollector reads the replicated state at scrape time, on servers:
// instances by status, hosts by status, the cluster's capacity and use
// per resource class, and the leader's scheduling queues. It keeps
// nothing between scrapes.
type stateCollector struct{ a *Agent }

var (
	descInstances = prometheus.NewDesc("stratus_instances", "Instances by status (Nova's API status).", []string{"status"}, nil)
	descHosts     = prometheus.NewDesc("stratus_hosts", "Hosts by status (up, down, init) and whether they are enabled.", []string{"status", "enabled"}, nil)
	descCapacity  = prometheus.NewDesc("stratus_capacity",
		"The cluster's resources by class: total ((inventory − reserved) × allocation ratio, as Placement counts, of enabled hosts that are up) and used.", []string{"class", "kind"}, nil)
	descSchedQueue = prometheus.NewDesc("stratus_scheduler_queue",
		"The leader's scheduling queues: evaluations ready and unacknowledged, plans waiting for the applier.", []string{"queue"}, nil)
	descBrokerEvals = prometheus.NewDesc("stratus_eval_broker_evals",
		"The leader's evaluation broker by trigger: ready, unacked, and blocked (ready but naming an instance an unacked evaluation holds; counted in ready too).",
		[]string{"trigger", "state"}, nil)
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descInstances
	ch <- descHosts
	ch <- descCapacity
	ch <- descSchedQueue
	ch <- descBrokerEvals
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	srv := c.a.server
	if srv == nil {
		return
	}
	state := srv.FSM().State()
	if insts, err := state.Instances(nil); err == nil {
		by := map[string]float64{}
		for _, inst := range insts {
			by[inst.Status()]++
		}
		for status, n := range by {
			ch <- prometheus.MustNewConstMetric(descInstances, prometheus.GaugeValue, n, status)
		}
	}
	if hosts, err := state.Hosts(nil); err == nil {
		type key struct{ status, enabled string }
		by := map[key]float64{}
		total, used := map[string]float64{}, map[string]float64{}
		for _, h := range hosts {
			enabled := "false"
			if h.Enabled {
				enabled = "true"
			}
			by[key{h.Status, enabled}]++
			if !h.Enabled || !h.Up() {
				continue
			}
			for class, inv := range h.Inventories {
				if inv == nil {
					continue
				}
				total[class] += float64(inv.Total-inv.Reserved) * inv.AllocationRatio
				used[class] += float64(h.Usage[class])
			}
		}
		for k, n := range by {
			ch <- prometheus.MustNewConstMetric(descHosts, prometheus.GaugeValue, n, k.status, k.enabled)
		}
		for class, n := range total {
			ch <- prometheus.MustNewConstMetric(descCapacity, prometheus.GaugeValue, n, class, "total")
			ch <- prometheus.MustNewConstMetric(descCapacity, prometheus.GaugeValue, used[class], class, "used")
		}
	}
	st := srv.SchedulerStats()
	ch <- prometheus.MustNewConstMetric(descSchedQueue, prometheus.GaugeValue, float64(st.EvalsReady), "evals_ready")
	ch <- prometheus.MustNewConstMetric(descSchedQueue, prometheus.GaugeValue, float64(st.EvalsUnacked), "evals_unacked")
	ch <- prometheus.MustNewConstMetric(descSchedQueue, prometheus.GaugeValue, float64(st.PlansQueued), "plans_queued")
	// Every trigger's series exists, at zero when idle, for dashboards.
	byTrigger := map[string]server.EvalBrokerCounts{}
	for _, trigger := range []string{structs.EvalTriggerCreate, structs.EvalTriggerReschedule, structs.EvalTriggerResize,
		structs.EvalTriggerMigrate, structs.EvalTriggerEvacuate, structs.EvalTriggerUnshelve} {
		byTrigger[trigger] = server.EvalBrokerCounts{}
	}
	for trigger, c := range st.EvalsByTrigger {
		byTrigger[trigger] = c
	}
	for trigger, c := range byTrigger {
		ch <- prometheus.MustNewConstMetric(descBrokerEvals, prometheus.GaugeValue, float64(c.Ready), trigger, "ready")
		ch <- prometheus.MustNewConstMetric(descBrokerEvals, prometheus.GaugeValue, float64(c.Unacked), trigger, "unacked")
		ch <- prometheus.MustNewConstMetric(descBrokerEvals, prometheus.GaugeValue, float64(c.Blocked), trigger, "blocked")
	}
}

// serverCollector serves the server's own figures (RPCs, plan apply
// latency, placement failures: server/metrics.go) on a server agent. The
// agent's registry exists before its server, so the server's collectors
// are looked up at scrape time; it is an unchecked collector (it
// describes nothing) because they exist only on servers.
type serverCollector struct{ a *Agent }

func (c *serverCollector) Describe(chan<- *prometheus.Desc) {}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	if srv := c.a.server; srv != nil {
		for _, col := range srv.MetricCollectors() {
			col.Collect(ch)
		}
	}
}
