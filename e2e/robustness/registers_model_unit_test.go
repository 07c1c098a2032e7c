package robustness

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// These tests run without STRATUS_ROBUSTNESS: they prove the checker
// the suite relies on rejects the histories it is there to catch.

func regOp(client int, kind, key, value string, out regOutput, call, ret int64) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: regInput{Kind: kind, Key: key, Value: value}, Output: out, Call: call, Return: ret}
}

func written(client int, key, value string, call, ret int64) porcupine.Operation {
	return regOp(client, regWrite, key, value, regOutput{Result: resOK}, call, ret)
}

func read(client int, key, value string, call, ret int64) porcupine.Operation {
	return regOp(client, regRead, key, "", regOutput{Result: resOK, Value: value}, call, ret)
}

func TestRegisterCheckerAcceptsLinearizableHistory(t *testing.T) {
	ops := []porcupine.Operation{
		written(0, "k", "a", 0, 10),
		read(1, "k", "a", 11, 20),
		// Concurrent with the write of b: either value may be read.
		written(0, "k", "b", 21, 40),
		read(1, "k", "a", 22, 30),
		read(2, "k", "b", 25, 35),
		read(1, "k", "b", 41, 50),
		// A write whose outcome is unknown may never take effect...
		regOp(2, regWrite, "k", "lost", regOutput{Result: resUnknown}, 45, math.MaxInt64),
		read(1, "k", "b", 51, 60),
		// ...and the other key is independent.
		read(3, "other", "", 0, 100),
	}
	stales := []staleRead{
		{Key: "k", Value: "", Server: "s2", Incarnation: 1, Index: 5, Call: 0, Ret: 1},
		{Key: "k", Value: "a", Server: "s2", Incarnation: 1, Index: 7, Call: 12, Ret: 13},
		// Stale: b was acknowledged at 40, but asking for stale allows it.
		{Key: "k", Value: "a", Server: "s2", Incarnation: 1, Index: 7, Call: 55, Ret: 56},
		// A restarted server may start behind what it served before.
		{Key: "k", Value: "", Server: "s2", Incarnation: 2, Index: 3, Call: 57, Ret: 58},
	}
	_, _, problems := checkRegisters(ops, stales, map[string]bool{}, 10*time.Second)
	if len(problems) != 0 {
		t.Fatalf("a linearizable history was rejected: %v", problems)
	}
}

// TestRegisterCheckerCatchesStaleRead is the history a follower answering
// a default read from its own state produces: the write of b was
// acknowledged, then a read that did not ask for stale saw a.
func TestRegisterCheckerCatchesStaleRead(t *testing.T) {
	ops := []porcupine.Operation{
		written(0, "k", "a", 0, 10),
		written(0, "k", "b", 11, 20),
		read(1, "k", "a", 21, 30),
	}
	res, _, problems := checkRegisters(ops, nil, map[string]bool{}, 10*time.Second)
	if res != porcupine.Illegal || len(problems) == 0 {
		t.Fatalf("a stale default read was not caught: %v %v", res, problems)
	}
}

func TestRegisterCheckerCatchesLostAcknowledgedWrite(t *testing.T) {
	ops := []porcupine.Operation{
		written(0, "k", "a", 0, 10),
		read(1, "k", "", 21, 30),
	}
	if res, _, _ := checkRegisters(ops, nil, map[string]bool{}, 10*time.Second); res != porcupine.Illegal {
		t.Fatalf("a lost acknowledged write was not caught: %v", res)
	}
}

