package command

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/api"
)

var flavorCreateCommand = (&spec{
	synopsis: "Create a flavor",
	args:     "[options] NAME",
	help: `Create a flavor named NAME: a hardware template (vCPUs, memory, disks)
for instances. Extra specs read by the scheduler are set with -property,
which may be repeated.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		f := &api.Flavor{ExtraSpecs: map[string]string{}}
		fs.StringVar(&f.ID, "id", "", "The flavor ID. Defaults to a random UUID.")
		fs.IntVar(&f.VCPUs, "vcpus", 1, "The number of virtual CPUs.")
		fs.IntVar(&f.MemoryMB, "ram", 256, "The memory size in MB.")
		fs.IntVar(&f.RootGB, "disk", 0, "The root disk size in GB.")
		fs.IntVar(&f.EphemeralGB, "ephemeral", 0, "The ephemeral disk size in GB.")
		fs.IntVar(&f.SwapMB, "swap", 0, "The swap size in MB.")
		fs.Float64Var(&f.RxTxFactor, "rxtx-factor", 1.0, "The RX/TX factor.")
		private := fs.Bool("private", false, "Make the flavor private (not public).")
		fs.StringVar(&f.Description, "description", "", "A description of the flavor.")
		fs.Var(properties(f.ExtraSpecs), "property", "An extra spec, as `KEY=VALUE`. May be repeated.")
		return func(e *env, args []string) int {
			f.Name, f.IsPublic = args[0], !*private
			if f.ID == "" {
				f.ID = newUUID()
			}
			out, _, err := e.client.Flavors().Create(f)
			if err != nil {
				return e.fail("Error creating flavor: %v", err)
			}
			return e.render(out, func(w io.Writer) {
				fmt.Fprintf(w, "Flavor %q created with ID %q\n", out.Name, out.ID)
			})
		}
	},
}).factory()

var flavorListCommand = (&spec{
	synopsis: "List flavors",
	args:     "[options]",
	help:     "List the flavors.",
	nargs:    exactly(0),
	list:     true,
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			flavors, _, err := e.client.Flavors().List(e.queryOptions())
			if err != nil {
				return e.fail("Error listing flavors: %v", err)
			}
			if flavors == nil {
				flavors = []*api.Flavor{}
			}
			return e.render(flavors, func(w io.Writer) {
				if len(flavors) == 0 {
					fmt.Fprintln(w, "No flavors found")
					return
				}
				rows := make([][]string, 0, len(flavors))
				for _, f := range flavors {
					rows = append(rows, []string{f.ID, f.Name, itoa(f.VCPUs), itoa(f.MemoryMB),
						itoa(f.RootGB), itoa(f.EphemeralGB), itoa(f.SwapMB), btoa(f.IsPublic)})
				}
				printTable(w, []string{"ID", "Name", "VCPUs", "RAM", "Disk", "Ephemeral", "Swap", "Public"}, rows)
			})
		}
	},
}).factory()

var flavorShowCommand = (&spec{
	synopsis: "Show a flavor",
	args:     "[options] ID_OR_NAME",
	help:     "Show the details of a flavor, given its ID or its name.",
	nargs:    exactly(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			f, _, err := e.client.Flavors().Info(args[0], e.queryOptions())
			if err != nil {
				return e.fail("Error reading flavor %q: %v", args[0], err)
			}
			return e.render(f, func(w io.Writer) {
				printKV(w, []kv{
					{"ID", f.ID}, {"Name", f.Name}, {"VCPUs", itoa(f.VCPUs)},
					{"RAM (MB)", itoa(f.MemoryMB)}, {"Disk (GB)", itoa(f.RootGB)},
					{"Ephemeral (GB)", itoa(f.EphemeralGB)}, {"Swap (MB)", itoa(f.SwapMB)},
					{"RX/TX Factor", ftoa(f.RxTxFactor)}, {"Public", btoa(f.IsPublic)},
					{"Disabled", btoa(f.Disabled)}, {"Description", f.Description},
					{"Create Index", fmt.Sprint(f.CreateIndex)}, {"Modify Index", fmt.Sprint(f.ModifyIndex)},
				})
				fmt.Fprint(w, "\nExtra Specs\n")
				if len(f.ExtraSpecs) == 0 {
					fmt.Fprintln(w, "<none>")
					return
				}
				printKV(w, mapKV(f.ExtraSpecs))
			})
		}
	},
}).factory()

var flavorDeleteCommand = (&spec{
	synopsis: "Delete flavors",
	args:     "[options] ID [ID...]",
	help: `Delete the flavors with the given IDs. Every ID is tried; the command
fails if any deletion failed.`,
	nargs: atLeast(1),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, ids []string) int {
			deleted, code := []string{}, 0
			for _, id := range ids {
				if _, err := e.client.Flavors().Delete(id); err != nil {
					code = e.fail("Error deleting flavor %q: %v", id, err)
					continue
				}
				deleted = append(deleted, id)
			}
			if rc := e.render(map[string][]string{"Deleted": deleted}, func(w io.Writer) {
				for _, id := range deleted {
					fmt.Fprintf(w, "Flavor %q deleted\n", id)
				}
			}); rc != 0 {
				return rc
			}
			return code
		}
	},
}).factory()

// properties is a repeatable KEY=VALUE flag filling a map.
type properties map[string]string

func (p properties) String() string {
	var parts []string
	for _, kv := range mapKV(p) {
		parts = append(parts, kv.key+"="+kv.value)
	}
	return strings.Join(parts, ",")
}

func (p properties) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", s)
	}
	p[k] = v
	return nil
}

// newUUID returns a random (version 4) UUID.
func newUUID() string { return uuid.NewString() }
