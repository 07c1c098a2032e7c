package structs

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorKind classifies an error so each edge (HTTP, Nova, CLI) can map it
// to its own format. Kinds survive an RPC hop because they are carried as a
// prefix of the error text, which is all net/rpc transports.
type ErrorKind string

// The error kinds every layer understands.
const (
	KindInvalid      ErrorKind = "invalid"
	KindNotFound     ErrorKind = "not found"
	KindConflict     ErrorKind = "conflict"
	KindNoLeader     ErrorKind = "no leader"
	KindPermission   ErrorKind = "permission denied"
	KindUnavailable  ErrorKind = "unavailable"
	KindInternal     ErrorKind = "internal"
	KindQuotaReached ErrorKind = "quota exceeded"
	// KindTooLarge is data over a size limit (an image over the cap).
	KindTooLarge ErrorKind = "too large"
	// KindUnauthenticated is a missing, malformed, forged, expired or
	// revoked credential (HTTP 401), as opposed to KindPermission, a
	// known caller who may not do this (403).
	KindUnauthenticated ErrorKind = "unauthenticated"
)

var allKinds = []ErrorKind{KindInvalid, KindNotFound, KindConflict, KindNoLeader,
	KindPermission, KindUnavailable, KindQuotaReached, KindTooLarge, KindInternal, KindUnauthenticated}

// Error is an error with a kind. Its text is "<kind>: <message>", or
// "<kind>: <type>: <message>" with a type (see NetErrorf).
type Error struct {
	Kind ErrorKind
	Msg  string
	// Type names the error for edges that show one (Neutron's exception
	// names); it crosses an RPC hop as a second prefix.
	Type string `json:",omitempty"`
}

func (e *Error) Error() string {
	if e.Type != "" {
		return string(e.Kind) + ": " + e.Type + ": " + e.Msg
	}
	return string(e.Kind) + ": " + e.Msg
}

// Errorf builds an *Error of the given kind.
func Errorf(kind ErrorKind, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// ErrNoLeader is returned when no Raft leader is known.
var ErrNoLeader = &Error{Kind: KindNoLeader, Msg: "no cluster leader"}

// KindOf returns the kind of err: from an *Error in its chain, or from the
// "<kind>: " prefix an *Error leaves in text that crossed an RPC hop.
// Anything else is KindInternal.
func KindOf(err error) ErrorKind {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	msg := err.Error()
	for _, k := range allKinds {
		if strings.HasPrefix(msg, string(k)+": ") || strings.Contains(msg, ": "+string(k)+": ") {
			return k
		}
	}
	return KindInternal
}

// Message returns err's text without its kind prefix, for edges that show
// the kind separately (HTTP status, Nova fault code).
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	msg := err.Error()
	k := KindOf(err)
	if i := strings.Index(msg, string(k)+": "); i >= 0 && k != KindInternal {
		_, rest := splitErrorType(msg[i+len(k)+2:])
		return rest
	}
	return msg
}