func TestStaleReadChecks(t *testing.T) {
	ops := []porcupine.Operation{
		written(0, "k", "a", 0, 10),
		written(0, "k", "b", 50, 60),
	}
	cases := []struct {
		name   string
		stales []staleRead
		want   string
	}{
		{"from the future", []staleRead{{Key: "k", Value: "b", Call: 20, Ret: 30}}, "no write had begun"},
		{"never written", []staleRead{{Key: "k", Value: "zz", Call: 20, Ret: 30}}, "no write had begun"},
		{"failed write", []staleRead{{Key: "k", Value: "failed", Call: 20, Ret: 30}}, "a write that failed"},
		{"back in time", []staleRead{
			{Key: "k", Value: "a", Server: "s1", Incarnation: 1, Index: 9, Call: 20, Ret: 30},
			{Key: "k", Value: "a", Server: "s1", Incarnation: 1, Index: 8, Call: 31, Ret: 40},
		}, "went back in time"},
		{"two values at one index", []staleRead{
			{Key: "k", Value: "a", Server: "s1", Incarnation: 1, Index: 9, Call: 61, Ret: 62},
			{Key: "k", Value: "b", Server: "s1", Incarnation: 1, Index: 9, Call: 63, Ret: 64},
		}, "at the same index"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, problems := checkRegisters(ops, tc.stales, map[string]bool{"failed": true}, 10*time.Second)
			if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Fatalf("want a problem containing %q, got %v", tc.want, problems)
			}
		})
	}
	// Overlapping reads of one server are not ordered: no problem.
	overlap := []staleRead{
		{Key: "k", Value: "a", Server: "s1", Incarnation: 1, Index: 9, Call: 20, Ret: 40},
		{Key: "k", Value: "a", Server: "s1", Incarnation: 1, Index: 8, Call: 30, Ret: 45},
	}
	if _, _, problems := checkRegisters(ops, overlap, nil, 10*time.Second); len(problems) != 0 {
		t.Fatalf("overlapping stale reads were rejected: %v", problems)
	}
}

// TestRegisterCheckerInconclusiveIsAProblem: a check that runs out of
// time decides nothing, and must fail the run rather than pass it.
func TestRegisterCheckerInconclusiveIsAProblem(t *testing.T) {
	// Many overlapping writes and reads no order explains: proving that
	// takes the search far longer than the timeout.
	var ops []porcupine.Operation
	for i := 0; i < 40; i++ {
		v := string(rune('a' + i%26))
		ops = append(ops, written(i, "k", v+"w", 0, 1000), read(100+i, "k", v+"r", 0, 1000))
	}
	res, _, problems := checkRegisters(ops, nil, nil, time.Millisecond)
	if res != porcupine.Unknown {
		t.Skipf("the search finished within 1ms (%v): nothing to show", res)
	}
	if !strings.Contains(strings.Join(problems, "\n"), "did not finish") {
		t.Fatalf("an inconclusive check was not reported: %v", problems)
	}
}

// TestRegisterCheckerDecidesManyUnknownWrites: writes of unknown outcome
// that nothing ever read (a partition's timeouts) are dropped before the
// search, which they would otherwise blow up; one whose value a read
// returned is kept, since only it explains that read.
func TestRegisterCheckerDecidesManyUnknownWrites(t *testing.T) {
	ops := []porcupine.Operation{written(0, "k", "a", 0, 10)}
	for i := 0; i < 200; i++ {
		ops = append(ops, regOp(1+i%8, regWrite, "k", "lost-"+string(rune('A'+i%26))+string(rune('a'+i/26)),
			regOutput{Result: resUnknown}, int64(11+i), math.MaxInt64))
	}
	ops = append(ops,
		regOp(9, regWrite, "k", "x", regOutput{Result: resUnknown}, 300, math.MaxInt64),
		read(10, "k", "a", 301, 302),
		read(10, "k", "x", 400, 410),
		read(11, "k", "x", 420, 430),
	)
	res, _, problems := checkRegisters(ops, nil, map[string]bool{}, 10*time.Second)
	if res != porcupine.Ok || len(problems) != 0 {
		t.Fatalf("a linearizable history with 200 unread unknown writes: %v %v", res, problems)
	}
	if kept := withoutUnseenUnknowns(ops); len(kept) != 5 {
		t.Fatalf("%d operations kept, want the acknowledged write, the read-back unknown one and 3 reads", len(kept))
	}
}
