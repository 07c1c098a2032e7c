package command

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/api"
)

var hostListCommand = (&spec{
	synopsis: "List hosts",
	args:     "[options]",
	help: `List the hosts (hypervisors) with their liveness, whether scheduling
onto them is enabled, their usage of vCPUs, RAM and disk against their
capacity, and how many instances they run.`,
	nargs: exactly(0),
	list:  true,
	setup: func(fs *flag.FlagSet) runFunc {
		verbose := fs.Bool("verbose", false, "Show full IDs.")
		return func(e *env, _ []string) int {
			hosts, _, err := e.client.Hosts().List(e.queryOptions())
			if err != nil {
				return e.fail("Error listing hosts: %v", err)
			}
			if hosts == nil {
				hosts = []*api.Host{}
			}
			if e.json {
				return e.render(hosts, nil)
			}
			instances, _, err := e.client.Instances().List(e.queryOptions())
			if err != nil {
				return e.fail("Error listing instances: %v", err)
			}
			count := map[string]int{}
			for _, inst := range instances {
				count[inst.HostID]++
			}
			return e.render(hosts, func(w io.Writer) {
				if len(hosts) == 0 {
					fmt.Fprintln(w, "No hosts found")
					return
				}
				rows := make([][]string, 0, len(hosts))
				for _, h := range hosts {
					rows = append(rows, []string{shortID(h.ID, *verbose), h.Name, h.Status, enabledCell(h),
						dash(h.Driver), dash(h.AZ), usage(h, api.ResourceVCPU), usage(h, api.ResourceMemoryMB),
						usage(h, api.ResourceDiskGB), itoa(count[h.ID])})
				}
				printTable(w, []string{"ID", "Name", "Status", "Enabled", "Driver", "AZ",
					"VCPUs", "RAM (MB)", "Disk (GB)", "Instances"}, rows)
			})
		}
	},
}).factory()

// enabledCell is whether scheduling onto h is enabled, or how its drain
// stands.
func enabledCell(h *api.Host) string {
	switch {
	case h.Draining():
		return "draining"
	case h.Drain != nil:
		return "drained"
	}
	return btoa(h.Enabled)
}

// drainText describes a host's drain.
func drainText(h *api.Host) string {
	switch {
	case h.Drain == nil:
		return "-"
	case h.Drain.Complete:
		return "complete since " + formatTime(h.Drain.CompletedAt)
	}
	return "in progress since " + formatTime(h.Drain.StartedAt)
}

// usage is "used/capacity" of a resource class, or "-" if the host has none.
func usage(h *api.Host, class string) string {
	c := h.Capacity[class]
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", c.Used, c.Capacity)
}

var hostStatusCommand = (&spec{
	synopsis: "Show a host",
	args:     "[options] ID_OR_NAME",
	help: `Show a host's details, its resource inventory and usage, and the
instances on it.`,
	nargs: exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			h, _, err := e.client.Hosts().Info(args[0], e.queryOptions())
			if err != nil {
				return e.fail("Error reading host %q: %v", args[0], err)
			}
			if e.json {
				return e.render(h, nil)
			}
			instances, _, err := e.client.Instances().ListByHost(h.ID, e.queryOptions())
			if err != nil {
				return e.fail("Error listing the instances of host %q: %v", args[0], err)
			}
			return e.render(h, func(w io.Writer) { printHost(w, h, instances) })
		}
	},
}).factory()

