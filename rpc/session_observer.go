package rpc

import "sync/atomic"

// SessionObserver learns which yamux session carried each call and when
// each session ends. A server uses it to tie what callers say about
// themselves to the connection they said it on: when a client process
// dies, the kernel closes its connections at once, long before any
// timeout would notice. Both methods run on the connection's goroutines
// and must not block.
type SessionObserver interface {
	// ObserveCall is called with the id of the session and the method
	// and decoded arguments of each call that passed the Authorizer.
	ObserveCall(session uint64, method string, args any)
	// SessionClosed is called once when a session ends, whoever closed
	// it (the peer, an error or Shutdown).
	SessionClosed(session uint64)
}

// SetSessionObserver installs o; nil removes it. In-process calls
// (Call) have no session and are not observed.
func (s *Server) SetSessionObserver(o SessionObserver) {
	if o == nil {
		s.observer.Store(nil)
		return
	}
	s.observer.Store(&o)
}

// sessionObserver returns the installed observer, or nil.
func (s *Server) sessionObserver() SessionObserver {
	if o := s.observer.Load(); o != nil {
		return *o
	}
	return nil
}

// sessionIDs numbers sessions across every Server in the process, so an
// id never repeats.
var sessionIDs atomic.Uint64
