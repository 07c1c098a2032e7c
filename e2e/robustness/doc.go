// Package robustness is the fault-injection suite: it starts a real
// cluster of `cloudctl agent` processes (three servers, client agents
// with the fake driver), runs a workload of concurrent boots, power
// actions and deletes through the native API while it kills, restarts,
// pauses, partitions and fills the disk of those processes, records
// every operation and checks the history for linearizability with
// porcupine, then checks the cluster's invariants.
//
// It runs only when STRATUS_ROBUSTNESS=1 (make test-robustness);
// STRATUS_ROBUSTNESS_DURATION bounds the workload (default 60s). It must
// not leave a process behind, whatever the faults.
package robustness
