package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// "cloudctl instance status" and "cloudctl instance stop" take an
// instance or an instance group. A reference is resolved in this order:
// an instance with that exact ID; an instance group of that name; an
// instance of that name, or whose ID starts with it. -group skips the
// instance lookups.

// groupOf reads a group; (nil, nil) when there is none.
func (e *env) groupOf(name string) (*api.InstanceGroupStatus, error) {
	g, _, err := e.client.Groups().Info(name, e.queryOptions())
	var apiErr *api.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
		return nil, nil // also an agent without instance groups
	}
	return g, err
}

// instanceByExactID reads the instance whose ID is ref; nil when none.
func (e *env) instanceByExactID(ref string) (*api.Instance, error) {
	inst, _, err := e.client.Instances().Info(ref, e.queryOptions())
	if api.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if inst.ID != ref {
		return nil, nil // an agent that also answers names
	}
	return inst, nil
}

// instanceNamed reports whether an instance is named exactly ref.
func (e *env) instanceNamed(ref string) bool {
	list, _, err := e.client.Instances().List(e.queryOptions())
	if err != nil {
		return false
	}
	for _, inst := range list {
		if inst.Name == ref {
			return true
		}
	}
	return false
}

var instanceOrGroupStatusCommand = (&spec{
	synopsis: "Show an instance or an instance group, or list the groups",
	args:     "[options] [ID | GROUP]",
	help: `Without an argument, list the instance groups with their deployment status.

With an instance ID, show the instance's states, placement and fault, and
its allocation. With the name of an instance group, show the group: its
latest version, its deployment's progress (desired, placed, running,
healthy and failed members) and its members. Otherwise the argument may be
an instance's name or a prefix of its ID, if unique. An exact instance ID
wins over a group name, and a group name over an instance name; -group
reads only groups.`,
	nargs: argRange{0, 1},
	list:  true,
	setup: func(fs *flag.FlagSet) runFunc {
		onlyGroup := fs.Bool("group", false, "Read the argument as an instance group's name.")
		verbose := fs.Bool("verbose", false, "Show full IDs.")
		return func(e *env, args []string) int {
			if len(args) == 0 {
				list, _, err := e.client.Groups().List(e.queryOptions())
				if err != nil {
					return e.fail("Error listing instance groups: %v", err)
				}
				if list == nil {
					list = []*api.InstanceGroupSummary{}
				}
				return e.render(list, func(w io.Writer) {
					if len(list) == 0 {
						fmt.Fprintln(w, "No instance groups found")
						return
					}
					printTable(w, []string{"Name", "Version", "Status", "Desired", "Healthy", "Submitted"}, groupRows(list))
				})
			}
			ref := args[0]
			if !*onlyGroup {
				inst, err := e.instanceByExactID(ref)
				if err != nil {
					return e.fail("Error reading instance %q: %v", ref, err)
				}
				if inst != nil {
					return e.render(inst, func(w io.Writer) { e.printInstance(w, inst) })
				}
			}
			g, err := e.groupOf(ref)
			if err != nil {
				return e.fail("Error reading instance group %q: %v", ref, err)
			}
			if g != nil {
				return e.render(g, func(w io.Writer) {
					e.printGroup(w, g, *verbose)
					if !*onlyGroup && e.instanceNamed(ref) {
						fmt.Fprintf(w, "\nNote: an instance is named %q too; use its ID to see it.\n", ref)
					}
				})
			}
			if *onlyGroup {
				return e.fail("Error reading instance group %q: no such instance group", ref)
			}
			var inst *api.Instance
			_, err = e.withInstance(ref, func(id string) (err error) {
				inst, _, err = e.client.Instances().Info(id, e.queryOptions())
				return err
			})
			if err != nil {
				return e.fail("Error reading instance %q: %v", ref, err)
			}
			return e.render(inst, func(w io.Writer) { e.printInstance(w, inst) })
		}
	},
}).factory()

