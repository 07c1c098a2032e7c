package robustness

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

// Register operations: shared keys (an instance's metadata item, a
// flavor's extra spec) written by several workers and read from every
// agent while the faults run.
const (
	regWrite = "write"
	regRead  = "read"
)

// regInput is one operation on one key; Value is the value written.
type regInput struct {
	Kind, Key, Value string
}

// regOutput is what came back: Value is the value read ("" when the key
// is not set).
type regOutput struct {
	Result string // resOK or resUnknown (writes); reads are recorded only when answered
	Value  string
	Err    string
	Via    string // the agent the request was sent to
}

// staleRead is a read that asked for ?stale: it may be stale, so it is
// kept out of the linearizability check and checked on its own.
type staleRead struct {
	Key, Value string
	// Table names what the read returned the index of (one index per
	// table: instances and flavors move apart).
	Table string
	// Server names the server process that answered directly, with its
	// incarnation (a restarted server may start behind what it served
	// before); empty when a client agent forwarded the read.
	Server      string
	Incarnation int
	Index       uint64
	Call, Ret   int64
}

// regHistory records the register operations and the stale reads.
type regHistory struct {
	*history
	mu     sync.Mutex
	stales []staleRead
	// failed holds the values of writes that definitely did not happen.
	failed map[string]bool
	// whyFailed counts those failures by key kind and answer.
	whyFailed map[string]int
}

func newRegHistory(h *history) *regHistory {
	return &regHistory{history: h, failed: map[string]bool{}, whyFailed: map[string]int{}}
}

func (r *regHistory) recordStale(s staleRead) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stales = append(r.stales, s)
}

func (r *regHistory) recordFailedWrite(key, value, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed[value] = true
	kind, _, _ := strings.Cut(key, "/")
	if len(why) > 80 {
		why = why[:80]
	}
	r.whyFailed[kind+": "+why]++
}

// registerModel is the sequential specification of a set of registers,
// one partition per key: a read returns the last value written.
var registerModel = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		for _, op := range ops {
			k := op.Input.(regInput).Key
			byKey[k] = append(byKey[k], op)
		}
		keys := make([]string, 0, len(byKey))
		for k := range byKey {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() interface{} { return "" },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		st, in, out := state.(string), input.(regInput), output.(regOutput)
		if in.Kind == regWrite {
			// An acknowledged write took effect; one whose outcome is
			// unknown returns at the end of time, so linearizing it
			// last is the same as it never having happened.
			return true, in.Value
		}
		return out.Value == st, st
	},
	Equal: func(a, b interface{}) bool { return a.(string) == b.(string) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(regInput), output.(regOutput)
		if in.Kind == regWrite {
			return fmt.Sprintf("write(%s=%q) via %s -> %s %s", in.Key, in.Value, out.Via, out.Result, out.Err)
		}
		return fmt.Sprintf("read(%s) via %s -> %q", in.Key, out.Via, out.Value)
	},
	DescribeState: func(state interface{}) string { return fmt.Sprintf("%q", state) },
}

// recordWrite adds a write; one that definitely failed is kept out of the
// model (it is a no-op) but remembered, so reading its value is caught.
func (r *regHistory) recordWrite(client int, key, value, via string, out opOutput, call int64) {
	if out.Result == resFail || out.Result == resNotFound {
		r.recordFailedWrite(key, value, out.Err)
		return
	}
	ret := r.now()
	if out.Result == resUnknown {
		ret = math.MaxInt64
	}
	r.add(client, regInput{Kind: regWrite, Key: key, Value: value}, regOutput{Result: out.Result, Err: out.Err, Via: via}, call, ret)
}

// recordRead adds a linearizable (non-stale) read that was answered.
func (r *regHistory) recordRead(client int, key, value, via string, call int64) {
	r.add(client, regInput{Kind: regRead, Key: key}, regOutput{Result: resOK, Value: value, Via: via}, call, r.now())
}

