// Package robustness is the fault-injection suite: it starts a real
// cluster of race-built `cloudctl agent` processes (three servers, client
// agents with the fake driver) and runs two workloads through every
// agent while it kills, restarts, pauses, partitions (fully, one way,
// partially), drops and delays the packets of, steps the wall clock of,
// truncates the Raft log of and fills the disk of those processes, in an
// order drawn from a seed that is printed (STRATUS_ROBUSTNESS_SEED
// replays it):
//
//   - boots, power actions and deletes, each instance its own worker's;
//   - writes of shared keys (instance metadata, flavor extra specs,
//     quota limits) by several workers at once, and reads of them from
//     every agent, leader and followers, with and without ?stale.
//
// Both histories are checked with porcupine: a default read must be
// linearizable; a stale read is checked apart (it returns a value some
// write had begun to write, and one server never goes back in time). An
// inconclusive check fails the run, as does a data race in any agent.
// TestCheckerCatchesBrokenReads shows the checker rejects the stale
// reads of a server built with -tags stratus_brokenreads.
//
// Network faults need root, nftables and a cgroup v2 hierarchy: each
// agent runs in a cgroup of its own, because the connections it dials
// all come from 127.0.0.1 and only the cgroup tells them apart.
// Without these the faults are left out with a log line, and under
// CI=true the run fails instead. Delays come from relays in the test
// process that every agent's connections to a server's RPC port are
// sent through (nftables DNAT by cgroup), as the kernel here has no
// netem; clock steps from the suite's own build of the agent, whose
// package time is patched with go build -overlay to add a step, read
// from a file, to the wall reading of time.Now.
//
// It runs only when STRATUS_ROBUSTNESS=1 (make test-robustness);
// STRATUS_ROBUSTNESS_DURATION bounds the workload (default 60s). It must
// not leave a process, a cgroup or an nftables table behind, whatever
// the faults.
package robustness
