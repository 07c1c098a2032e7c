// Package client is the hypervisor agent: it fingerprints the host
// through its virt.Driver, registers it with the servers and keeps it
// alive with heartbeats, pulls the allocations meant for it with a
// blocking query, and runs one runner per allocation that moves the
// instance from its actual state to the desired one and reports back.
//
// Besides desired states (running, stopped, deleted, and held: a move's
// destination, left alone until it becomes running or stopped), the
// runner carries out one-off actions (reboot, pause, suspend, rescue,
// rebuild, live migration and their reverses), each once per ActionSeq,
// and reports it done with its error, if any. A driver that reports
// power-state changes as they happen (virt.EventSource) wakes the runner
// of the instance at once; otherwise the power-sync poll notices them.
//
// Local restart state (the host id and, per allocation, the instance id,
// whether it was spawned, the last action carried out and its error, a
// rebuild or live migration in progress, whether the instance is rescued
// or migrated away, and the last state reported) lives in a bbolt file,
// state.db, under the data directory, so an agent that restarts
// re-attaches to its running instances instead of spawning them again,
// finishes what it was doing, and never repeats an action.
//
// A second blocking query (Volume.HostAttached) watches the volumes
// attached to the host's instances: a guest disk smaller than its
// extended volume is grown (virt.VolumeResizer), and the extend of a
// file that an instance of the host holds on its own storage host is
// reported done or failed (volume_extend.go).
//
// The agent must not decide placement and must not touch server state
// except through RPC: every change it makes to the cluster is a report
// (Alloc.UpdateFromClient, Volume.Report) or a registration
// (Host.Register).
package client
