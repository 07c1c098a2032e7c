package command

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/api"
)

func TestParseCutoff(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-11-01T00:00:00Z": time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		"2026-11-01":           time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		"72h":                  now.Add(-72 * time.Hour),
		"30d":                  now.Add(-30 * 24 * time.Hour),
		"0s":                   now,
	} {
		got, err := parseCutoff(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "-1h", "3x"} {
		if _, err := parseCutoff(in, now); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}

// TestOperatorPurgeDeletedAgainstDevAgent deletes a server on a real
// agent and purges its records with the command.
func TestOperatorPurgeDeletedAgainstDevAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent")
	}
	c := readyDevAgent(t)
	runOK(t, "instance", "create", "-flavor", "m1.tiny", "-image", "cirros", "-wait", "gone")
	runOK(t, "instance", "delete", "gone")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		insts, _, err := c.Instances().List(nil)
		if err == nil && len(insts) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the instance was never deleted: %v %v", insts, err)
		}
	}

	// Deleted less than an hour ago: kept.
	out := runOK(t, "operator", "purge-deleted", "-before", "1h")
	assertContains(t, "early cut-off", out, "Purged the records of 0 server(s) deleted before ")
	out = runOK(t, "operator", "purge-deleted", "-before", "0s", "-json")
	var got api.PurgeDeletedResponse
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("-json: %v %q", err, out)
	}
	if got.Purged != 1 || got.Entries != 1 || got.Index == 0 {
		t.Fatalf("purge answered %+v, want the one deleted server", got)
	}
	out = runOK(t, "operator", "purge-deleted", "-before", time.Now().Add(time.Minute).UTC().Format(time.RFC3339))
	assertContains(t, "nothing left", out, "Purged the records of 0 server(s)")

	_, stderr, code := run(t, "operator", "purge-deleted")
	if code != 2 || !strings.Contains(stderr, "-before: a time or a duration is required") {
		t.Fatalf("without -before: exit %d, %q", code, stderr)
	}
	_, stderr, code = run(t, "operator", "purge-deleted", "-before", "soon")
	if code != 2 || !strings.Contains(stderr, fmt.Sprintf("%q is neither", "soon")) {
		t.Fatalf("bad -before: exit %d, %q", code, stderr)
	}
}
