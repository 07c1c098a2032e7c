package command

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// buildWaitTime is how long each blocking query of -wait waits, and
// buildPollPause how long it pauses when an answer did not block (an agent
// or proxy that does not support blocking queries).
var (
	buildWaitTime  = 5 * time.Minute
	buildPollPause = 250 * time.Millisecond
)

var instanceCreateCommand = (&spec{
	synopsis: "Create instances",
	args:     "[options] -flavor FLAVOR -image IMAGE NAME",
	help: `Boot instances named NAME (NAME-1, NAME-2, … with -count) and print
their IDs, then follow them with blocking queries until none is in BUILD,
printing each change, and fail if any ended in ERROR — as every other
operation follows its progress. -detach returns as soon as the servers
have accepted the boot (instances are scheduled asynchronously).`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		req := &api.InstanceCreateRequest{ImageProperties: map[string]string{}, Metadata: map[string]string{}}
		fs.StringVar(&req.Flavor, "flavor", "", "The flavor, by ID or name. Required.")
		fs.StringVar(&req.Image, "image", "", "The image to boot. Required.")
		fs.StringVar(&req.AZ, "az", "", "The availability zone to boot in.")
		fs.StringVar(&req.KeyName, "key-name", "", "The key pair to inject.")
		fs.Var(properties(req.ImageProperties), "property", "An image property read by the scheduler, as `KEY=VALUE`. May be repeated.")
		fs.Var(properties(req.Metadata), "meta", "A metadata item, as `KEY=VALUE`. May be repeated.")
		fs.IntVar(&req.Count, "count", 1, "The number of instances to boot.")
		detach := fs.Bool("detach", false, "Return once the boot is accepted, without following the instances.")
		// -wait was needed before following became the default; scripts
		// that pass it keep working.
		fs.Bool("wait", true, "Follow the instances until none is in BUILD (the default; see -detach).")
		return func(e *env, args []string) int {
			switch {
			case req.Flavor == "" || req.Image == "":
				return e.usage("-flavor and -image are required")
			case req.Count < 1:
				return e.usage("-count must be at least 1, got %d", req.Count)
			}
			req.Name = args[0]
			resp, wm, err := e.client.Instances().Create(req)
			if err != nil {
				return e.fail("Error creating instances: %v", err)
			}
			if !e.json {
				for _, inst := range resp.Instances {
					fmt.Fprintf(e.ui.Stdout, "Instance %q created with ID %q\n", inst.Name, inst.ID)
				}
			}
			if *detach {
				return e.render(resp, func(io.Writer) {})
			}
			return e.watchBuild(resp, wm.LastIndex)
		}
	},
}).factory()

// watchBuild follows the instances of resp from index on until none is in
// BUILD, printing each change of status or task, then renders them. It
// returns 1 if any ended in ERROR or disappeared.
func (e *env) watchBuild(resp *api.InstanceCreateResponse, index uint64) int {
	last := map[string]string{}
	for _, inst := range resp.Instances {
		last[inst.ID] = progress(inst)
	}
	q := e.queryOptions()
	q.WaitIndex, q.WaitTime = index, buildWaitTime
	for building(resp.Instances) {
		list, qm, err := e.client.Instances().List(q)
		if err != nil {
			return e.fail("Error waiting for instances: %v", err)
		}
		byID := make(map[string]*api.Instance, len(list))
		for _, inst := range list {
			byID[inst.ID] = inst
		}
		for k, inst := range resp.Instances {
			now := byID[inst.ID]
			if now == nil {
				now = &api.Instance{ID: inst.ID, Name: inst.Name, Status: "DELETED",
					Fault: &api.Fault{Message: "the instance was deleted while building"}}
			}
			resp.Instances[k] = now
			if p := progress(now); p != last[now.ID] && !e.json {
				last[now.ID] = p
				fmt.Fprintf(e.ui.Stdout, "Instance %q (%s): %s\n", now.Name, shortID(now.ID, false), p)
			}
		}
		if qm.LastIndex <= q.WaitIndex {
			time.Sleep(buildPollPause)
		}
		q.WaitIndex = qm.LastIndex
	}
	var failed []string
	for _, inst := range resp.Instances {
		if inst.Status != "ACTIVE" {
			failed = append(failed, fmt.Sprintf("%q (%s) is %s: %s", inst.Name, inst.ID, inst.Status, faultText(inst.Fault)))
		}
	}
	if rc := e.render(resp, func(io.Writer) {}); rc != 0 || len(failed) == 0 {
		return rc
	}
	return e.fail("Error: %d of %d instances failed to build:\n  %s", len(failed), len(resp.Instances), strings.Join(failed, "\n  "))
}

