package route

import (
	"context"
	"sync/atomic"
)

// An API's dispatch tells the agent's request metrics which route a
// request matched, so that they are labelled by route template
// ("GET /servers/{id}") and never by a raw path: the agent puts a Slot in
// the request's context, and Table.Match fills it when Request.Ctx
// carries it.

type slotKey struct{}

// Slot receives the pattern of the route a request matched, and who the
// request authenticated as.
type Slot struct {
	pattern atomic.Pointer[string]
	caller  atomic.Pointer[authCaller]
}

// WithSlot returns ctx carrying a new Slot, and the Slot.
func WithSlot(ctx context.Context) (context.Context, *Slot) {
	s := &Slot{}
	return context.WithValue(ctx, slotKey{}, s), s
}

// Pattern is the matched route's pattern, "" if none matched.
func (s *Slot) Pattern() string {
	if p := s.pattern.Load(); p != nil {
		return *p
	}
	return ""
}

// Observe records, for an API that dispatches without a Table (EC2's
// actions), the name its request matched in ctx's Slot, if it has one.
func Observe(ctx context.Context, pattern string) { observe(ctx, pattern) }

// observe records pattern in ctx's Slot, if it has one.
func observe(ctx context.Context, pattern string) {
	if ctx == nil {
		return
	}
	if s, ok := ctx.Value(slotKey{}).(*Slot); ok {
		s.pattern.Store(&pattern)
	}
}

// authCaller is who a request authenticated as, for the access log.
type authCaller struct{ userID, projectID string }

// ObserveCaller records, in ctx's Slot if it has one, the user and
// project a request authenticated as, so that the access log names them.
// An API calls it once it has verified the caller's credential, never
// with what the request merely claims.
func ObserveCaller(ctx context.Context, userID, projectID string) {
	if ctx == nil {
		return
	}
	if s, ok := ctx.Value(slotKey{}).(*Slot); ok {
		s.caller.Store(&authCaller{userID: userID, projectID: projectID})
	}
}

// Caller is the user and project ObserveCaller recorded, "" for a
// request that did not authenticate.
func (s *Slot) Caller() (userID, projectID string) {
	if c := s.caller.Load(); c != nil {
		return c.userID, c.projectID
	}
	return "", ""
}
