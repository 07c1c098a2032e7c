// Package fsm is Stratus's replicated state: the Raft finite-state machine,
// the go-memdb state store it applies entries to, each table's schema,
// transactions and snapshot records (one file per resource), blocking-query
// watches, and snapshot/restore.
//
// It also holds the conductor (conductor*.go): Nova's nova-conductor role,
// multi-step instance operations — resize, migrate, evacuate, shelve,
// snapshot, power actions — run as tasks, state machines stepped by FSM
// entries, so they are crash-safe across leader changes.
//
// Apply must be deterministic: it must never read a clock, draw
// randomness, or touch the network or the disk while applying an entry. Timestamps and IDs arrive inside the entries, chosen by the
// server that proposed them.
package fsm
