package robustness

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/stratus-cloud/stratus/api"
)

// Operation kinds and outcomes of the history.
const (
	opCreate = "create"
	opDelete = "delete"
	opAction = "action"
	opRead   = "read"

	resOK       = "ok"
	resFail     = "fail"     // definitely did not happen
	resNotFound = "notfound" // the instance does not exist (or no longer)
	resUnknown  = "unknown"  // may or may not have happened

	obsAbsent   = "absent"
	obsPresent  = "present"
	obsDeleting = "deleting"
)

// Model states of one instance name.
const (
	stAbsent  = 0 // never created
	stPresent = 1
	stGone    = 2 // deleted
)

type opInput struct {
	Kind, Name, Detail string
}

type opOutput struct {
	Result   string
	Observed string
	Err      string
}

// history records operations from concurrent workers.
type history struct {
	mu    sync.Mutex
	start time.Time
	ops   []porcupine.Operation
}

func newHistory() *history { return &history{start: time.Now()} }

func (h *history) now() int64 { return int64(time.Since(h.start)) }

// record adds one finished operation; an unknown outcome's return time is
// the end of time, so it may take effect at any point after its call.
func (h *history) record(client int, in opInput, out opOutput, call int64) {
	ret := h.now()
	if out.Result == resUnknown {
		ret = math.MaxInt64
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
}

func (h *history) snapshot() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]porcupine.Operation(nil), h.ops...)
}

// classify turns an API error into an outcome: refused connections and
// 4xx answers did not happen; timeouts, 5xx and "no leader" (Raft may
// still commit the entry) may have.
func classify(err error) opOutput {
	if err == nil {
		return opOutput{Result: resOK}
	}
	out := opOutput{Result: resUnknown, Err: err.Error()}
	var apiErr *api.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		out.Result = resFail
	case errors.As(err, &apiErr) && apiErr.Kind == api.KindNoLeader:
	case errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound:
		out.Result = resNotFound
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500 &&
		apiErr.StatusCode != http.StatusRequestTimeout:
		out.Result = resFail
	}
	return out
}

// instanceModel is the sequential specification of one instance name:
// created at most once, then deleted at most once; reads see it exactly
// while it is created and not deleted.
var instanceModel = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byName := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range ops {
			n := op.Input.(opInput).Name
			if _, ok := byName[n]; !ok {
				order = append(order, n)
			}
			byName[n] = append(byName[n], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, n := range order {
			out = append(out, byName[n])
		}
		return out
	},
	Init: func() interface{} { return stAbsent },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		return step(state.(int), input.(opInput), output.(opOutput))
	},
	Equal: func(a, b interface{}) bool { return a.(int) == b.(int) },
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(opInput), output.(opOutput)
		return fmt.Sprintf("%s(%s %s) -> %s %s %s", in.Kind, in.Name, in.Detail, out.Result, out.Observed, out.Err)
	},
	DescribeState: func(state interface{}) string {
		return [...]string{"absent", "present", "gone"}[state.(int)]
	},
}

func step(st int, in opInput, out opOutput) (bool, interface{}) {
	switch in.Kind {
	case opCreate:
		switch out.Result {
		case resOK:
			return st == stAbsent, stPresent
		case resUnknown:
			if st == stAbsent {
				return true, stPresent
			}
			return true, st
		}
		return true, st
	case opDelete:
		switch out.Result {
		case resOK:
			return st == stPresent, stGone
		case resNotFound:
			return st != stPresent, st
		case resUnknown:
			if st == stPresent {
				return true, stGone
			}
			return true, st
		}
		return true, st
	case opAction:
		if out.Result == resNotFound {
			return st != stPresent, st
		}
		return true, st
	case opRead:
		switch out.Observed {
		case obsPresent:
			return st == stPresent, st
		case obsDeleting:
			return st == stGone, st
		default:
			return st != stPresent, st
		}
	}
	return false, st
}
