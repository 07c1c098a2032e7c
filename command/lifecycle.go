package command

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

// The instance operations: "cloudctl instance <op> ID" for every
// operation of the native API. Each asks for the operation and, unless
// -detach is given, follows it until the servers finish it, printing each
// change of the instance's status and task and each event of the action
// that records it, as "nomad job run" follows its evaluation.

// opFlag is an option an operation command takes.
type opFlag uint8

const (
	flagHard opFlag = 1 << iota
	flagImage
	flagFlavor
	flagHost
	flagReason
)

// opCommand declares one operation command.
type opCommand struct {
	// op is the API action name sent (an api.Op constant or "reboot").
	op       string
	synopsis string
	help     string
	flags    opFlag
	// imageUsage and hostUsage word -image and -host for this command.
	imageUsage, hostUsage string
}

// opCommands are the operation commands by their name under "instance".
var opCommands = map[string]*opCommand{
	"start": {op: api.OpStart, synopsis: "Start a stopped instance",
		help: "Power on a SHUTOFF instance."},
	"stop": {op: api.OpStop, synopsis: "Stop (power off) an instance",
		help: "Power off an instance (SHUTOFF). Its host keeps its resources; start powers it on again."},
	"reboot": {op: api.ActionReboot, synopsis: "Reboot an instance", flags: flagHard,
		help: "Reboot an instance: ask its guest to restart (REBOOT), or reset it with -hard\n(HARD_REBOOT), which also works on a stopped, paused, suspended or failed one."},
	"pause": {op: api.OpPause, synopsis: "Pause an instance",
		help: "Freeze a running instance in memory (PAUSED); unpause resumes it. The host's\ndriver must support pausing."},
	"unpause": {op: api.OpUnpause, synopsis: "Unpause a paused instance",
		help: "Resume a PAUSED instance."},
	"suspend": {op: api.OpSuspend, synopsis: "Suspend an instance",
		help: "Save a running instance's memory to disk and stop it (SUSPENDED); resume\nrestores it. The host's driver must support suspending."},
	"resume": {op: api.OpResume, synopsis: "Resume a suspended instance",
		help: "Restore a SUSPENDED instance."},
	"lock": {op: api.OpLock, synopsis: "Lock an instance", flags: flagReason,
		help: `Lock an instance against changes. Users of its project can no longer act on
it through the Nova API (an admin's lock cannot be undone by them), and
"cloudctl instance delete" refuses it until it is unlocked. cloudctl acts as
an admin for every other operation, so they still apply. The lock applies at
once.`},
	"unlock": {op: api.OpUnlock, synopsis: "Unlock an instance",
		help: "Remove an instance's lock. It applies at once."},
	"rescue": {op: api.OpRescue, synopsis: "Boot an instance from a rescue image", flags: flagImage,
		imageUsage: "The image to boot the rescue system from. Defaults to the instance's own image.",
		help:       "Boot an instance from a rescue image with its own disk attached (RESCUE), to\nrepair it; unrescue boots it normally again."},
	"unrescue": {op: api.OpUnrescue, synopsis: "Leave rescue mode",
		help: "Boot a RESCUE instance from its own disk again."},
	"rebuild": {op: api.OpRebuild, synopsis: "Rebuild an instance from an image", flags: flagImage,
		imageUsage: "The image to rebuild from. Defaults to the instance's current image.",
		help:       "Re-create an instance's disk from an image on the same host (REBUILD); its\nID, name, flavor and metadata stay."},
	"resize": {op: api.OpResize, synopsis: "Resize an instance to another flavor", flags: flagFlavor,
		help: `Move an instance to a new flavor (RESIZE). The scheduler picks a host for
it; the instance then waits in VERIFY_RESIZE, its old host still holding
its old resources, until confirm-resize keeps the new one or revert-resize
goes back (the servers confirm on their own after resize_confirm_window).
A stopped instance stays stopped. The root disk cannot shrink.`},
	"confirm-resize": {op: api.OpConfirmResize, synopsis: "Confirm a resize or migration",
		help: "Keep a VERIFY_RESIZE instance on its new host and flavor, and free its old\nhost."},
	"revert-resize": {op: api.OpRevertResize, synopsis: "Revert a resize or migration",
		help: "Send a VERIFY_RESIZE instance back to its old host and flavor (REVERT_RESIZE)."},
	"migrate": {op: api.OpMigrate, synopsis: "Cold-migrate an instance to another host", flags: flagHost,
		hostUsage: "The host to move to, by ID or name. Defaults to the scheduler's choice.",
		help: `Move an instance to another host with the same flavor, powered off while it
moves (MIGRATING, then VERIFY_RESIZE until confirm-resize or
revert-resize).`},
	"live-migrate": {op: api.OpLiveMigrate, synopsis: "Live-migrate an instance to another host", flags: flagHost,
		hostUsage: "The host to move to, by ID or name. Defaults to the scheduler's choice.",
		help:      "Move a running or paused instance to another host while it keeps running\n(MIGRATING). Both hosts' drivers must support live migration."},
	"evacuate": {op: api.OpEvacuate, synopsis: "Rebuild an instance of a down host elsewhere", flags: flagHost,
		hostUsage: "The host to rebuild on, by ID or name. Defaults to the scheduler's choice.",
		help:      "Rebuild an instance whose host is down on another host, from its image\n(REBUILD). Its host must be down."},
	"shelve": {op: api.OpShelve, synopsis: "Shelve an instance",
		help: `Power an instance off and keep it (SHELVED); unshelve brings it back. The
servers offload it after shelved_offload_time (or at once when that is 0),
freeing its host (SHELVED_OFFLOADED).`},
	"shelve-offload": {op: api.OpShelveOffload, synopsis: "Free the host of a shelved instance",
		help: "Remove a SHELVED instance from its host (SHELVED_OFFLOADED), freeing the\nhost's resources."},
	"unshelve": {op: api.OpUnshelve, synopsis: "Unshelve an instance", flags: flagHost,
		hostUsage: "The host to unshelve an offloaded instance on, by ID or name. Defaults to the scheduler's choice.",
		help:      "Bring a SHELVED instance back up, or schedule and spawn a SHELVED_OFFLOADED one\nagain."},
	"restore": {op: api.OpRestore, synopsis: "Restore a soft-deleted instance",
		help: "Bring back a SOFT_DELETED instance before the servers reclaim it\n(reclaim_instance_interval)."},
}

