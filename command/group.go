package command

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/api"
	hclspec "github.com/stratus-cloud/stratus/spec"
)

// Instance groups: "cloudctl instance plan|run FILE" for HCL instance
// specs, and the group side of "instance status|stop", "instance
// history" and "instance revert".

// Exit codes of "instance plan", as "nomad job plan" has them.
const (
	planNoChanges = 0
	planError     = 1
	planChanges   = 2
)

// repeated is a repeatable string flag.
type repeated []string

func (l *repeated) String() string { return strings.Join(*l, ",") }

func (l *repeated) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// specFlags are the flags of the commands that read a spec.
type specFlags struct {
	vars, varFiles repeated
}

func (f *specFlags) define(fs *flag.FlagSet) {
	fs.Var(&f.vars, "var", "Set a variable of the spec, as `NAME=VALUE`. May be repeated.")
	fs.Var(&f.varFiles, "var-file", "Read variable values from an HCL `FILE` of NAME = VALUE lines. May be repeated.")
}

// loadSpec parses the spec at path (or stdin for "-") and converts it to
// the API's type. Parse errors are printed with the source they point
// at; the returned code is then 1.
func (e *env) loadSpec(path string, f *specFlags) (*api.InstanceGroupSpec, int) {
	opts := &hclspec.Options{Vars: f.vars, VarFiles: f.varFiles, Env: os.Environ()}
	var parsed any
	var err error
	if path == "-" {
		src, rerr := io.ReadAll(os.Stdin)
		if rerr != nil {
			return nil, e.fail("Error reading the spec from stdin: %v", rerr)
		}
		parsed, err = hclspec.Parse("<stdin>", src, opts)
	} else {
		parsed, err = hclspec.ParseFile(path, opts)
	}
	if err != nil {
		fmt.Fprintf(e.ui.Stderr, "Error parsing %s:\n\n", path)
		if perr, ok := err.(*hclspec.Error); ok {
			_ = perr.WriteTo(e.ui.Stderr, 0, false)
		} else {
			fmt.Fprintln(e.ui.Stderr, err)
		}
		return nil, 1
	}
	// The API mirrors the domain type field by field.
	b, err := json.Marshal(parsed)
	if err != nil {
		return nil, e.fail("Error encoding the spec: %v", err)
	}
	var out api.InstanceGroupSpec
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, e.fail("Error converting the spec: %v", err)
	}
	return &out, 0
}

var instancePlanCommand = (&spec{
	synopsis: "Show what running an instance spec would change",
	args:     "[options] FILE",
	help: `Parse an HCL instance spec and ask the servers what running it would do:
the spec's changes against the group's latest version, and for every member
whether it is created, updated in place (a resize, a metadata change),
replaced (a rebuild, or deleted and created again) or destroyed. Nothing
changes. FILE may be "-" for stdin.

The plan ends with the group's check index: "cloudctl instance run
-check-index N FILE" applies the spec only if nobody changed the group
since.

Exit codes: 0 no changes, 1 error, 2 changes (as "nomad job plan").`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		var sf specFlags
		sf.define(fs)
		verbose := fs.Bool("verbose", false, "Show unchanged members and full IDs.")
		return func(e *env, args []string) int {
			s, code := e.loadSpec(args[0], &sf)
			if code != 0 {
				return planError
			}
			plan, _, err := e.client.Groups().Plan(s)
			if err != nil {
				return e.fail("Error planning instance group %q: %v", s.Name, err)
			}
			if rc := e.render(plan, func(w io.Writer) { printPlan(w, plan, args[0], *verbose) }); rc != 0 {
				return planError
			}
			if plan.Changes() {
				return planChanges
			}
			return planNoChanges
		}
	},
}).factory()

