// Package structs holds Stratus's domain types (hosts, instances,
// allocations, flavors, evaluations, keypairs…), the Raft message types and
// their versioned envelope, the RPC request/response shapes and the error
// kinds shared by every layer.
//
// It is the leaf of the dependency graph: it must not import any other
// package of this module, and it must not do I/O. Wire formats for edges
// (Nova JSON, HTTP) are translated elsewhere; msgpack is the internal format
// for Raft entries, snapshots and RPC.
package structs