func init() {
	for name, c := range opCommands {
		if name == "stop" {
			continue // "instance stop" stops instance groups too: group_status.go
		}
		register("instance "+name, c.factory(name))
	}
}

// opResult is the -json output of an operation command.
type opResult struct {
	// ID is the instance's ID.
	ID string
	// Action is the API action sent; Hard is set for a hard reboot.
	Action string
	Hard   bool `json:",omitempty"`
	// RequestID names the instance action that records the operation.
	RequestID   string
	MigrationID uint64 `json:",omitempty"`
	// Result is Success or Error once the operation finished; it is
	// empty with -detach.
	Result string `json:",omitempty"`
	// Instance is the instance as the operation left it (with -detach,
	// as it started).
	Instance *api.Instance
	// InstanceAction is the action with its events, when followed.
	InstanceAction *api.InstanceAction `json:",omitempty"`
}

func (c *opCommand) factory(name string) CommandFactory {
	help := c.help + `

ID may also be the instance's name or a prefix of its ID, if unique. The
command follows the operation until it finishes, showing each change of the
instance's status and task and each event of its action, and exits 1 if
the action failed; -detach returns as soon as the servers accepted it.
Interrupting the command does not stop the operation; check on it with
"cloudctl instance actions ID REQUEST_ID".`
	return (&spec{
		synopsis: c.synopsis,
		args:     "[options] ID",
		help:     help,
		nargs:    exactly(1),
		setup: func(fs *flag.FlagSet) runFunc {
			opts := &api.ActionOptions{}
			if c.flags&flagHard != 0 {
				fs.BoolVar(&opts.Hard, "hard", false, "Reset the instance instead of asking its guest to reboot.")
			}
			if c.flags&flagImage != 0 {
				fs.StringVar(&opts.Image, "image", "", c.imageUsage)
			}
			if c.flags&flagFlavor != 0 {
				fs.StringVar(&opts.Flavor, "flavor", "", "The flavor to resize to, by ID or name. Required.")
			}
			if c.flags&flagHost != 0 {
				fs.StringVar(&opts.Host, "host", "", c.hostUsage)
			}
			if c.flags&flagReason != 0 {
				fs.StringVar(&opts.Reason, "reason", "", "Why the instance is locked, shown in instance status.")
			}
			detach := fs.Bool("detach", false, "Return as soon as the operation is accepted instead of following it.")
			return func(e *env, args []string) int {
				if c.flags&flagFlavor != 0 && opts.Flavor == "" {
					return e.usage("-flavor is required")
				}
				what := name
				if opts.Hard {
					what = "hard " + name
				}
				return e.runOp(c.op, what, args[0], opts, *detach)
			}
		},
	}).factory()
}

