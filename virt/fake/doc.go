// Package fake is an in-memory virt.Driver for tests and simulations.
//
// It owns nothing but a map of instances, their power states and rescue
// status: no processes, files, sockets, goroutines or timers (unless a
// latency is configured, and then only for the duration of the call;
// Open adds one state file, Config.SharedDir the instances' disks as
// files there, Config.SnapshotDir the snapshots' data). It is deterministic and cheap, so one
// process can simulate thousands of hosts, and it follows the same state
// rules as the conformance suite in virt/virttest. Tests steer it with failure injection (FailNext,
// FailAlways), simulate drift with SetPowerState (reported on Events) and assert on Calls,
// Spec, Rescued and MigratedTo. Its LiveMigrate cannot reach another
// host: the instance only leaves this one, and the destination's agent
// spawns its own copy.
//
// It must not touch the real host, and it must not know about Raft, RPC
// or the state store: like every driver it sees one host and the
// instances on it, nothing more.
package fake
