package scheduler

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestRetryFilter(t *testing.T) {
	fresh := testInstance("i", small())
	retried := testInstance("i", small())
	retried.Attempts = []*structs.BuildAttempt{{HostID: "h1", Error: "spawn failed"}, {HostID: ""}, nil, {HostID: "h3"}}
	runFilterCases(t, RetryFilter{}, []filterCase{
		{"never tried", testHost("h1"), fresh, true, ""},
		{"tried first", testHost("h1"), retried, false, "already tried"},
		{"tried later", testHost("h3"), retried, false, "already tried"},
		{"not tried", testHost("h2"), retried, true, ""},
	})
	if (RetryFilter{}).applies(mustRequest(t, fresh)) {
		t.Fatal("RetryFilter applies to an instance never tried")
	}
}
