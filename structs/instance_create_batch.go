package structs

// InstanceCreateBatchEntry is several boot requests committed in one Raft
// entry (InstanceCreateBatchType): the leader coalesces concurrent
// creates so they share a log append, a replication round trip and an
// fsync. Each entry is applied on its own, exactly as an
// InstanceCreateType entry with the same body would be: one failing
// (a quota exceeded, say) does not stop the others.
type InstanceCreateBatchEntry struct {
	Entries []*InstanceCreateEntry
}
