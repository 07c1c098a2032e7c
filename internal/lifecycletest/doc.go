// Package lifecycletest holds the instance lifecycle's integration
// tests: real servers (real Raft over loopback TCP), real hypervisor
// agents (client/) and fake drivers with injected latencies and
// faults, driven through the servers' RPC endpoints. It has no
// non-test code besides this comment and must not be imported.
package lifecycletest
