// Package server is a Stratus server: a Raft voter that owns the
// replicated state. It sets up Raft (bbolt log store, file snapshots, the
// shared RPC listener as transport), bootstraps through gossip
// (bootstrap_expect), carries out leadership duties (peer reconciliation
// now; the eval broker, plan applier and the conductor's periodic pass,
// conductor.go, whose tasks are fsm/conductor*.go),
// and serves the RPC endpoints, forwarding writes to the leader.
//
// Every endpoint has one shape, as in Nomad: forward → validate → apply
// (a Raft entry) or a blocking read of the state store.
//
// It must not call a virt driver or serve HTTP; the agent does those.
package server
