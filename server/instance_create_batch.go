package server

import "github.com/stratus-cloud/stratus/structs"

// createBatcher coalesces the creates that reach the leader at the same
// time into one Raft entry (InstanceCreateBatchType); an idle server
// commits a lone create at once, in an ordinary InstanceCreate entry.
// Each create keeps its own evaluation and its own outcome (one refused
// by its quota does not stop the others).
type createBatcher = applyBatcher[*structs.InstanceCreateEntry, createBatch]

// createBatch is the batchKind of creates.
type createBatch struct{}

func (createBatch) single() structs.MessageType { return structs.InstanceCreateType }

func (createBatch) batch(entries []*structs.InstanceCreateEntry) (structs.MessageType, any) {
	return structs.InstanceCreateBatchType, &structs.InstanceCreateBatchEntry{Entries: entries}
}

// allocUpdateBatcher coalesces agents' reports (Alloc.UpdateFromClient)
// that reach the leader at the same time into one Raft entry
// (AllocClientUpdateBatchType), as createBatcher does for creates.
type allocUpdateBatcher = applyBatcher[*structs.AllocClientUpdateEntry, allocUpdateBatch]

// allocUpdateBatch is the batchKind of agents' reports.
type allocUpdateBatch struct{}

func (allocUpdateBatch) single() structs.MessageType { return structs.AllocClientUpdateType }

func (allocUpdateBatch) batch(entries []*structs.AllocClientUpdateEntry) (structs.MessageType, any) {
	return structs.AllocClientUpdateBatchType, &structs.AllocClientUpdateBatchEntry{Entries: entries}
}
