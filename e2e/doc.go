// Package e2e holds end-to-end tests that run real `cloudctl` binaries:
// agents as separate processes talking real Raft, RPC and gossip over
// loopback, driven by the `cloudctl` CLI as a user would.
//
// It has no non-test code beyond this comment and must not be imported.
package e2e