// printGroup prints a group, its deployment and its members.
func (e *env) printGroup(w io.Writer, g *api.InstanceGroupStatus, verbose bool) {
	grp, d := g.Group, g.Deployment
	if d == nil {
		d = &api.GroupDeployment{}
	}
	s := grp.Spec
	if s == nil {
		s = &api.InstanceGroupSpec{}
	}
	state := "running"
	switch {
	case grp.Purge:
		state = "stopped (purge)"
	case grp.Stopped:
		state = "stopped"
	}
	placement := "-"
	if p := s.Placement; p != nil {
		placement = p.Policy
		if p.MaxPerHost > 0 {
			placement += fmt.Sprintf(" (max %d per host)", p.MaxPerHost)
		}
		if grp.ServerGroupID != "" {
			placement += ", server group " + shortID(grp.ServerGroupID, verbose)
		}
	}
	pairs := []kv{
		{"Name", grp.Name}, {"Version", itoa(int(grp.Version))}, {"State", state},
		{"Deployment", dash(d.Status)}, {"Description", dash(d.Description)},
		{"Desired", itoa(d.Desired)}, {"Placed", itoa(d.Placed)}, {"Running", itoa(d.Running)},
		{"Updated", itoa(d.Updated)}, {"Healthy", itoa(d.Healthy)}, {"Failed", itoa(d.Failed)},
		{"Flavor", s.Flavor}, {"Image", s.Image}, {"AZ", dash(s.AZ)}, {"Key Name", dash(s.KeyName)},
		{"Placement", placement}, {"Submitted", formatTime(grp.SubmitTime)}, {"Check Index", fmt.Sprint(grp.ModifyIndex)},
	}
	if len(s.Constraints) > 0 {
		var cs []string
		for _, c := range s.Constraints {
			cs = append(cs, strings.TrimSpace(c.Attribute+" "+c.Operator+" "+c.Value))
		}
		pairs = append(pairs, kv{"Constraints", strings.Join(cs, ", ")})
	}
	if len(s.Networks) > 0 {
		var ns []string
		for _, n := range s.Networks {
			ns = append(ns, n.Name)
		}
		pairs = append(pairs, kv{"Networks", strings.Join(ns, ", ")})
	}
	printKV(w, pairs)
	if u := s.Update; u != nil {
		fmt.Fprint(w, "\nUpdate\n")
		printKV(w, []kv{{"Max Parallel", itoa(u.MaxParallel)}, {"Health Check", u.HealthCheck}, {"Min Healthy Time", u.MinHealthyTime.String()}})
	}
	if len(s.Metadata) > 0 {
		fmt.Fprint(w, "\nMetadata\n")
		printKV(w, mapKV(s.Metadata))
	}
	fmt.Fprint(w, "\nMembers\n")
	if len(g.Members) == 0 {
		fmt.Fprintln(w, "No members")
		return
	}
	names := e.hostNames()
	rows := make([][]string, 0, len(g.Members))
	for _, m := range g.Members {
		rows = append(rows, []string{shortID(m.ID, verbose), m.Name, itoa(int(m.InstanceGroupVersion)), m.Status, dash(m.TaskState),
			powerState(m.PowerState), dash(hostName(names, m.HostID)), flavorName(m), formatTime(m.CreatedAt)})
	}
	printTable(w, []string{"ID", "Name", "Version", "Status", "Task", "Power", "Host", "Flavor", "Created"}, rows)
}

