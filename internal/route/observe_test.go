package route

import (
	"context"
	"testing"
)

// TestObserveCaller: the caller an API verified reaches the Slot the
// agent put in the context; a context without a Slot is left alone.
func TestObserveCaller(t *testing.T) {
	ctx, slot := WithSlot(context.Background())
	if u, p := slot.Caller(); u != "" || p != "" {
		t.Fatalf("a fresh slot names %q/%q", u, p)
	}
	ObserveCaller(ctx, "u-1", "p-1")
	Observe(ctx, "GET /servers")
	if u, p := slot.Caller(); u != "u-1" || p != "p-1" || slot.Pattern() != "GET /servers" {
		t.Errorf("slot %q/%q %q", u, p, slot.Pattern())
	}
	ObserveCaller(context.Background(), "u-2", "p-2")
}
