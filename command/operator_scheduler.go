package command

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/stratus-cloud/stratus/api"
)

func init() {
	groups["operator scheduler"] = "Inspect and change the scheduler's configuration"
	register("operator scheduler get-config", schedulerGetConfigCommand)
	register("operator scheduler set-config", schedulerSetConfigCommand)
}

var schedulerGetConfigCommand = (&spec{
	synopsis: "Show the scheduler configuration",
	args:     "[options]",
	help: `Show the scheduler configuration in force. Until an operator sets one
with "operator scheduler set-config" it is the answering server's, from
its configuration file (Source = config); afterwards it is the
replicated one every server uses (Source = operator).`,
	nargs: exactly(0),
	setup: func(*flag.FlagSet) runFunc {
		return func(e *env, _ []string) int {
			out, _, err := e.client.Operator().SchedulerGetConfiguration(e.queryOptions())
			if err != nil {
				return e.fail("Error reading the scheduler configuration: %v", err)
			}
			return e.render(out, func(w io.Writer) { printSchedulerConfig(w, out) })
		}
	},
}).factory()

func printSchedulerConfig(w io.Writer, out *api.SchedulerConfigurationResponse) {
	c := out.SchedulerConfig
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	printKV(w, []kv{
		{"Source", out.Source},
		{"Algorithm", schedulerAlgorithm(c)},
		{"RAM Weight Multiplier", f(c.RAMWeightMultiplier)},
		{"CPU Weight Multiplier", f(c.CPUWeightMultiplier)},
		{"Disk Weight Multiplier", f(c.DiskWeightMultiplier)},
		{"Build Failure Weight Multiplier", f(c.BuildFailureWeightMultiplier)},
		{"Soft Affinity Weight Multiplier", f(c.SoftAffinityWeightMultiplier)},
		{"Soft Anti-Affinity Weight Multiplier", f(c.SoftAntiAffinityWeightMultiplier)},
		{"Host Subset Size", strconv.Itoa(c.HostSubsetSize)},
		{"Modify Index", strconv.FormatUint(c.ModifyIndex, 10)},
	})
}

// schedulerAlgorithm names the tendency of the resource multipliers.
func schedulerAlgorithm(c *api.SchedulerConfiguration) string {
	switch m := []float64{c.RAMWeightMultiplier, c.CPUWeightMultiplier, c.DiskWeightMultiplier}; {
	case m[0] > 0 && m[1] > 0 && m[2] > 0:
		return "spread"
	case m[0] < 0 && m[1] < 0 && m[2] < 0:
		return "binpack"
	}
	return "custom"
}

var schedulerSetConfigCommand = (&spec{
	synopsis: "Change the scheduler configuration",
	args:     "[options]",
	help: `Change the scheduler configuration of every server at once, without a
restart. Options left out keep their current value. -algorithm is a
shorthand for the signs of the RAM, CPU and disk weight multipliers:
spread (positive: prefer the emptiest hosts, Nova's default) or binpack
(negative: fill hosts up first).

With -check-index the change is made only if the configuration is still
at that modify index (0: never set by an operator), so two operators
cannot overwrite each other unknowingly; exit code 1 if it moved.`,
	nargs: exactly(0),
	setup: func(fs *flag.FlagSet) runFunc {
		algorithm := fs.String("algorithm", "", "spread or binpack.")
		floats := map[string]*float64{}
		for _, name := range []string{"ram", "cpu", "disk", "build-failure", "soft-affinity", "soft-anti-affinity"} {
			floats[name] = fs.Float64(name+"-weight-multiplier", 0, "The "+name+" weigher's multiplier.")
		}
		subset := fs.Int("host-subset-size", 0, "Place each instance at random among this many best hosts (1 or more).")
		checkIndex := fs.Uint64("check-index", 0, "Only change the configuration if its modify index is this one.")
		return func(e *env, _ []string) int {
			set := map[string]bool{}
			fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
			if len(set) == 0 || (len(set) == 1 && set["check-index"]) {
				return e.usage("nothing to change: give at least one setting")
			}
			cur, _, err := e.client.Operator().SchedulerGetConfiguration(nil)
			if err != nil {
				return e.fail("Error reading the scheduler configuration: %v", err)
			}
			c := *cur.SchedulerConfig
			fields := map[string]*float64{
				"ram": &c.RAMWeightMultiplier, "cpu": &c.CPUWeightMultiplier, "disk": &c.DiskWeightMultiplier,
				"build-failure": &c.BuildFailureWeightMultiplier, "soft-affinity": &c.SoftAffinityWeightMultiplier,
				"soft-anti-affinity": &c.SoftAntiAffinityWeightMultiplier,
			}
			if set["algorithm"] {
				if err := applyAlgorithm(&c, *algorithm); err != nil {
					return e.usage("%v", err)
				}
			}
			for name, v := range floats {
				if set[name+"-weight-multiplier"] {
					*fields[name] = *v
				}
			}
			if set["host-subset-size"] {
				c.HostSubsetSize = *subset
			}
			op := e.client.Operator()
			var res *api.SchedulerSetConfigurationResponse
			if set["check-index"] {
				res, err = op.SchedulerCASConfiguration(&c, *checkIndex)
			} else {
				res, err = op.SchedulerSetConfiguration(&c)
			}
			if err != nil {
				return e.fail("Error setting the scheduler configuration: %v", err)
			}
			if !res.Updated {
				return e.fail("Scheduler configuration not updated: its modify index is no longer %d; read it again", *checkIndex)
			}
			return e.render(res, func(w io.Writer) {
				fmt.Fprintf(w, "Scheduler configuration updated at index %d\n", res.Index)
			})
		}
	},
}).factory()

// applyAlgorithm sets the signs of the resource multipliers, keeping
// their magnitudes (1 where they were 0).
func applyAlgorithm(c *api.SchedulerConfiguration, algorithm string) error {
	var sign float64
	switch algorithm {
	case "spread":
		sign = 1
	case "binpack":
		sign = -1
	default:
		return fmt.Errorf("-algorithm must be spread or binpack, not %q", algorithm)
	}
	for _, m := range []*float64{&c.RAMWeightMultiplier, &c.CPUWeightMultiplier, &c.DiskWeightMultiplier} {
		if *m == 0 {
			*m = 1
		}
		if (*m > 0) != (sign > 0) {
			*m = -*m
		}
	}
	return nil
}