func building(list []*api.Instance) bool {
	for _, inst := range list {
		if inst.Status == "BUILD" {
			return true
		}
	}
	return false
}

// progress is an instance's status, with its task while it has one.
func progress(inst *api.Instance) string {
	if inst.TaskState == "" {
		return inst.Status
	}
	return inst.Status + " (" + inst.TaskState + ")"
}

var instanceListCommand = (&spec{
	synopsis: "List instances",
	args:     "[options]",
	help:     "List the instances, or those on one host with -host.",
	nargs:    exactly(0),
	list:     true,
	setup: func(fs *flag.FlagSet) runFunc {
		host := fs.String("host", "", "List only the instances on this host, by ID or name.")
		verbose := fs.Bool("verbose", false, "Show full IDs.")
		return func(e *env, _ []string) int {
			names := e.hostNames()
			hostID := *host
			for id, name := range names {
				if name == *host {
					hostID = id
				}
			}
			list, _, err := e.client.Instances().ListByHost(hostID, e.queryOptions())
			if err != nil {
				return e.fail("Error listing instances: %v", err)
			}
			if list == nil {
				list = []*api.Instance{}
			}
			return e.render(list, func(w io.Writer) {
				if len(list) == 0 {
					fmt.Fprintln(w, "No instances found")
					return
				}
				rows := make([][]string, 0, len(list))
				for _, i := range list {
					rows = append(rows, []string{shortID(i.ID, *verbose), i.Name, i.Status, dash(i.TaskState),
						powerState(i.PowerState), dash(hostName(names, i.HostID)), flavorName(i)})
				}
				printTable(w, []string{"ID", "Name", "Status", "Task", "Power", "Host", "Flavor"}, rows)
			})
		}
	},
}).factory()

func (e *env) printInstance(w io.Writer, inst *api.Instance) {
	host := inst.HostID
	if host != "" {
		if h, _, err := e.client.Hosts().Info(host, e.queryOptions()); err == nil {
			host = h.Name
		}
	}
	pairs := []kv{
		{"ID", inst.ID}, {"Name", inst.Name}, {"Status", inst.Status}, {"VM State", inst.VMState},
		{"Task State", dash(inst.TaskState)}, {"Power State", powerState(inst.PowerState)},
		{"Host", dash(host)}, {"Flavor", flavorName(inst)}, {"Image", dash(inst.ImageID)}, {"AZ", dash(inst.AZ)},
		{"Created", formatTime(inst.CreatedAt)}, {"Fault", faultText(inst.Fault)},
	}
	if inst.Fault != nil && inst.Fault.Details != "" {
		pairs = append(pairs, kv{"Fault Details", inst.Fault.Details})
	}
	if t := inst.Task; t != nil {
		pairs = append(pairs, kv{"Operation", fmt.Sprintf("%s (%s, step %s, request %s)", t.Op, t.Kind, t.Step, t.RequestID)})
	}
	if r := inst.Resize; r != nil {
		from := r.SourceHostID
		if h, _, err := e.client.Hosts().Info(from, e.queryOptions()); err == nil {
			from = h.Name
		}
		text := "from " + from
		if r.OldFlavor != nil && r.OldFlavor.Name != "" {
			text += ", flavor " + r.OldFlavor.Name
		}
		pairs = append(pairs, kv{"Pending Resize", text + ": confirm-resize or revert-resize"})
	}
	if inst.Locked {
		text := "true (by " + dash(inst.LockedBy) + ")"
		if inst.LockedReason != "" {
			text = "true (by " + dash(inst.LockedBy) + ": " + inst.LockedReason + ")"
		}
		pairs = append(pairs, kv{"Locked", text})
	}
	printKV(w, append(pairs, kv{"Attempts", itoa(len(inst.Attempts))}))
	if len(inst.Attempts) > 0 {
		fmt.Fprint(w, "\nBuild Attempts\n")
		rows := make([][]string, 0, len(inst.Attempts))
		for _, a := range inst.Attempts {
			rows = append(rows, []string{a.HostID, a.Error})
		}
		printTable(w, []string{"Host", "Error"}, rows)
	}
	fmt.Fprint(w, "\nAllocation\n")
	if a := inst.Allocation; a == nil {
		fmt.Fprintln(w, "<none>")
	} else {
		printKV(w, []kv{{"ID", a.ID}, {"Desired State", a.DesiredState}, {"Client State", dash(a.ClientState)},
			{"Client Description", a.ClientDescription}, {"Power State", powerState(a.PowerState)},
			{"Pending Action", dash(a.PendingAction)}})
	}
	if len(inst.Metadata) > 0 {
		fmt.Fprint(w, "\nMetadata\n")
		printKV(w, mapKV(inst.Metadata))
	}
}

