package command

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/stratus-cloud/stratus/api"
)

var instanceDiagnosticsCommand = (&spec{
	synopsis: "Show a running instance's hypervisor diagnostics",
	args:     "[options] ID",
	help: `Show what the hypervisor counts for a running instance: its CPUs'
time, memory, and each disk's and network interface's I/O (Nova's server
diagnostics). Admin only. ID may also be the instance's name or a unique
prefix of its ID.`,
	nargs: exactly(1),
	setup: func(fs *flag.FlagSet) runFunc {
		return func(e *env, args []string) int {
			var dg *api.Diagnostics
			_, err := e.withInstance(args[0], func(id string) error {
				var err error
				dg, err = e.client.Instances().Diagnostics(id)
				return err
			})
			if err != nil {
				return e.fail("Error reading the diagnostics of instance %q: %v", args[0], err)
			}
			return e.render(dg, func(w io.Writer) { printDiagnostics(w, dg) })
		}
	},
}).factory()

// printDiagnostics renders diagnostics for people.
func printDiagnostics(w io.Writer, dg *api.Diagnostics) {
	fmt.Fprintf(w, "State       = %s\nDriver      = %s\nHypervisor  = %s (%s)\nUptime      = %ds\n",
		dg.State, dg.Driver, dg.Hypervisor, dg.HypervisorOS, dg.UptimeSeconds)
	fmt.Fprintf(w, "Memory      = %d MiB of %d MiB\nConfigDrive = %t\n\n", dg.Memory.UsedMB, dg.Memory.MaximumMB, dg.ConfigDrive)
	var rows [][]string
	for _, c := range dg.CPUs {
		rows = append(rows, []string{strconv.Itoa(c.ID), fmt.Sprintf("%.3fs", float64(c.TimeNS)/1e9)})
	}
	printTable(w, []string{"CPU", "Time"}, rows)
	rows = nil
	for _, d := range dg.Disks {
		rows = append(rows, []string{d.Device, strconv.FormatInt(d.ReadBytes, 10), strconv.FormatInt(d.ReadRequests, 10),
			strconv.FormatInt(d.WriteBytes, 10), strconv.FormatInt(d.WriteRequests, 10), strconv.FormatInt(d.ErrorsCount, 10)})
	}
	fmt.Fprintln(w)
	printTable(w, []string{"Disk", "Read bytes", "Reads", "Written bytes", "Writes", "Errors"}, rows)
	if len(dg.NICs) == 0 {
		return
	}
	rows = nil
	for _, n := range dg.NICs {
		rows = append(rows, []string{n.Device, n.MAC, strconv.FormatInt(n.RxOctets, 10), strconv.FormatInt(n.RxPackets, 10),
			strconv.FormatInt(n.TxOctets, 10), strconv.FormatInt(n.TxPackets, 10)})
	}
	fmt.Fprintln(w)
	printTable(w, []string{"NIC", "MAC", "Rx bytes", "Rx packets", "Tx bytes", "Tx packets"}, rows)
}
