package nova

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestStatusOf checks Nova's answer to each kind of error: a fault its
// own, an RPC error its kind's status with its message, a body over its
// limit Nova's 413 text, and anything else a 500 that keeps its text in
// the log.
func TestStatusOf(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
		msg    string
	}{
		{notFound("Flavor %s could not be found.", "x"), 404, "Flavor x could not be found."},
		{policyFault("os_compute_api:servers:index"), 403, "Policy doesn't allow os_compute_api:servers:index to be performed."},
		{structs.Errorf(structs.KindInvalid, "bad"), 400, "bad"},
		{fmt.Errorf("wrapped: %w", structs.Errorf(structs.KindNotFound, "gone")), 404, "gone"},
		{structs.Errorf(structs.KindConflict, "busy"), 409, "busy"},
		{structs.Errorf(structs.KindPermission, "no"), 403, "no"},
		{structs.Errorf(structs.KindQuotaReached, "quota"), 403, "quota"},
		{structs.Errorf(structs.KindNoLeader, "election"), 503, "election"},
		{structs.Errorf(structs.KindUnavailable, "down"), 503, "down"},
		{&http.MaxBytesError{Limit: 1}, 413, "Request is too large."},
		{structs.Errorf(structs.KindInternal, "secret"), 500, msgUnexpected},
		{errors.New("secret"), 500, msgUnexpected},
	} {
		if status, msg := statusOf(c.err); status != c.status || msg != c.msg {
			t.Errorf("%v: %d %q, want %d %q", c.err, status, msg, c.status, c.msg)
		}
	}
}