var instanceDeleteCommand = (&spec{
	synopsis: "Delete instances",
	args:     "[options] ID [ID...]",
	help: `Delete the instances with the given IDs (or unique names or ID
prefixes). Every instance is tried; the command fails if any deletion
failed. When the servers keep deleted instances for a while
(reclaim_instance_interval), a delete is soft: the instance goes to
SOFT_DELETED and "cloudctl instance restore" brings it back; -force deletes
at once, soft-deleted instances included. A locked instance is refused.`,
	nargs: atLeast(1),
	setup: func(fs *flag.FlagSet) runFunc {
		force := fs.Bool("force", false, "Delete at once, even when deletes are soft or the instance is soft-deleted.")
		return func(e *env, refs []string) int {
			deleted, code := []string{}, 0
			for _, ref := range refs {
				id, err := e.withInstance(ref, func(id string) error {
					var err error
					if *force {
						_, err = e.client.Instances().ForceDelete(id)
					} else {
						_, err = e.client.Instances().Delete(id)
					}
					return err
				})
				if err != nil {
					code = e.fail("Error deleting instance %q: %v", ref, err)
					continue
				}
				deleted = append(deleted, id)
			}
			if rc := e.render(map[string][]string{"Deleted": deleted}, func(w io.Writer) {
				for _, id := range deleted {
					fmt.Fprintf(w, "Instance %q deleted\n", id)
				}
			}); rc != 0 {
				return rc
			}
			return code
		}
	},
}).factory()

// withInstance runs op with ref as an instance ID and, when no instance
// has that ID, with the ID of the one instance named ref or else whose ID
// starts with ref. It returns the ID op last ran with.
func (e *env) withInstance(ref string, op func(id string) error) (string, error) {
	err := op(ref)
	if !api.IsNotFound(err) {
		return ref, err
	}
	list, _, lerr := e.client.Instances().List(e.queryOptions())
	if lerr != nil {
		return ref, err
	}
	matches := refMatches(ref, list, func(i *api.Instance) (string, string) { return i.Name, i.ID })
	switch len(matches) {
	case 0:
		return ref, err
	case 1:
		return matches[0], op(matches[0])
	}
	return ref, fmt.Errorf("%q matches %d instances (%s); use an ID", ref, len(matches), strings.Join(matches, ", "))
}

// refMatches are the IDs of the items a user's reference names: those
// of that exact name, else those whose ID starts with it (names are not
// unique, so a caller refuses more than one match rather than guess).
func refMatches[T any](ref string, items []T, nameID func(T) (string, string)) []string {
	var byName, byPrefix []string
	for _, it := range items {
		name, id := nameID(it)
		if name == ref {
			byName = append(byName, id)
		}
		if strings.HasPrefix(id, ref) {
			byPrefix = append(byPrefix, id)
		}
	}
	if len(byName) > 0 {
		return byName
	}
	return byPrefix
}

func flavorName(inst *api.Instance) string {
	if inst.Flavor != nil && inst.Flavor.Name != "" {
		return inst.Flavor.Name
	}
	return inst.FlavorID
}

// shortID is the first 8 characters of id, as Nomad shows, unless verbose.
func shortID(id string, verbose bool) string {
	if verbose || len(id) <= 8 {
		return id
	}
	return id[:8]
}

var powerStates = map[int]string{
	api.PowerNoState: "NOSTATE", api.PowerRunning: "RUNNING", api.PowerPaused: "PAUSED",
	api.PowerShutdown: "SHUTDOWN", api.PowerCrashed: "CRASHED", api.PowerSuspend: "SUSPENDED",
}

// powerState is Nova's name of a power state.
func powerState(p int) string {
	if s, ok := powerStates[p]; ok {
		return s
	}
	return fmt.Sprintf("UNKNOWN(%d)", p)
}

func faultText(f *api.Fault) string {
	if f == nil {
		return "<none>"
	}
	if f.Code == 0 {
		return f.Message
	}
	return fmt.Sprintf("%d: %s", f.Code, f.Message)
}

// formatTime formats unix nanoseconds in UTC, or "-" for zero.
func formatTime(ns int64) string {
	if ns == 0 {
		return "-"
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}

// dash stands in for an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
