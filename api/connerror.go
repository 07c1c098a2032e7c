package api

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"
)

// ConnError is a request that never got an answer: the agent could not
// be reached at Address. Its text says which address was tried and how
// to point the client elsewhere.
type ConnError struct {
	// Address is the agent's base URL the client used.
	Address string
	// Err is the transport's error.
	Err error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("cannot reach a Stratus agent at %s (%s); is one running there? "+
		"Point cloudctl at another with -address or %s=http://HOST:8774", e.Address, connReason(e.Err), EnvAddress)
}

// Unwrap returns the transport's error.
func (e *ConnError) Unwrap() error { return e.Err }

// IsConnError reports whether err is, or wraps, a *ConnError.
func IsConnError(err error) bool {
	var ce *ConnError
	return errors.As(err, &ce)
}

// connError wraps the errors of an unreachable agent; others are
// returned as they are.
func connError(base string, err error) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var uErr *url.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &dnsErr), errors.As(err, &opErr) && opErr.Op == "dial",
		errors.As(err, &uErr) && uErr.Timeout():
		return &ConnError{Address: base, Err: err}
	}
	return err
}

// connReason is the short cause of a connection failure.
func connReason(err error) string {
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "unknown host " + dnsErr.Name
	}
	var uErr *url.Error
	if errors.As(err, &uErr) {
		if uErr.Timeout() {
			return "timed out"
		}
		return uErr.Err.Error()
	}
	return err.Error()
}
