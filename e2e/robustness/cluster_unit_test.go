package robustness

import (
	"strings"
	"testing"
)

// TestSyncBufferKeepsFirstRaceReport: the log buffer keeps only its
// tail, but the first data race report must survive for checkNoRace.
func TestSyncBufferKeepsFirstRaceReport(t *testing.T) {
	var b syncBuffer
	_, _ = b.Write([]byte("starting\n"))
	if b.raceReport() != "" {
		t.Fatal("a race report without a race")
	}
	_, _ = b.Write([]byte("==================\n" + raceWarning + "\nWrite at 0x00c by goroutine 7:\n"))
	_, _ = b.Write([]byte("  main.f()\n"))
	filler := strings.Repeat("x", 1<<20) + "\n"
	for i := 0; i < 6; i++ {
		_, _ = b.Write([]byte(filler)) // pushes the report out of the tail
	}
	r := b.raceReport()
	if !strings.HasPrefix(r, raceWarning) || !strings.Contains(r, "main.f()") {
		t.Fatalf("race report lost: %.200q", r)
	}
	if strings.Contains(b.String(), raceWarning) {
		t.Fatal("the tail should no longer hold the report (test premise)")
	}
}
