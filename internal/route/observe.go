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

// Slot receives the pattern of the route a request matched.
type Slot struct {
	pattern atomic.Pointer[string]
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
