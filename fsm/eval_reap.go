package fsm

import (
	"fmt"

	"github.com/stratus-cloud/stratus/structs"
)

// Finished evaluations are reaped by a leader-driven entry, as Nomad's
// core scheduler garbage-collects evaluations: every boot leaves one,
// and without the reap a cluster that boots and deletes servers grows
// its state and snapshots with evaluations of instances long gone.

func init() {
	registerApply(structs.EvalReapType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.EvalReapEntry
		if err := decodeBody(structs.EvalReapType, body, &e); err != nil {
			return err
		}
		_, err := s.ReapEvals(index, e.Before)
		return err
	})
}

// ReapEvals removes the finished (complete or failed) evaluations
// created before before and returns how many it removed; pending ones
// stay whatever their age. It changes nothing (and no index) when none
// is that old.
func (s *StateStore) ReapEvals(index uint64, before int64) (int, error) {
	txn := s.writeTxn()
	defer txn.Abort()
	n := 0
	for _, status := range []string{structs.EvalStatusComplete, structs.EvalStatusFailed} {
		evals, err := list[*structs.Evaluation](txn, nil, TableEvals, "status", status)
		if err != nil {
			return 0, err
		}
		for _, ev := range evals {
			if ev.CreatedAt >= before {
				continue
			}
			if err := txn.Delete(TableEvals, ev); err != nil {
				return 0, fmt.Errorf("reap evaluation %s: %w", ev.ID, err)
			}
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	return n, commitAt(txn, index, TableEvals)
}

// OldestFinishedEval returns the creation time of the oldest finished
// evaluation, and false when there is none; the leader asks before it
// proposes a reap, so an idle cluster writes nothing.
func (s *StateStore) OldestFinishedEval() (int64, bool, error) {
	var oldest int64
	found := false
	for _, status := range []string{structs.EvalStatusComplete, structs.EvalStatusFailed} {
		evals, err := s.EvalsByStatus(nil, status)
		if err != nil {
			return 0, false, err
		}
		for _, ev := range evals {
			if !found || ev.CreatedAt < oldest {
				oldest, found = ev.CreatedAt, true
			}
		}
	}
	return oldest, found, nil
}
