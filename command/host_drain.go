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
	w := io.Discard
	if !e.json {
		w = e.ui.Stdout
	}
	names := e.hostNames()
	hostID, name := h.ID, h.Name
	fmt.Fprintf(w, "==> %s: Draining host %q (%s)\n", stamp(0), name, shortID(hostID, false))
	tracked := map[string]*api.Instance{} // instances on the host, by ID
	warned := map[string]string{}         // the status an instance was last warned about
	left := -1
	q, hq := e.queryOptions(), e.queryOptions()
	q.WaitTime, hq.WaitTime = drainWaitTime, drainWaitTime
	for {
		// Block until an instance changes (or the wait passes), then read
		// the host, its allocations and its instances. Once no allocation
		// is left, only the host's drain can change: block on the host.
		var onHost []*api.Instance
		var qm, hqm *api.QueryMeta
		var err error
		if left == 0 {
			if h, hqm, err = e.client.Hosts().Info(hostID, hq); err == nil {
				onHost, _, err = e.client.Instances().ListByHost(hostID, e.queryOptions())
			}
		} else {
			if onHost, qm, err = e.client.Instances().ListByHost(hostID, q); err == nil {
				h, hqm, err = e.client.Hosts().Info(hostID, e.queryOptions())
			}
		}
		if err != nil {
			return e.fail("Error following the drain of host %q: %v", name, err)
		}
		blocked := hqm.LastIndex > hq.WaitIndex
		if qm != nil {
			blocked = qm.LastIndex > q.WaitIndex
			q.WaitIndex = qm.LastIndex
		}
		hq.WaitIndex = hqm.LastIndex
		if !blocked {
			time.Sleep(buildPollPause)
		}
		allocs, _, err := e.client.Allocations().ListByHost(hostID, e.queryOptions())
		if err != nil {
			return e.fail("Error following the drain of host %q: %v", name, err)
		}
		now := map[string]*api.Instance{}
		for _, inst := range onHost {
			now[inst.ID] = inst
		}
		for _, a := range allocs {
			if now[a.InstanceID] != nil {
				continue
			}
			// A finished resize off the host: the instance is elsewhere
			// but its old allocation is still here.
			if inst, _, err := e.client.Instances().Info(a.InstanceID, e.queryOptions()); err == nil {
				now[inst.ID] = inst
			}
		}

		var lines []line
		for _, id := range sortedKeys(now) {
			inst, before := now[id], tracked[id]
			label := fmt.Sprintf("Instance %q (%s)", inst.Name, shortID(inst.ID, false))
			if before == nil || progress(before) != progress(inst) {
				lines = append(lines, line{inst.UpdatedAt, label + ": " + progress(inst)})
			}
			if inst.Task == nil && inst.TaskState == "" && inst.HostID == hostID && undrainable[inst.Status] && warned[id] != inst.Status {
				warned[id] = inst.Status
				lines = append(lines, line{inst.UpdatedAt, label + " is " + inst.Status + ": a drain does not move it; delete it or move it by hand"})
			}
		}
		for _, id := range sortedKeys(tracked) {
			if now[id] != nil {
				continue
			}
			label := fmt.Sprintf("Instance %q (%s)", tracked[id].Name, shortID(id, false))
			inst, _, err := e.client.Instances().Info(id, e.queryOptions())
			switch {
			case api.IsNotFound(err):
				lines = append(lines, line{time.Now().UnixNano(), label + " was deleted"})
			case err != nil:
				lines = append(lines, line{time.Now().UnixNano(), label + " left the host"})
			case inst.HostID == "":
				lines = append(lines, line{inst.UpdatedAt, label + " left the host: " + progress(inst)})
			default:
				lines = append(lines, line{inst.UpdatedAt, label + " left the host: " + progress(inst) + " on " + hostName(names, inst.HostID)})
			}
		}
		tracked = now
		sort.SliceStable(lines, func(i, j int) bool { return lines[i].at < lines[j].at })
		if len(allocs) != left {
			left = len(allocs)
			lines = append(lines, line{time.Now().UnixNano(), fmt.Sprintf("%d allocation(s) left on the host", left)})
		}
		for _, l := range lines {
			fmt.Fprintf(w, "    %s: %s\n", stamp(l.at), l.text)
		}

		switch {
		case h.Drain == nil:
			fmt.Fprintf(w, "==> %s: The drain of host %q was cancelled (the host was enabled)\n", stamp(0), h.Name)
			if e.json {
				_ = e.render(h, nil)
			}
			return e.fail("Error: the drain of host %q was cancelled with %d allocation(s) left", h.Name, left)
		case h.Drain.Complete:
			fmt.Fprintf(w, "==> %s: Host %q drained: no allocations left\n", stamp(h.Drain.CompletedAt), h.Name)
			return e.render(h, func(io.Writer) {})
		}
	}
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