func printHost(w io.Writer, h *api.Host, instances []*api.Instance) {
	printKV(w, []kv{
		{"ID", h.ID}, {"Name", h.Name}, {"Region", h.Region}, {"AZ", dash(h.AZ)}, {"Status", h.Status},
		{"Enabled", btoa(h.Enabled)}, {"Disabled Reason", h.DisabledReason}, {"Drain", drainText(h)},
		{"Allocations", allocCount(h)}, {"Driver", dash(h.Driver)},
		{"Hypervisor", dash(strings.TrimSpace(h.HypervisorType + " " + h.HypervisorVersion))},
		{"Arch", dash(h.Arch)}, {"RPC Addr", dash(h.RPCAddr)}, {"HTTP Addr", dash(h.HTTPAddr)},
		{"Tunnel IP", dash(h.TunnelIP)}, {"Gossip Member", dash(h.GossipMember)}, {"Traits", dash(strings.Join(h.Traits, ","))},
		{"Build Failures", itoa(h.BuildFailures)}, {"Status Updated", formatTime(h.StatusUpdatedAt)},
	})

	fmt.Fprint(w, "\nInventory\n")
	classes := make([]string, 0, len(h.Inventories))
	for class := range h.Inventories {
		classes = append(classes, class)
	}
	sort.Strings(classes)
	rows := make([][]string, 0, len(classes))
	for _, class := range classes {
		inv, used, capacity := h.Inventories[class], "-", "-"
		if c := h.Capacity[class]; c != nil {
			used, capacity = i64toa(c.Used), i64toa(c.Capacity)
		}
		rows = append(rows, []string{class, i64toa(inv.Total), i64toa(inv.Reserved), ftoa(inv.AllocationRatio), used, capacity})
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "<none>")
	} else {
		printTable(w, []string{"Class", "Total", "Reserved", "Ratio", "Used", "Capacity"}, rows)
	}

	if len(h.Attributes) > 0 {
		fmt.Fprint(w, "\nAttributes\n")
		printKV(w, mapKV(h.Attributes))
	}

	fmt.Fprint(w, "\nInstances\n")
	if len(instances) == 0 {
		fmt.Fprintln(w, "<none>")
		return
	}
	rows = rows[:0]
	for _, i := range instances {
		rows = append(rows, []string{shortID(i.ID, false), i.Name, i.Status, powerState(i.PowerState), flavorName(i)})
	}
	printTable(w, []string{"ID", "Name", "Status", "Power", "Flavor"}, rows)
}

// allocCount is how many allocations are on h, or "-" if the agent did
// not say.
func allocCount(h *api.Host) string {
	if h.Allocations == nil {
		return "-"
	}
	return itoa(*h.Allocations)
}

func i64toa(i int64) string { return strconv.FormatInt(i, 10) }

// hostNames maps host IDs to names, or is empty if hosts cannot be read.
func (e *env) hostNames() map[string]string {
	names := map[string]string{}
	hosts, _, _ := e.client.Hosts().List(e.queryOptions())
	for _, h := range hosts {
		names[h.ID] = h.Name
	}
	return names
}

func hostName(names map[string]string, id string) string {
	if name := names[id]; name != "" {
		return name
	}
	return id
}

var hostEnableCommand = (&spec{
	synopsis: "Enable scheduling onto a host",
	args:     "[options] ID_OR_NAME",
	help: `Let the scheduler place new instances on the host again. This cancels the
host's drain if one is in progress; instances already moved stay where
they are.`,
	nargs: exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			return e.setHostEnabled(args[0], true, "")
		}
	},
}).factory()

var hostDisableCommand = (&spec{
	synopsis: "Disable scheduling onto a host",
	args:     "[options] ID_OR_NAME",
	help: `Stop the scheduler from placing new instances on the host, as Nova's
"compute service set --disable" does. Instances already on it keep running
("cloudctl host drain" moves them off). A drain in progress goes on.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		reason := fs.String("reason", "", "Why the host is disabled, shown in host status.")
		return func(e *env, args []string) int {
			return e.setHostEnabled(args[0], false, *reason)
		}
	},
}).factory()

// hostEnabledResult is the -json output of host enable and disable.
type hostEnabledResult struct {
	ID, Name       string
	Enabled        bool
	DisabledReason string
	// DrainCancelled says enabling the host cancelled its drain.
	DrainCancelled bool `json:",omitempty"`
}

// setHostEnabled enables or disables the host named by ref (an ID or name).
func (e *env) setHostEnabled(ref string, enabled bool, reason string) int {
	verb := map[bool]string{true: "enabl", false: "disabl"}[enabled]
	h, _, err := e.client.Hosts().Info(ref, e.queryOptions())
	if err == nil {
		if enabled {
			_, err = e.client.Hosts().Enable(h.ID)
		} else {
			_, err = e.client.Hosts().Disable(h.ID, reason)
		}
	}
	if err != nil {
		return e.fail("Error %sing host %q: %v", verb, ref, err)
	}
	cancelled := enabled && h.Draining()
	return e.render(&hostEnabledResult{ID: h.ID, Name: h.Name, Enabled: enabled, DisabledReason: reason, DrainCancelled: cancelled}, func(w io.Writer) {
		fmt.Fprintf(w, "Host %q (%s) %sed\n", h.Name, h.ID, verb)
		if cancelled {
			fmt.Fprintln(w, "Its drain was cancelled; instances already moved stay where they are")
		}
	})
}
