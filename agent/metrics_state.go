package agent

import (
	"github.com/prometheus/client_golang/prometheus"
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
)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descInstances
	ch <- descHosts
	ch <- descCapacity
	ch <- descSchedQueue
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
}