// runOp asks for op on the instance ref and follows it unless detach.
func (e *env) runOp(op, what, ref string, opts *api.ActionOptions, detach bool) int {
	var res *api.ActionResult
	var wm *api.WriteMeta
	id, err := e.withInstance(ref, func(id string) (err error) {
		res, wm, err = e.client.Instances().Perform(id, op, opts)
		return err
	})
	if err != nil {
		return e.fail("Error requesting %s of instance %q: %v", what, ref, err)
	}
	out := &opResult{ID: id, Action: op, Hard: opts.Hard, RequestID: res.RequestID, MigrationID: res.MigrationID, Instance: res.Instance}
	if detach || res.RequestID == "" {
		return e.render(out, func(w io.Writer) {
			fmt.Fprintf(w, "Requested %s of instance %q", what, id)
			if res.RequestID != "" {
				fmt.Fprintf(w, " (request %s)", res.RequestID)
			}
			fmt.Fprintln(w)
		})
	}
	return e.monitorOp(out, what, wm.LastIndex)
}

// opMonitor prints the progress of one operation.
type opMonitor struct {
	e      *env
	w      io.Writer
	hosts  map[string]string
	status string       // the last status line printed
	events map[int]bool // events whose start was printed
	ended  map[int]bool // events whose end was printed
}

// line is one progress line and when it happened.
type line struct {
	at   int64
	text string
}

// observe prints what changed in inst and act since the last call.
func (m *opMonitor) observe(inst *api.Instance, act *api.InstanceAction) {
	var lines []line
	if act != nil {
		for i, ev := range act.Events {
			if !m.events[i] {
				m.events[i] = true
				text := "Event " + ev.Event + " started"
				if ev.HostID != "" {
					text += " on " + hostName(m.hosts, ev.HostID)
				}
				lines = append(lines, line{ev.StartTime, text})
			}
			if ev.Result != "" && !m.ended[i] {
				m.ended[i] = true
				text := "Event " + ev.Event + ": " + ev.Result
				if ev.Details != "" {
					text += ": " + ev.Details
				}
				lines = append(lines, line{ev.FinishTime, text})
			}
		}
	}
	if inst != nil {
		if s := statusLine(inst, m.hosts); s != m.status {
			m.status = s
			lines = append(lines, line{inst.UpdatedAt, s})
		}
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].at < lines[j].at })
	for _, l := range lines {
		fmt.Fprintf(m.w, "    %s: %s\n", stamp(l.at), l.text)
	}
}

// statusLine describes an instance's status, task and host.
func statusLine(inst *api.Instance, hosts map[string]string) string {
	s := "Status " + inst.Status
	if inst.TaskState != "" {
		s += ", task " + inst.TaskState
	}
	if t := inst.Task; t != nil && t.Step != "" {
		if inst.TaskState == "" {
			s += ", task " + t.Kind
		}
		s += " (step " + t.Step + ")"
	}
	if inst.HostID != "" {
		s += " on " + hostName(hosts, inst.HostID)
	}
	return s
}

// stamp formats unix nanoseconds for a progress line, now for 0.
func stamp(ns int64) string {
	if ns == 0 {
		ns = time.Now().UnixNano()
	}
	return time.Unix(0, ns).UTC().Format(time.RFC3339)
}

// inTask reports whether inst is still in the task of the action rid.
func inTask(inst *api.Instance, rid string) bool {
	return inst.Task != nil && inst.Task.RequestID == rid
}

