package structs

// AllocClientUpdateBatchEntry is several agents' reports committed in one
// Raft entry (AllocClientUpdateBatchType): the leader coalesces the
// Alloc.UpdateFromClient calls that reach it while an earlier one is
// being committed, so they share a log append, a replication round trip,
// an fsync and one state-store transaction. Each entry is applied exactly
// as an AllocClientUpdateType entry with the same body would be: one
// refused (a host reporting on another host's allocation) does not stop
// the others.
type AllocClientUpdateBatchEntry struct {
	Entries []*AllocClientUpdateEntry
}

func init() { messageTypeNames[AllocClientUpdateBatchType] = "AllocClientUpdateBatch" }
