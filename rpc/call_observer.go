package rpc

import (
	"net/rpc"
	"time"
)

// A server's calls are timed from the moment a request's header is read
// to the moment its answer is handed to the codec, so the figure covers
// decoding, the authorizer and the endpoint, as a caller waits for them.
// The observer is the caller's (metrics); this package only measures.

// CallObserver sees every call a Server answered, over the network or
// in-process: its "Service.Method" (UnknownMethod for a name no endpoint
// has, so a client cannot invent label values), how long it took, and
// whether it answered an error.
type CallObserver func(method string, took time.Duration, failed bool)

// UnknownMethod is the method a CallObserver is told of for a call no
// endpoint was registered for.
const UnknownMethod = "unknown"

// SetCallObserver installs fn; nil removes it.
func (s *Server) SetCallObserver(fn CallObserver) {
	if fn == nil {
		s.callObserver.Store(nil)
		return
	}
	s.callObserver.Store(&fn)
}

// callStart is a call read and not answered yet.
type callStart struct {
	method string
	at     time.Time
}

// started remembers when the call of the header just read began.
func (c *authCodec) started(req *rpc.Request) {
	if c.srv.callObserver.Load() == nil {
		return
	}
	c.mu.Lock()
	if c.starts == nil {
		c.starts = map[uint64]callStart{}
	}
	c.starts[req.Seq] = callStart{method: req.ServiceMethod, at: time.Now()}
	c.mu.Unlock()
}

// unknown marks the call just read as one no endpoint takes: net/rpc
// discards its body (reads it into nil).
func (c *authCodec) unknown() {
	c.mu.Lock()
	if st, ok := c.starts[c.seq]; ok {
		st.method = UnknownMethod
		c.starts[c.seq] = st
	}
	c.mu.Unlock()
}

// finished tells the observer about the call resp answers.
func (c *authCodec) finished(resp *rpc.Response) {
	c.mu.Lock()
	st, ok := c.starts[resp.Seq]
	delete(c.starts, resp.Seq)
	c.mu.Unlock()
	fn := c.srv.callObserver.Load()
	if !ok || fn == nil {
		return
	}
	(*fn)(st.method, time.Since(st.at), resp.Error != "")
}
