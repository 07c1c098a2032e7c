package api

import "net/url"

// Evaluations reads evaluations, the units of scheduling work.
type Evaluations struct{ c *Client }

// Evaluations returns a handle on the /v1/evaluations endpoints.
func (c *Client) Evaluations() *Evaluations { return &Evaluations{c} }

// Evaluation statuses.
const (
	EvalStatusPending  = "pending"
	EvalStatusComplete = "complete"
	EvalStatusFailed   = "failed"
)

// Evaluation is a unit of scheduling work: deciding where the instances
// of one request run.
type Evaluation struct {
	ID          string
	InstanceIDs []string
	// TriggeredBy is instance-create or reschedule.
	TriggeredBy string
	Status      string
	// StatusDescription says why an evaluation failed.
	StatusDescription string
	// CreatedAt is unix nanoseconds.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// List returns all evaluations.
func (e *Evaluations) List(q *QueryOptions) ([]*Evaluation, *QueryMeta, error) {
	var out []*Evaluation
	qm, err := e.c.query("/v1/evaluations", &out, q)
	if err != nil {
		return nil, nil, err
	}
	return out, qm, nil
}

// Info returns the evaluation with the given ID.
func (e *Evaluations) Info(id string, q *QueryOptions) (*Evaluation, *QueryMeta, error) {
	var out Evaluation
	qm, err := e.c.query("/v1/evaluations/"+url.PathEscape(id), &out, q)
	if err != nil {
		return nil, nil, err
	}
	return &out, qm, nil
}
