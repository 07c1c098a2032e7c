package structs

// Evaluation statuses.
const (
	EvalStatusPending  = "pending"
	EvalStatusComplete = "complete"
	EvalStatusFailed   = "failed"
)

// What triggered an evaluation.
const (
	EvalTriggerCreate     = "instance-create"
	EvalTriggerReschedule = "reschedule"
	EvalTriggerResize     = "resize"
	EvalTriggerMigrate    = "migrate"
	EvalTriggerEvacuate   = "evacuate"
	EvalTriggerUnshelve   = "unshelve"
)

// Evaluation is a unit of scheduling work: decide where the instances of
// one request run. The broker never hands out two evaluations that name
// the same instance at once.
type Evaluation struct {
	ID          string
	InstanceIDs []string
	TriggeredBy string
	Status      string
	// StatusDescription says why an evaluation failed.
	StatusDescription string

	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (e *Evaluation) Copy() *Evaluation {
	if e == nil {
		return nil
	}
	c := *e
	c.InstanceIDs = append([]string(nil), e.InstanceIDs...)
	return &c
}

// Terminal reports whether the evaluation needs no more work.
func (e *Evaluation) Terminal() bool {
	return e.Status == EvalStatusComplete || e.Status == EvalStatusFailed
}

// Plan is a scheduler's answer to one evaluation: where each instance
// goes, and which could not be placed and why.
type Plan struct {
	EvalID string
	// EvalToken proves the submitting worker still holds the evaluation.
	EvalToken string
	// SnapshotIndex is the state index the scheduler decided on.
	SnapshotIndex uint64
	Placements    []*Allocation
	Failures      []*PlacementFailure
}

// PlacementFailure records that no host could take an instance.
type PlacementFailure struct {
	InstanceID string
	// Explanation is Nova's NoValidHost with per-filter counts, such as
	// "0/120 hosts: 80 insufficient MEMORY_MB, 40 not in zone az2".
	Explanation string
	// Filtered maps each filter's reason to the number of hosts it
	// rejected.
	Filtered map[string]int
	// FilteredBy maps each filter's name ("ComputeFilter") to the number
	// of hosts it rejected, for the metrics: reasons may name a zone or
	// a trait, filter names are a fixed set.
	FilteredBy map[string]int
	// HostsEvaluated is how many hosts were considered.
	HostsEvaluated int
}

// PlanResult is what the plan applier committed.
type PlanResult struct {
	// Placed are the allocations committed.
	Placed []*Allocation
	// Refused are instances whose placement no longer fit the newest
	// state; they go back to be scheduled again.
	Refused []string
	// Contended are the refused instances whose host changed after the
	// plan's snapshot or took other placements of the same batch or of
	// commits in flight: another plan got there first. A worker
	// re-plans those without counting them as failed attempts.
	Contended []string
	Index     uint64
}