// planMarks are the markers of plan lines, as Terraform and Nomad show
// them.
var planMarks = map[string]string{
	api.PlanCreate: "+", api.PlanUpdate: "~", api.PlanReplace: "+/-", api.PlanDestroy: "-", api.PlanNone: " ",
	api.DiffAdded: "+", api.DiffDeleted: "-", api.DiffEdited: "~",
}

var planWords = map[string]string{
	api.PlanCreate: "create", api.PlanUpdate: "update in place", api.PlanReplace: "replace",
	api.PlanDestroy: "destroy", api.PlanNone: "no change",
}

var effectWords = map[string]string{
	api.EffectResize: "resize", api.EffectInPlace: "in place", api.EffectRebuild: "rebuild",
	api.EffectRecreate: "forces replacement",
}

// unquoted are the fields whose values print as they are.
var unquoted = map[string]bool{"count": true, "update.max_parallel": true, "update.min_healthy_time": true, "user_data": true, "state": true}

func fieldValue(name, v string) string {
	if unquoted[name] {
		return v
	}
	return strconv.Quote(v)
}

// fieldLine renders one field change.
func fieldLine(f *api.FieldDiff) string {
	var s string
	switch f.Type {
	case api.DiffAdded:
		s = fmt.Sprintf("+ %s: %s", f.Name, fieldValue(f.Name, f.New))
	case api.DiffDeleted:
		s = fmt.Sprintf("- %s: %s", f.Name, fieldValue(f.Name, f.Old))
	default:
		s = fmt.Sprintf("~ %s: %s => %s", f.Name, fieldValue(f.Name, f.Old), fieldValue(f.Name, f.New))
	}
	if w := effectWords[f.Effect]; w != "" {
		s += " (" + w + ")"
	}
	return s
}

// printPlan prints a plan for people.
func printPlan(w io.Writer, p *api.GroupPlan, file string, verbose bool) {
	switch {
	case !p.Exists:
		fmt.Fprintf(w, "+ Instance group %q (new)\n", p.Name)
	case !p.Changes():
		fmt.Fprintf(w, "  Instance group %q (version %d): no changes\n", p.Name, p.CurrentVersion)
	case p.Stopped:
		fmt.Fprintf(w, "+/- Instance group %q (version %d, stopped): start again as version %d\n", p.Name, p.CurrentVersion, p.CurrentVersion+1)
	case !p.SpecChanged:
		fmt.Fprintf(w, "~ Instance group %q (version %d): converge to the current version\n", p.Name, p.CurrentVersion)
	default:
		fmt.Fprintf(w, "~ Instance group %q (version %d => %d)\n", p.Name, p.CurrentVersion, p.CurrentVersion+1)
	}
	for _, f := range p.Fields {
		fmt.Fprintf(w, "    %s\n", fieldLine(f))
	}
	var shown []*api.InstanceDiff
	for _, d := range p.Instances {
		if d.Action != api.PlanNone || verbose {
			shown = append(shown, d)
		}
	}
	if len(shown) > 0 {
		fmt.Fprint(w, "\nInstances:\n")
		for _, d := range shown {
			name := d.Name
			if d.ID != "" {
				name += " (" + shortID(d.ID, verbose) + ")"
			}
			line := fmt.Sprintf("  %-3s %s: %s", planMarks[d.Action], name, planWords[d.Action])
			if d.Reason != "" {
				line += " (" + d.Reason + ")"
			}
			fmt.Fprintln(w, strings.TrimRight(line, " "))
			for _, f := range d.Fields {
				fmt.Fprintf(w, "        %s\n", fieldLine(f))
			}
		}
	}
	s := p.Summary
	fmt.Fprintf(w, "\nSummary: %d to create, %d to update in place, %d to replace, %d to destroy, %d unchanged.\n",
		s.Create, s.Update, s.Replace, s.Destroy, s.Unchanged)
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "Warning: %s\n", warn)
	}
	if !p.Changes() {
		return
	}
	fmt.Fprintf(w, "\nCheck Index: %d\n", p.CheckIndex)
	fmt.Fprintf(w, "To apply this plan only if the group did not change meanwhile, run:\n")
	fmt.Fprintf(w, "cloudctl instance run -check-index %d %s\n", p.CheckIndex, file)
}