// monitorOp follows the operation of r from index on until the instance
// leaves its task, then reports the action's result.
func (e *env) monitorOp(r *opResult, what string, index uint64) int {
	m := &opMonitor{e: e, w: io.Discard, events: map[int]bool{}, ended: map[int]bool{}}
	if !e.json {
		m.w = e.ui.Stdout
	}
	m.hosts = e.hostNames()
	inst := r.Instance
	label := fmt.Sprintf("instance %q (%s)", r.ID, shortID(r.ID, false))
	if inst != nil && inst.Name != "" {
		label = fmt.Sprintf("instance %q (%s)", inst.Name, shortID(r.ID, false))
	}
	fmt.Fprintf(m.w, "==> %s: Requested %s of %s\n", stamp(0), what, label)
	fmt.Fprintf(m.w, "    Request ID: %s\n", r.RequestID)
	if r.MigrationID != 0 {
		fmt.Fprintf(m.w, "    Migration ID: %d\n", r.MigrationID)
	}
	readAction := func(act *api.InstanceAction) (*api.InstanceAction, error) {
		a, _, err := e.client.Instances().ActionInfo(r.ID, r.RequestID, e.queryOptions())
		if api.IsNotFound(err) {
			return act, nil // not recorded (yet): keep what we had
		}
		return a, err
	}
	q := e.queryOptions()
	q.WaitIndex, q.WaitTime = index, buildWaitTime
	gone := false
	var act *api.InstanceAction
	var err error
	if inst == nil { // an agent that did not answer the instance
		if inst, _, err = e.client.Instances().Info(r.ID, e.queryOptions()); err != nil {
			return e.fail("Error following the %s of instance %q: %v", what, r.ID, err)
		}
	}
	if act, err = readAction(nil); err != nil {
		return e.fail("Error reading action %s of instance %q: %v", r.RequestID, r.ID, err)
	}
	m.observe(inst, act)
	for inTask(inst, r.RequestID) {
		now, qm, err := e.client.Instances().Info(r.ID, q)
		if api.IsNotFound(err) {
			gone = true
			break
		}
		if err != nil {
			return e.fail("Error following the %s of instance %q: %v", what, r.ID, err)
		}
		if qm.LastIndex <= q.WaitIndex {
			time.Sleep(buildPollPause)
		}
		q.WaitIndex, inst = qm.LastIndex, now
		if act, err = readAction(act); err != nil {
			return e.fail("Error reading action %s of instance %q: %v", r.RequestID, r.ID, err)
		}
		m.observe(inst, act)
	}
	if gone {
		// The action outlives the instance: show how it ended.
		if act, err = readAction(act); err == nil {
			m.observe(nil, act)
		}
	}
	r.Instance, r.InstanceAction, r.Result = inst, act, api.EventSuccess
	failed := act != nil && act.Failed()
	if failed || gone {
		r.Result = api.EventError
	}
	if gone {
		r.Instance = nil
		fmt.Fprintf(m.w, "==> %s: The %s of %s ended: the instance was deleted\n", stamp(0), what, label)
	} else {
		fmt.Fprintf(m.w, "==> %s: The %s of %s %s: the instance is %s\n", stamp(0), what, label,
			map[bool]string{true: "failed", false: "finished"}[failed], inst.Status)
		if inst.Status == "VERIFY_RESIZE" && !failed {
			fmt.Fprintf(m.w, "    Confirm with \"cloudctl instance confirm-resize %s\" or revert with \"cloudctl instance revert-resize %s\"\n",
				shortID(r.ID, false), shortID(r.ID, false))
		}
	}
	if e.json {
		if rc := e.render(r, nil); rc != 0 {
			return rc
		}
	}
	switch {
	case gone:
		return e.fail("Error: %s was deleted during its %s", label, what)
	case failed:
		return e.fail("Error: the %s of %s failed: %s", what, label, actionError(act))
	}
	return 0
}

// actionError is what the failed events of an action say.
func actionError(a *api.InstanceAction) string {
	var msgs []string
	for _, ev := range a.Events {
		if ev.Result == api.EventError {
			msg := ev.Event
			if ev.Details != "" {
				msg += ": " + ev.Details
			}
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) == 0 {
		return "the action ended in error"
	}
	return strings.Join(msgs, "; ")
}

// actionResult is an action's outcome for tables: Error, Running or
// Success.
func actionResult(a *api.InstanceAction) string {
	switch {
	case a.Failed():
		return api.EventError
	case a.Running():
		return "Running"
	}
	return api.EventSuccess
}
