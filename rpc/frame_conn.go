package rpc

import (
	"encoding/binary"
	"net"
	"sync"
)

const (
	// yamuxHeaderSize, yamuxVersion and yamuxTypeData are yamux's frame
	// header size, protocol version and data frame type (its spec.md).
	yamuxHeaderSize = 12
	yamuxVersion    = 0
	yamuxTypeData   = 0
	// maxJoinedBody bounds the body frameConn copies behind its header;
	// a longer one costs a second write, as without frameConn.
	maxJoinedBody = 64 << 10
)

// frameConn is the connection under a yamux session. yamux writes every
// data frame as two writes, its 12-byte header then its body, which on
// TCP is two system calls and, when the reader is quick, two wake-ups of
// the peer; an RPC call and its reply are one data frame each. frameConn
// holds a data frame's header back and writes it with the body that
// follows in one write. Any other frame (window updates, pings, go-aways,
// data frames without a body) is written at once, so nothing is ever held
// back waiting for a write that does not come. yamux writes from one
// goroutine only (its send loop), so frameConn needs no lock.
type frameConn struct {
	net.Conn
	hdr     [yamuxHeaderSize]byte
	pending bool
}

// frameBufs are the buffers header and body are joined in, shared by
// every session so that an idle one holds none.
var frameBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// newFrameConn wraps the connection a yamux session is about to run on.
func newFrameConn(conn net.Conn) *frameConn {
	return &frameConn{Conn: conn}
}

// Write writes p, holding a data frame's header until its body comes.
func (c *frameConn) Write(p []byte) (int, error) {
	if !c.pending {
		if isDataHeaderWithBody(p) {
			copy(c.hdr[:], p)
			c.pending = true
			return len(p), nil
		}
		return c.Conn.Write(p)
	}
	c.pending = false
	if len(p) > maxJoinedBody {
		if _, err := c.Conn.Write(c.hdr[:]); err != nil {
			return 0, err
		}
		return c.Conn.Write(p)
	}
	bp := frameBufs.Get().(*[]byte)
	buf := append(append((*bp)[:0], c.hdr[:]...), p...)
	n, err := c.Conn.Write(buf)
	*bp = buf[:0]
	frameBufs.Put(bp)
	return max(n-yamuxHeaderSize, 0), err
}

// isDataHeaderWithBody reports whether p is exactly one yamux header of
// a data frame whose body follows (length > 0).
func isDataHeaderWithBody(p []byte) bool {
	return len(p) == yamuxHeaderSize && p[0] == yamuxVersion && p[1] == yamuxTypeData &&
		binary.BigEndian.Uint32(p[8:12]) > 0
}