var instanceOrGroupStopCommand = (&spec{
	synopsis: "Stop (power off) an instance, or stop an instance group",
	args:     "[options] ID | GROUP",
	help: `With an instance, power it off (SHUTOFF); its host keeps its resources and
start powers it on again. The command follows the operation until it
finishes, and exits 1 if it failed; -detach returns as soon as the servers
accepted it.

With the name of an instance group, stop the group: the servers store a
stopped version and delete every member; with -purge they also remove the
group (its versions and its server group) once the members are gone. The
command follows until then; -detach returns at once.

The argument is read as for "instance status": an exact instance ID, else
an instance group's name, else an instance's name or ID prefix. When an
instance and a group share the name, the command refuses to guess: use
-group, or the instance's ID. -purge, -check-index and -group always mean
the group.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		purge := fs.Bool("purge", false, "Remove the instance group once its members are deleted.")
		onlyGroup := fs.Bool("group", false, "Read the argument as an instance group's name.")
		checkIndex := fs.String("check-index", "", "Stop the group only if its modify index is `N`.")
		detach := fs.Bool("detach", false, "Return as soon as the servers accepted the stop instead of following it.")
		return func(e *env, args []string) int {
			ref := args[0]
			wf := writeFlags{checkIndex: *checkIndex, detach: *detach}
			opts, err := wf.options()
			if err != nil {
				return e.usage("%v", err)
			}
			group := *onlyGroup || *purge || *checkIndex != ""
			if !group {
				inst, err := e.instanceByExactID(ref)
				if err != nil {
					return e.fail("Error reading instance %q: %v", ref, err)
				}
				if inst == nil {
					g, err := e.groupOf(ref)
					if err != nil {
						return e.fail("Error reading instance group %q: %v", ref, err)
					}
					if g != nil {
						if e.instanceNamed(ref) {
							return e.fail("Error: %q names both an instance and an instance group; use -group to stop the group, or the instance's ID", ref)
						}
						group = true
					}
				}
			}
			if !group {
				return e.runOp(api.OpStop, "stop", ref, &api.ActionOptions{}, *detach)
			}
			prior, _ := e.groupOf(ref)
			resp, wm, err := e.client.Groups().Stop(ref, *purge, opts)
			if err != nil {
				return e.fail("Error stopping instance group %q: %v", ref, err)
			}
			what := fmt.Sprintf("Stopping instance group %q: version %d", resp.Name, resp.Version)
			if !resp.Changed {
				what = fmt.Sprintf("Instance group %q is stopped already (version %d)", resp.Name, resp.Version)
			}
			return e.followGroup(resp, wm, what, *detach, prior)
		}
	},
}).factory()

// groupWaitTime is how long each blocking query of a group monitor
// waits.
var groupWaitTime = 5 * time.Minute

// groupMonitor prints what changes in a group while it converges.
type groupMonitor struct {
	w       io.Writer
	hosts   map[string]string
	members map[string]string // id → last line shown
	names   map[string]string // id → name
	dep     string
}

func (m *groupMonitor) printf(format string, args ...any) {
	fmt.Fprintf(m.w, "    %s: %s\n", stamp(0), fmt.Sprintf(format, args...))
}

// memberLine describes a member's status, task, host and fault.
func (m *groupMonitor) memberLine(inst *api.Instance) string {
	s := progress(inst)
	if inst.HostID != "" {
		s += " on " + hostName(m.hosts, inst.HostID)
	}
	if inst.Status == "ERROR" && inst.Fault != nil {
		s += ": " + faultText(inst.Fault)
	}
	return s
}

// observe prints member and deployment changes.
func (m *groupMonitor) observe(g *api.InstanceGroupStatus, refreshHosts func() map[string]string) {
	seen := map[string]bool{}
	for _, inst := range g.Members {
		seen[inst.ID] = true
		if inst.HostID != "" && m.hosts[inst.HostID] == "" {
			m.hosts = refreshHosts()
		}
		line := m.memberLine(inst)
		label := fmt.Sprintf("Instance %q (%s)", inst.Name, shortID(inst.ID, false))
		prev, known := m.members[inst.ID]
		switch {
		case !known:
			m.printf("%s created: %s", label, line)
		case prev != line:
			m.printf("%s: %s", label, line)
		}
		m.members[inst.ID], m.names[inst.ID] = line, inst.Name
	}
	ids := make([]string, 0, len(m.members))
	for id := range m.members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !seen[id] {
			m.printf("Instance %q (%s) deleted", m.names[id], shortID(id, false))
			delete(m.members, id)
		}
	}
	if d := g.Deployment; d != nil {
		line := d.Status + ": " + d.Description
		if line != m.dep {
			m.dep = line
			m.printf("Deployment %s", line)
		}
	}
}

// followGroup follows a group after a write until its deployment of the
// written version ends, unless detach.
// prior is the group as it was before the write (nil for none): its
// members are not reported as new.
func (e *env) followGroup(resp *api.GroupWriteResponse, wm *api.WriteMeta, what string, detach bool, prior *api.InstanceGroupStatus) int {
	res := &groupWriteResult{GroupWriteResponse: resp}
	out := e.ui.Stdout
	if e.json {
		out = io.Discard
	}
	if detach {
		g, _, _ := e.client.Groups().Info(resp.Name, e.queryOptions())
		res.Status = g
		return e.render(res, func(w io.Writer) {
			fmt.Fprintln(w, what)
			fmt.Fprintf(w, "Check Index: %d\nFollow it with \"cloudctl instance status %s\"\n", resp.GroupModifyIndex, resp.Name)
		})
	}
	fmt.Fprintf(out, "==> %s: %s\n", stamp(0), what)
	fmt.Fprintf(out, "    Check Index: %d\n", resp.GroupModifyIndex)
	m := &groupMonitor{w: out, hosts: e.hostNames(), members: map[string]string{}, names: map[string]string{}}
	if prior != nil {
		for _, inst := range prior.Members {
			m.members[inst.ID], m.names[inst.ID] = m.memberLine(inst), inst.Name
		}
	}
	q := e.queryOptions()
	q.WaitIndex, q.WaitTime = wm.LastIndex, groupWaitTime
	if q.WaitIndex > 0 {
		q.WaitIndex-- // see the write itself
	}
	for {
		g, qm, err := e.client.Groups().Info(resp.Name, q)
		if api.IsNotFound(err) {
			fmt.Fprintf(out, "==> %s: Instance group %q purged\n", stamp(0), resp.Name)
			res.Result = "purged"
			return e.finishGroup(res, 0)
		}
		if err != nil {
			return e.fail("Error following instance group %q: %v", resp.Name, err)
		}
		m.observe(g, e.hostNames)
		res.Status = g
		if d := g.Deployment; d != nil && d.Version >= resp.Version {
			switch d.Status {
			case api.DeploymentSuccessful:
				fmt.Fprintf(out, "==> %s: Deployment of instance group %q version %d successful: %s\n", stamp(0), resp.Name, d.Version, d.Description)
				res.Result = d.Status
				return e.finishGroup(res, 0)
			case api.DeploymentFailed:
				fmt.Fprintf(out, "==> %s: Deployment of instance group %q version %d failed: %s\n", stamp(0), resp.Name, d.Version, d.Description)
				res.Result = d.Status
				if rc := e.finishGroup(res, 0); rc != 0 {
					return rc
				}
				return e.fail("Error: the deployment of instance group %q version %d failed: %s", resp.Name, d.Version, d.Description)
			case api.DeploymentStopped:
				if !g.Group.Purge {
					fmt.Fprintf(out, "==> %s: Instance group %q stopped: %s\n", stamp(0), resp.Name, d.Description)
					res.Result = d.Status
					return e.finishGroup(res, 0)
				}
			}
		}
		if qm.LastIndex <= q.WaitIndex {
			time.Sleep(buildPollPause)
		}
		q.WaitIndex = qm.LastIndex
	}
}

func (e *env) finishGroup(res *groupWriteResult, rc int) int {
	if e.json {
		if r := e.render(res, nil); r != 0 {
			return r
		}
	}
	return rc
}
