// Package client is the hypervisor agent: it fingerprints the host
// through its virt.Driver, registers it with the servers and keeps it
// alive with heartbeats, pulls the allocations meant for it with a
// blocking query, and runs one runner per allocation that moves the
// instance from its actual state to the desired one and reports back.
//
// Local restart state (the host id and, per allocation, the instance id,
// whether it was spawned, the last reboot carried out and the last state
// reported) lives in a bbolt file, state.db, under the data directory, so
// an agent that restarts re-attaches to its running instances instead of
// spawning them again, and never repeats a reboot.
//
// The agent must not decide placement and must not touch server state
// except through RPC: every change it makes to the cluster is a report
// (Alloc.UpdateFromClient) or a registration (Host.Register).
package client
