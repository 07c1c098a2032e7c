package structs

import "time"

// QueryOptions are the common options of every read RPC.
type QueryOptions struct {
	// Region is the region the request is meant for.
	Region string
	// MinQueryIndex makes the read block until the state's index for the
	// relevant table passes it (a blocking query).
	MinQueryIndex uint64
	// MaxQueryTime bounds how long a blocking query waits.
	MaxQueryTime time.Duration
	// AllowStale lets any server answer from its local state instead of
	// forwarding to the leader.
	AllowStale bool
	// AuthToken is the caller's credential.
	AuthToken string
	// Forwarded is set once the request has been forwarded, so it is never
	// forwarded twice.
	Forwarded bool
}

// IsRead marks QueryOptions as a read, for forwarding.
func (q *QueryOptions) IsRead() bool { return true }

// AllowStaleRead reports whether a non-leader may answer.
func (q *QueryOptions) AllowStaleRead() bool { return q.AllowStale }

// SetForwarded marks the request as forwarded.
func (q *QueryOptions) SetForwarded() { q.Forwarded = true }

// IsForwarded reports whether the request was already forwarded.
func (q *QueryOptions) IsForwarded() bool { return q.Forwarded }

// RequestRegion returns the target region.
func (q *QueryOptions) RequestRegion() string { return q.Region }

// QueryMeta is returned with every read.
type QueryMeta struct {
	// Index is the state index the answer reflects; pass it back as
	// MinQueryIndex to block until something changes.
	Index uint64
	// LastContact is how long ago this server heard from the leader (zero
	// on the leader).
	LastContact time.Duration
	// KnownLeader reports whether a leader was known when answering.
	KnownLeader bool
}

// WriteRequest holds the common fields of every write RPC.
type WriteRequest struct {
	Region    string
	AuthToken string
	Forwarded bool
}

// IsRead marks WriteRequest as a write.
func (w *WriteRequest) IsRead() bool { return false }

// AllowStaleRead is always false for writes.
func (w *WriteRequest) AllowStaleRead() bool { return false }

// SetForwarded marks the request as forwarded.
func (w *WriteRequest) SetForwarded() { w.Forwarded = true }

// IsForwarded reports whether the request was already forwarded.
func (w *WriteRequest) IsForwarded() bool { return w.Forwarded }

// RequestRegion returns the target region.
func (w *WriteRequest) RequestRegion() string { return w.Region }

// WriteMeta is returned with every write.
type WriteMeta struct {
	// Index is the Raft index at which the write was committed.
	Index uint64
}

// RPCInfo is what the forwarding layer needs from any request.
type RPCInfo interface {
	IsRead() bool
	AllowStaleRead() bool
	SetForwarded()
	IsForwarded() bool
	RequestRegion() string
}

// GenericRequest is a request with no arguments but the common ones.
type GenericRequest struct {
	QueryOptions
}

// GenericResponse answers a write that returns nothing but its index.
type GenericResponse struct {
	WriteMeta
}

// StatusResponse answers Status.Leader and Status.Peers.
type StatusResponse struct {
	Leader string
	Peers  []string
}

// RaftServer is one server of the Raft configuration.
type RaftServer struct {
	ID      string
	Node    string
	Address string
	Leader  bool
	Voter   bool
}

// RaftConfigurationResponse answers Operator.RaftGetConfiguration.
type RaftConfigurationResponse struct {
	Servers []*RaftServer
	Index   uint64
}

// RaftPeerRequest names a Raft peer by id or address.
type RaftPeerRequest struct {
	ID      string
	Address string
	WriteRequest
}

// SnapshotResponse carries a state snapshot.
type SnapshotResponse struct {
	Data []byte
	QueryMeta
}

// SnapshotRestoreRequest carries a snapshot to restore.
type SnapshotRestoreRequest struct {
	Data []byte
	WriteRequest
}
