// Package grouptest holds the instance groups' integration tests: real
// servers (three, with real Raft over loopback TCP), real hypervisor
// agents (client/) with fake drivers, and the leader's group
// reconciler converging HCL instance specs, driven through the servers'
// RPC endpoints. It has no non-test code besides this comment and must
// not be imported.
package grouptest
