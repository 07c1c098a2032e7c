package command

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// drainWaitTime bounds each blocking query of the drain monitor: it
// blocks on the host's instances, so the drain's completion (a change of
// the host alone) is seen within this time.
var drainWaitTime = 5 * time.Second

var hostDrainCommand = (&spec{
	synopsis: "Move every instance off a host",
	args:     "[options] ID_OR_NAME",
	help: `Drain a host: disable scheduling onto it and have the servers move every
instance off it. Running and paused instances are live-migrated where the
host's driver supports it, else cold-migrated and confirmed; stopped ones
are cold-migrated, shelved ones offloaded, and finished resizes confirmed.
The drain is complete when no allocation is left on the host; the host
stays disabled until "cloudctl host enable", which also cancels a drain in
progress (instances already moved stay where they are).

The command follows the drain until it completes, showing each instance
that moves and how many allocations are left, and warns about instances a
drain cannot move (ERROR, SUSPENDED, RESCUE, SOFT_DELETED): delete or move
those by hand. -detach returns at once; -monitor follows a drain already in
progress. Interrupting the command does not stop the drain.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		reason := fs.String("reason", "", "Why the host is drained, shown as its disabled reason. Defaults to \"draining\".")
		detach := fs.Bool("detach", false, "Return as soon as the drain started instead of following it.")
		monitor := fs.Bool("monitor", false, "Follow a drain in progress instead of starting one.")
		return func(e *env, args []string) int {
			if *monitor && (*detach || *reason != "") {
				return e.usage("-monitor cannot be combined with -detach or -reason")
			}
			ref := args[0]
			h, _, err := e.client.Hosts().Info(ref, e.queryOptions())
			if err != nil {
				return e.fail("Error reading host %q: %v", ref, err)
			}
			if *monitor {
				if h.Drain == nil {
					return e.fail("Error: host %q is not draining", h.Name)
				}
				return e.monitorDrain(h)
			}
			if _, err := e.client.Hosts().Drain(h.ID, *reason); err != nil {
				return e.fail("Error draining host %q: %v", ref, err)
			}
			if *detach {
				if h, _, err = e.client.Hosts().Info(h.ID, e.queryOptions()); err != nil {
					return e.fail("Error reading host %q: %v", ref, err)
				}
				return e.render(h, func(w io.Writer) {
					fmt.Fprintf(w, "Host %q (%s) is draining; follow it with \"cloudctl host drain -monitor %s\"\n", h.Name, h.ID, h.Name)
				})
			}
			return e.monitorDrain(h)
		}
	},
}).factory()

// undrainable are the statuses of settled instances a drain leaves where
// they are.
var undrainable = map[string]bool{"ERROR": true, "SUSPENDED": true, "RESCUE": true, "SOFT_DELETED": true}

// monitorDrain follows the drain of h until it completes (0) or is
// cancelled (1), printing each instance's progress off the host.
func (e *env) monitorDrain(h *api.Host) int {
	m := &drainMonitor{e: e, w: io.Discard, names: e.hostNames(), hostID: h.ID, name: h.Name,
		tracked: map[string]*api.Instance{}, warned: map[string]string{}, left: -1, q: e.queryOptions(), hq: e.queryOptions()}
	if !e.json {
		m.w = e.ui.Stdout
	}
	m.q.WaitTime, m.hq.WaitTime = drainWaitTime, drainWaitTime
	fmt.Fprintf(m.w, "==> %s: Draining host %q (%s)\n", stamp(0), m.name, shortID(m.hostID, false))
	for {
		h, onHost, err := m.wait()
		if err != nil {
			return e.fail("Error following the drain of host %q: %v", m.name, err)
		}
		allocs, _, err := e.client.Allocations().ListByHost(m.hostID, e.queryOptions())
		if err != nil {
			return e.fail("Error following the drain of host %q: %v", m.name, err)
		}
		now := m.instancesNow(onHost, allocs)
		lines := append(m.changed(now), m.gone(now)...)
		m.tracked = now
		sort.SliceStable(lines, func(i, j int) bool { return lines[i].at < lines[j].at })
		if len(allocs) != m.left {
			m.left = len(allocs)
			lines = append(lines, line{time.Now().UnixNano(), fmt.Sprintf("%d allocation(s) left on the host", m.left)})
		}
		for _, l := range lines {
			fmt.Fprintf(m.w, "    %s: %s\n", stamp(l.at), l.text)
		}

		switch {
		case h.Drain == nil:
			fmt.Fprintf(m.w, "==> %s: The drain of host %q was cancelled (the host was enabled)\n", stamp(0), h.Name)
			if e.json {
				_ = e.render(h, nil)
			}
			return e.fail("Error: the drain of host %q was cancelled with %d allocation(s) left", h.Name, m.left)
		case h.Drain.Complete:
			fmt.Fprintf(m.w, "==> %s: Host %q drained: no allocations left\n", stamp(h.Drain.CompletedAt), h.Name)
			return e.render(h, func(io.Writer) {})
		}
	}
}

// drainMonitor follows one host's drain.
type drainMonitor struct {
	e            *env
	w            io.Writer
	names        map[string]string
	hostID, name string
	tracked      map[string]*api.Instance // instances on the host, by ID
	warned       map[string]string        // the status an instance was last warned about
	left         int                      // allocations left, -1 before the first look
	q, hq        *api.QueryOptions        // blocking reads of the instances and of the host
}

// wait blocks until an instance changes (or the wait passes), then
// reads the host and its instances. Once no allocation is left, only
// the host's drain can change: it blocks on the host.
func (m *drainMonitor) wait() (*api.Host, []*api.Instance, error) {
	e := m.e
	var h *api.Host
	var onHost []*api.Instance
	var qm, hqm *api.QueryMeta
	var err error
	if m.left == 0 {
		if h, hqm, err = e.client.Hosts().Info(m.hostID, m.hq); err == nil {
			onHost, _, err = e.client.Instances().ListByHost(m.hostID, e.queryOptions())
		}
	} else {
		if onHost, qm, err = e.client.Instances().ListByHost(m.hostID, m.q); err == nil {
			h, hqm, err = e.client.Hosts().Info(m.hostID, e.queryOptions())
		}
	}
	if err != nil {
		return nil, nil, err
	}
	blocked := hqm.LastIndex > m.hq.WaitIndex
	if qm != nil {
		blocked = qm.LastIndex > m.q.WaitIndex
		m.q.WaitIndex = qm.LastIndex
	}
	m.hq.WaitIndex = hqm.LastIndex
	if !blocked {
		time.Sleep(buildPollPause)
	}
	return h, onHost, nil
}

// instancesNow are the instances on the host, and those whose
// allocation is still there after a finished resize off the host.
func (m *drainMonitor) instancesNow(onHost []*api.Instance, allocs []*api.Allocation) map[string]*api.Instance {
	now := map[string]*api.Instance{}
	for _, inst := range onHost {
		now[inst.ID] = inst
	}
	for _, a := range allocs {
		if now[a.InstanceID] != nil {
			continue
		}
		if inst, _, err := m.e.client.Instances().Info(a.InstanceID, m.e.queryOptions()); err == nil {
			now[inst.ID] = inst
		}
	}
	return now
}

// changed reports the instances whose progress changed, and warns once
// of one in a status a drain does not move.
func (m *drainMonitor) changed(now map[string]*api.Instance) []line {
	var lines []line
	for _, id := range sortedKeys(now) {
		inst, before := now[id], m.tracked[id]
		label := fmt.Sprintf("Instance %q (%s)", inst.Name, shortID(inst.ID, false))
		if before == nil || progress(before) != progress(inst) {
			lines = append(lines, line{inst.UpdatedAt, label + ": " + progress(inst)})
		}
		if inst.Task == nil && inst.TaskState == "" && inst.HostID == m.hostID && undrainable[inst.Status] && m.warned[id] != inst.Status {
			m.warned[id] = inst.Status
			lines = append(lines, line{inst.UpdatedAt, label + " is " + inst.Status + ": a drain does not move it; delete it or move it by hand"})
		}
	}
	return lines
}

// gone reports the instances that left the host, and where they went.
func (m *drainMonitor) gone(now map[string]*api.Instance) []line {
	var lines []line
	for _, id := range sortedKeys(m.tracked) {
		if now[id] != nil {
			continue
		}
		label := fmt.Sprintf("Instance %q (%s)", m.tracked[id].Name, shortID(id, false))
		inst, _, err := m.e.client.Instances().Info(id, m.e.queryOptions())
		switch {
		case api.IsNotFound(err):
			lines = append(lines, line{time.Now().UnixNano(), label + " was deleted"})
		case err != nil:
			lines = append(lines, line{time.Now().UnixNano(), label + " left the host"})
		case inst.HostID == "":
			lines = append(lines, line{inst.UpdatedAt, label + " left the host: " + progress(inst)})
		default:
			lines = append(lines, line{inst.UpdatedAt, label + " left the host: " + progress(inst) + " on " + hostName(m.names, inst.HostID)})
		}
	}
	return lines
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
