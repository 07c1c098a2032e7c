package rpc

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/rpc"
	"syscall"

	"github.com/hashicorp/yamux"
)

// ErrPoolShutdown is returned by ConnPool.RPC once the pool is shut down. It
// is not a connection error: another server would fail the same way.
var ErrPoolShutdown = errors.New("rpc: connection pool is shut down")

// ErrRaftLayerClosed is returned by RaftLayer.Accept once the layer (or its
// server) is closed.
var ErrRaftLayerClosed = errors.New("rpc: raft layer is closed")

// ConnError is a transport failure talking to Addr: the connection could not
// be made, or broke while a call was in flight. For a failure after the
// request was written the call may or may not have run on the server.
type ConnError struct {
	// Addr is the remote address.
	Addr string
	// Op is what was being done: "dial", "open stream", "write request"...
	Op string
	// Err is the underlying error.
	Err error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("rpc: %s %s: %v", e.Op, e.Addr, e.Err)
}

// Unwrap returns the underlying error.
func (e *ConnError) Unwrap() error { return e.Err }

// IsConnError reports whether err is a transport failure (dial refused, EOF,
// closed session, TLS failure, any net.Error) rather than an error returned
// by the remote endpoint. Callers use it to decide whether trying another
// server makes sense: an endpoint's error would be the same everywhere, a
// broken connection is specific to one server.
//
// An rpc.ServerError anywhere in err's chain makes the answer false, even if
// its text mentions a transport problem: that problem happened on the remote
// side, and the remote already reported its outcome.
func IsConnError(err error) bool {
	if err == nil {
		return false
	}
	var serverErr rpc.ServerError
	if errors.As(err, &serverErr) {
		return false
	}
	return anyInChain(err, isTransportErr)
}

// isTransportErr classifies one error value, without looking at its chain.
func isTransportErr(err error) bool {
	var connErr *ConnError
	if errors.As(err, &connErr) {
		return true
	}
	switch err {
	case io.EOF, io.ErrUnexpectedEOF, io.ErrClosedPipe, net.ErrClosed, rpc.ErrShutdown,
		yamux.ErrSessionShutdown, yamux.ErrStreamClosed, yamux.ErrConnectionReset,
		yamux.ErrRemoteGoAway, yamux.ErrConnectionWriteTimeout, yamux.ErrKeepAliveTimeout,
		yamux.ErrStreamsExhausted, yamux.ErrInvalidVersion, yamux.ErrInvalidMsgType,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE:
		return true
	}
	// net.OpError, DNS errors, timeouts (yamux.ErrTimeout included), TLS
	// alerts from the peer: all implement net.Error.
	var netErr net.Error
	return errors.As(err, &netErr)
}

// anyInChain walks err's chain, following Unwrap (single and multiple) and
// also Cause, because the msgpack codec wraps reader and writer errors in a
// type that only offers Cause.
func anyInChain(err error, pred func(error) bool) bool {
	const maxDepth = 64 // guards against a cyclic chain
	queue := []error{err}
	for n := 0; len(queue) > 0 && n < maxDepth; n++ {
		e := queue[0]
		queue = queue[1:]
		if e == nil {
			continue
		}
		if pred(e) {
			return true
		}
		switch x := e.(type) {
		case interface{ Unwrap() error }:
			queue = append(queue, x.Unwrap())
		case interface{ Unwrap() []error }:
			queue = append(queue, x.Unwrap()...)
		case interface{ Cause() error }:
			queue = append(queue, x.Cause())
		}
	}
	return false
}
