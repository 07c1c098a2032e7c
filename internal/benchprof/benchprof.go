// Package benchprof profiles the CPU of a benchmark's timed part alone:
// the rounds it measures, not the cluster start and registration that
// -cpuprofile would include. It owns only the STRATUS_BENCH_CPUPROFILE
// convention and must not be imported outside tests and benchmarks.
package benchprof

import (
	"os"
	"runtime/pprof"
	"testing"
)

// Env names the file a profile is written to; unset, nothing is profiled.
const Env = "STRATUS_BENCH_CPUPROFILE"

// Start profiles the CPU into the file Env names, followed by suffix
// (for example ".nova-0", so that each round gets its own file), and
// returns the func that stops it. Not together with -cpuprofile: Go
// runs one CPU profile at a time.
func Start(tb testing.TB, suffix string) func() {
	tb.Helper()
	path := os.Getenv(Env)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path + suffix)
	if err != nil {
		tb.Fatalf("%s: %v", Env, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		tb.Fatalf("%s: %v", Env, err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}
}