// groupWriteResult is the -json output of run, stop and revert.
type groupWriteResult struct {
	*api.GroupWriteResponse
	// Status is the group as the command left it (with -detach, as the
	// write left it); nil once a purged group is gone.
	Status *api.InstanceGroupStatus `json:",omitempty"`
	// Result is "successful", "failed", "stopped" or "purged" once
	// followed; empty with -detach.
	Result string `json:",omitempty"`
}

// writeFlags are the flags of the commands that store a version.
type writeFlags struct {
	checkIndex string
	detach     bool
}

func (f *writeFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.checkIndex, "check-index", "", "Apply only if the group's modify index is `N` (from \"instance plan\"); 0 means the group must not exist yet.")
	fs.BoolVar(&f.detach, "detach", false, "Return as soon as the servers stored the version instead of following the deployment.")
}

func (f *writeFlags) options() (*api.GroupWriteOptions, error) {
	if f.checkIndex == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(f.checkIndex, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("-check-index %q is not a non-negative integer", f.checkIndex)
	}
	return &api.GroupWriteOptions{EnforceIndex: true, CheckIndex: n}, nil
}

var instanceRunCommand = (&spec{
	synopsis: "Run an instance spec: create or update an instance group",
	args:     "[options] FILE",
	help: `Parse an HCL instance spec and store it as the next version of its instance
group; the servers then converge the group to it: they create missing
members (NAME-1, NAME-2, …), delete extra ones, replace members in ERROR or
on a down host, and roll changes out max_parallel members at a time,
waiting for each to be healthy for min_healthy_time. A spec identical to
the latest version stores nothing. FILE may be "-" for stdin.

The command follows the deployment, printing placements, every member's
state changes and errors, until every member is healthy (exit 0) or the
deployment fails (exit 1); -detach returns at once. Interrupting it does
not stop the deployment; follow it with "cloudctl instance status NAME".`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		var sf specFlags
		var wf writeFlags
		sf.define(fs)
		wf.define(fs)
		return func(e *env, args []string) int {
			opts, err := wf.options()
			if err != nil {
				return e.usage("%v", err)
			}
			s, code := e.loadSpec(args[0], &sf)
			if code != 0 {
				return code
			}
			prior, _ := e.groupOf(s.Name)
			resp, wm, err := e.client.Groups().Register(s, opts)
			if err != nil {
				if api.IsKind(err, api.KindConflict) && opts != nil {
					return e.fail("Error running instance group %q: %v\nRun \"cloudctl instance plan %s\" again to see what changed.", s.Name, err, args[0])
				}
				return e.fail("Error running instance group %q: %v", s.Name, err)
			}
			what := fmt.Sprintf("Registered instance group %q: version %d", resp.Name, resp.Version)
			if !resp.Changed {
				what = fmt.Sprintf("Instance group %q is at version %d with this spec already", resp.Name, resp.Version)
			}
			return e.followGroup(resp, wm, what, wf.detach, prior)
		}
	},
}).factory()

