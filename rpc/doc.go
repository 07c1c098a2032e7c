// Package rpc is Stratus's internal transport: the msgpack-RPC codec, the
// client connection pool, yamux session handling, the single TCP listener
// that demultiplexes RPC and Raft traffic by the first byte of each
// connection, and the TLS configuration for all of it.
//
// Every TCP connection to a server starts with one type byte:
//
//	TypeMultiplex  a yamux session follows; each stream carries msgpack-RPC
//	TypeRaft       the raw Raft transport stream follows (see RaftLayer)
//	TypeTLS        a TLS handshake follows, then another type byte inside it
//	TypeStream     a header names a stream handler, which then owns the
//	               connection (bulk transfers such as image data)
//
// Callers register endpoints on a Server (net/rpc style), call remote servers
// through a ConnPool, or call the local endpoints in-process with
// Server.Call, which skips encoding entirely. Stream handlers
// (RegisterStream, ConnPool.Stream) get a connection of their own for
// bulk data, with frames (WriteFrame, ReadFrame) and chunked bodies
// (ChunkWriter, ChunkReader) to build their protocol from.
//
// The package owns bytes on the wire and connection lifecycles only. It must
// not know what any endpoint means: no endpoint names, no request or reply
// types other than net/rpc's envelope, no forwarding, leader or region logic,
// and no retries of calls (a retry might repeat a write; whether that is safe
// is the caller's decision, helped by IsConnError). Application errors cross
// the wire as text and come back as rpc.ServerError values whose text is the
// remote error's text unchanged, so structs.KindOf still works on them.
package rpc