func (r *regHistory) add(client int, in regInput, out regOutput, call, ret int64) {
	r.history.mu.Lock()
	defer r.history.mu.Unlock()
	r.ops = append(r.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
}

// checkRegisters checks the linearizable history with porcupine and the
// stale reads on their own; it returns every violation found. An
// inconclusive check (timeout) is a violation: a suite that cannot
// decide has not shown anything.
func checkRegisters(ops []porcupine.Operation, stales []staleRead, failed map[string]bool, timeout time.Duration) (porcupine.CheckResult, porcupine.LinearizationInfo, []string) {
	res, info := porcupine.CheckOperationsVerbose(registerModel, withoutUnseenUnknowns(ops), timeout)
	var problems []string
	switch res {
	case porcupine.Illegal:
		problems = append(problems, "the register history is not linearizable")
	case porcupine.Unknown:
		problems = append(problems, fmt.Sprintf("the register linearizability check did not finish within %s", timeout))
	}
	problems = append(problems, checkStaleReads(ops, stales, failed)...)
	return res, info, problems
}

// checkStaleReads checks what a stale read still promises: it returns a
// value that was written (never one from the future, nor one whose
// write failed), and one server incarnation never goes back in time.
func checkStaleReads(ops []porcupine.Operation, stales []staleRead, failed map[string]bool) []string {
	writtenAt := map[string]int64{} // key\x00value -> earliest call of a write of it
	for _, op := range ops {
		in := op.Input.(regInput)
		if in.Kind != regWrite {
			continue
		}
		k := in.Key + "\x00" + in.Value
		if at, ok := writtenAt[k]; !ok || op.Call < at {
			writtenAt[k] = op.Call
		}
	}
	var problems []string
	for _, s := range stales {
		if s.Value == "" {
			continue
		}
		if failed[s.Value] {
			problems = append(problems, fmt.Sprintf("stale read of %s returned %q, the value of a write that failed", s.Key, s.Value))
			continue
		}
		at, ok := writtenAt[s.Key+"\x00"+s.Value]
		if !ok || at > s.Ret {
			problems = append(problems, fmt.Sprintf("stale read of %s at %.3fs returned %q, which no write had begun to write", s.Key, float64(s.Ret)/1e9, s.Value))
		}
	}
	return append(problems, checkMonotone(stales)...)
}

// checkMonotone checks that successive stale reads of one server
// incarnation (the second sent after the first was answered) never see
// an older index, nor two values of one key at the same index.
func checkMonotone(stales []staleRead) []string {
	byServer := map[string][]staleRead{}
	for _, s := range stales {
		if s.Server != "" {
			k := fmt.Sprintf("%s#%d %s", s.Server, s.Incarnation, s.Table)
			byServer[k] = append(byServer[k], s)
		}
	}
	var problems []string
	for srv, reads := range byServer {
		sort.Slice(reads, func(i, j int) bool { return reads[i].Ret < reads[j].Ret })
		for j, b := range reads {
			for _, a := range reads[:j] {
				if a.Ret >= b.Call {
					continue
				}
				if b.Index < a.Index {
					problems = append(problems, fmt.Sprintf("%s went back in time: a stale read at %.3fs saw index %d after one at %.3fs saw %d",
						srv, float64(b.Call)/1e9, b.Index, float64(a.Ret)/1e9, a.Index))
				}
				if a.Key == b.Key && a.Index == b.Index && a.Value != b.Value {
					problems = append(problems, fmt.Sprintf("%s answered %s=%q and then %q at the same index %d", srv, a.Key, a.Value, b.Value, a.Index))
				}
			}
		}
	}
	return problems
}

// withoutUnseenUnknowns drops the writes of unknown outcome whose value
// no read returned. Such a write may take effect at any time after its
// call (its return is open), and porcupine's search over where to place
// dozens of them can outlast any timeout; yet it changes nothing: a
// history is linearizable with it exactly when it is without it, since
// it can always go last (nothing must follow it) and, its value never
// read, it explains no read. Writes' values are unique, so "never read"
// is exact. The stale-read checks still see every write.
func withoutUnseenUnknowns(ops []porcupine.Operation) []porcupine.Operation {
	seen := map[string]bool{} // key\x00value a read returned
	for _, op := range ops {
		if in, out := op.Input.(regInput), op.Output.(regOutput); in.Kind == regRead {
			seen[in.Key+"\x00"+out.Value] = true
		}
	}
	out := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		in, res := op.Input.(regInput), op.Output.(regOutput)
		if in.Kind == regWrite && res.Result == resUnknown && !seen[in.Key+"\x00"+in.Value] {
			continue
		}
		out = append(out, op)
	}
	return out
}
