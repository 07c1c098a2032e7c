package structs

import "time"

// EvalGCThreshold is how long a finished evaluation (complete or failed)
// stays in the state before the leader reaps it, as Nomad's
// eval_gc_threshold: long enough to read why a boot failed, short enough
// that churn does not grow the state and its snapshots without bound.
// It is the default of the servers' eval_gc_threshold.
const EvalGCThreshold = time.Hour

// EvalReapEntry removes the finished evaluations created before Before
// (EvalReapType). The leader proposes it with Before = now -
// EvalGCThreshold, so every replica removes the same evaluations
// whatever its own clock says; pending ones are never removed.
type EvalReapEntry struct {
	Before int64
}
