package route

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestStatusesOf(t *testing.T) {
	neutron := Default.With(Statuses{structs.KindQuotaReached: http.StatusConflict})
	for _, c := range []struct {
		s     Statuses
		err   error
		want  int
		known bool
	}{
		{Default, structs.Errorf(structs.KindNotFound, "x"), 404, true},
		{Default, fmt.Errorf("wrapped: %w", structs.Errorf(structs.KindConflict, "x")), 409, true},
		{Default, structs.Errorf(structs.KindQuotaReached, "x"), 403, true},
		{neutron, structs.Errorf(structs.KindQuotaReached, "x"), 409, true},
		{Default, &http.MaxBytesError{Limit: 1}, 413, true},
		{Default, errors.New("boom"), 500, false},
		{Default, structs.Errorf(structs.KindInternal, "x"), 500, false},
	} {
		if got, known := c.s.Of(c.err); got != c.want || known != c.known {
			t.Errorf("%v: %d %v, want %d %v", c.err, got, known, c.want, c.known)
		}
	}
	if Default[structs.KindQuotaReached] != http.StatusForbidden {
		t.Fatal("With changed the table it copied")
	}
}