var instanceRevertCommand = (&spec{
	synopsis: "Revert an instance group to an earlier version",
	args:     "[options] NAME VERSION",
	help: `Store the spec of an earlier version of an instance group as its next
version ("cloudctl instance history NAME" lists them), and follow the
deployment like "instance run" does.`,
	nargs: exactly(2),
	setup: func(fs *flag.FlagSet) runFunc {
		var wf writeFlags
		wf.define(fs)
		return func(e *env, args []string) int {
			opts, err := wf.options()
			if err != nil {
				return e.usage("%v", err)
			}
			version, err := strconv.ParseUint(strings.TrimPrefix(args[1], "v"), 10, 64)
			if err != nil || version == 0 {
				return e.usage("VERSION %q is not a version number", args[1])
			}
			prior, _ := e.groupOf(args[0])
			resp, wm, err := e.client.Groups().Revert(args[0], version, opts)
			if err != nil {
				return e.fail("Error reverting instance group %q to version %d: %v", args[0], version, err)
			}
			what := fmt.Sprintf("Reverted instance group %q to the spec of version %d: version %d", resp.Name, version, resp.Version)
			if !resp.Changed {
				what = fmt.Sprintf("Instance group %q runs the spec of version %d already (version %d)", resp.Name, version, resp.Version)
			}
			return e.followGroup(resp, wm, what, wf.detach, prior)
		}
	},
}).factory()

var instanceHistoryCommand = (&spec{
	synopsis: "List the versions of an instance group",
	args:     "[options] NAME",
	help: `List the stored versions of an instance group, newest first, and with -p
what each changed against the one before it. "cloudctl instance revert
NAME VERSION" runs an earlier one again.`,
	nargs: exactly(1),
	list:  true,
	setup: func(fs *flag.FlagSet) runFunc {
		diffs := fs.Bool("p", false, "Show each version's changes against the one before it.")
		return func(e *env, args []string) int {
			versions, _, err := e.client.Groups().Versions(args[0], e.queryOptions())
			if err != nil {
				return e.fail("Error reading the versions of instance group %q: %v", args[0], err)
			}
			return e.render(versions, func(w io.Writer) { printHistory(w, versions, *diffs) })
		}
	},
}).factory()

func versionState(v *api.InstanceGroupVersion) string {
	switch {
	case v.Purge:
		return "stopped (purge)"
	case v.Stopped:
		return "stopped"
	}
	return "running"
}

func printHistory(w io.Writer, versions []*api.InstanceGroupVersion, diffs bool) {
	if !diffs {
		rows := make([][]string, 0, len(versions))
		for _, v := range versions {
			note := "-"
			if v.RevertedFrom != 0 {
				note = fmt.Sprintf("reverted to version %d", v.RevertedFrom)
			}
			var count, flavor, image string
			if v.Spec != nil {
				count, flavor, image = itoa(v.Spec.Count), v.Spec.Flavor, v.Spec.Image
			}
			rows = append(rows, []string{itoa(int(v.Version)), formatTime(v.SubmitTime), versionState(v), count, flavor, image, note})
		}
		printTable(w, []string{"Version", "Submitted", "State", "Count", "Flavor", "Image", "Note"}, rows)
		return
	}
	for i, v := range versions {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printKV(w, []kv{{"Version", itoa(int(v.Version))}, {"Submitted", formatTime(v.SubmitTime)}, {"State", versionState(v)}})
		if v.RevertedFrom != 0 {
			fmt.Fprintf(w, "Reverted to the spec of version %d\n", v.RevertedFrom)
		}
		switch {
		case i == len(versions)-1:
			fmt.Fprintln(w, "Diff: (the oldest version kept)")
		case len(v.Diff) == 0:
			fmt.Fprintln(w, "Diff: no changes")
		default:
			fmt.Fprintln(w, "Diff:")
			for _, f := range v.Diff {
				fmt.Fprintf(w, "    %s\n", fieldLine(f))
			}
		}
	}
}

// groupRows are the rows of the group list.
func groupRows(list []*api.InstanceGroupSummary) [][]string {
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	rows := make([][]string, 0, len(list))
	for _, g := range list {
		status, healthy := "-", "-"
		if d := g.Deployment; d != nil {
			status, healthy = d.Status, itoa(d.Healthy)
		}
		desired := itoa(g.Desired)
		if g.Stopped {
			desired = "0"
		}
		rows = append(rows, []string{g.Name, itoa(int(g.Version)), status, desired, healthy, formatTime(g.SubmitTime)})
	}
	return rows
}
