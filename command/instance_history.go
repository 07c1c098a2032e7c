package command

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/stratus-cloud/stratus/api"
)

var instanceActionsCommand = (&spec{
	synopsis: "List the actions done to an instance",
	args:     "[options] ID [REQUEST_ID]",
	help: `List the actions done to an instance (Nova's instance actions: create,
reboot, resize, migrate, …), newest first, with their events and whether
each succeeded; with REQUEST_ID (or a unique prefix of it), show that one
action. ID may also be the instance's name or a prefix of its ID, if
unique. Actions outlive their instance, so the ID of a deleted instance
works too.`,
	nargs: argRange{1, 2},
	setup: func(fs *flag.FlagSet) runFunc {
		verbose := fs.Bool("verbose", false, "Show full request IDs.")
		return func(e *env, args []string) int {
			id, known, err := e.instanceOrGone(args[0])
			if err != nil {
				return e.fail("Error reading instance %q: %v", args[0], err)
			}
			list, _, err := e.client.Instances().Actions(id, e.queryOptions())
			if err != nil {
				return e.fail("Error listing the actions of instance %q: %v", args[0], err)
			}
			if list == nil {
				list = []*api.InstanceAction{}
			}
			if len(list) == 0 && !known {
				return e.fail("Error: no instance or actions found for %q", args[0])
			}
			names := e.hostNames()
			if len(args) == 2 {
				a, err := findAction(list, args[1])
				if err != nil {
					return e.fail("Error reading action %q of instance %q: %v", args[1], args[0], err)
				}
				return e.render(a, func(w io.Writer) { printAction(w, a, names) })
			}
			return e.render(list, func(w io.Writer) {
				if len(list) == 0 {
					fmt.Fprintln(w, "No actions found")
					return
				}
				rows := make([][]string, 0, len(list))
				var events [][]string
				for _, a := range list {
					rid := shortRequest(a.RequestID, *verbose)
					rows = append(rows, []string{rid, a.Action, formatTime(a.StartTime), formatTime(a.UpdatedAt), actionResult(a)})
					for _, ev := range a.Events {
						events = append(events, eventRow(rid, ev, names))
					}
				}
				printTable(w, []string{"Request ID", "Action", "Started", "Updated", "Result"}, rows)
				if len(events) > 0 {
					fmt.Fprint(w, "\nEvents\n")
					printTable(w, []string{"Request ID", "Event", "Host", "Started", "Finished", "Result", "Details"}, events)
				}
			})
		}
	},
}).factory()

// instanceOrGone resolves ref like withInstance; an instance that does not
// exist (any more) is not an error: ref is returned as its ID with known
// false, for the records that outlive instances.
func (e *env) instanceOrGone(ref string) (id string, known bool, err error) {
	id, err = e.withInstance(ref, func(id string) error {
		_, _, err := e.client.Instances().Info(id, e.queryOptions())
		return err
	})
	if api.IsNotFound(err) {
		return ref, false, nil
	}
	return id, err == nil, err
}

// findAction finds the action whose request ID is ref, or starts with it
// (with or without the "req-" prefix).
func findAction(list []*api.InstanceAction, ref string) (*api.InstanceAction, error) {
	var matches []*api.InstanceAction
	for _, a := range list {
		if a.RequestID == ref {
			return a, nil
		}
		if strings.HasPrefix(a.RequestID, ref) || strings.HasPrefix(a.RequestID, "req-"+ref) {
			matches = append(matches, a)
		}
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("no action %q", ref)
	case 1:
		return matches[0], nil
	}
	ids := make([]string, 0, len(matches))
	for _, a := range matches {
		ids = append(ids, a.RequestID)
	}
	return nil, fmt.Errorf("%q matches %d actions (%s); use a longer prefix", ref, len(matches), strings.Join(ids, ", "))
}

func printAction(w io.Writer, a *api.InstanceAction, hosts map[string]string) {
	printKV(w, []kv{
		{"Request ID", a.RequestID}, {"Instance", a.InstanceID}, {"Action", a.Action}, {"Result", actionResult(a)},
		{"Started", formatTime(a.StartTime)}, {"Updated", formatTime(a.UpdatedAt)},
		{"Project", dash(a.ProjectID)}, {"User", dash(a.UserID)},
	})
	fmt.Fprint(w, "\nEvents\n")
	if len(a.Events) == 0 {
		fmt.Fprintln(w, "<none>")
		return
	}
	rows := make([][]string, 0, len(a.Events))
	for _, ev := range a.Events {
		rows = append(rows, eventRow("", ev, hosts)[1:])
	}
	printTable(w, []string{"Event", "Host", "Started", "Finished", "Result", "Details"}, rows)
}

// eventRow is an event's row in an events table, after the request ID rid.
func eventRow(rid string, ev *api.InstanceActionEvent, hosts map[string]string) []string {
	result := ev.Result
	if result == "" {
		result = "Running"
	}
	return []string{rid, ev.Event, dash(hostName(hosts, ev.HostID)), formatTime(ev.StartTime), formatTime(ev.FinishTime), result, dash(ev.Details)}
}

// shortRequest is "req-" and the first 8 characters of the rest of a
// request ID, unless verbose.
func shortRequest(rid string, verbose bool) string {
	if rest, ok := strings.CutPrefix(rid, "req-"); ok && !verbose {
		return "req-" + shortID(rest, false)
	}
	return rid
}

var instanceMigrationsCommand = (&spec{
	synopsis: "List migrations",
	args:     "[options] [ID]",
	help: `List the migrations (resizes, cold and live migrations, evacuations) of
every instance, or of the instance ID (its name, or a unique prefix of
its ID), oldest first, with their status and hosts.`,
	nargs: argRange{0, 1},
	setup: func(fs *flag.FlagSet) runFunc {
		verbose := fs.Bool("verbose", false, "Show full instance IDs.")
		return func(e *env, args []string) int {
			id := ""
			if len(args) == 1 {
				var err error
				if id, _, err = e.instanceOrGone(args[0]); err != nil {
					return e.fail("Error reading instance %q: %v", args[0], err)
				}
			}
			list, _, err := e.client.Migrations().List(id, e.queryOptions())
			if err != nil {
				return e.fail("Error listing migrations: %v", err)
			}
			if list == nil {
				list = []*api.Migration{}
			}
			return e.render(list, func(w io.Writer) {
				if len(list) == 0 {
					fmt.Fprintln(w, "No migrations found")
					return
				}
				rows := make([][]string, 0, len(list))
				for _, m := range list {
					flavor := dash(m.OldFlavorID)
					if m.NewFlavorID != "" && m.NewFlavorID != m.OldFlavorID {
						flavor += " -> " + m.NewFlavorID
					}
					rows = append(rows, []string{i64toa(int64(m.ID)), shortID(m.InstanceID, *verbose), m.Type, m.Status,
						dash(m.SourceHost), dash(m.DestHost), flavor, formatTime(m.CreatedAt), formatTime(m.UpdatedAt)})
				}
				printTable(w, []string{"ID", "Instance", "Type", "Status", "Source", "Destination", "Flavor", "Created", "Updated"}, rows)
			})
		}
	},
}).factory()
