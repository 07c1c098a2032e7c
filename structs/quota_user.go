package structs

// UserQuotaSet is a user's own limits inside a project (Nova's
// per-user quotas, os-quota-sets/{project}?user_id=U). A resource it
// does not name falls back to the project's effective limit. Enforced
// per user: instances, cores and ram (the user's instances in the
// project) and key_pairs (the user's, in its default project); usage
// also counts the user's server groups in the project.
type UserQuotaSet struct {
	ProjectID string
	UserID    string
	Limits    map[string]int64

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy.
func (q *UserQuotaSet) Copy() *UserQuotaSet {
	if q == nil {
		return nil
	}
	c := *q
	c.Limits = copyInt64Map(q.Limits)
	return &c
}

// UserQuotaEntry is the Raft entry that changes a user's limits in a
// project: Set merges into them; Delete drops them (back to the
// project's).
type UserQuotaEntry struct {
	ProjectID string
	UserID    string
	Set       map[string]int64
	Delete    bool
}

// UserQuotaGetRequest reads a user's effective limits in a project and,
// with Usage, what the user uses there.
type UserQuotaGetRequest struct {
	ProjectID string
	UserID    string
	Usage     bool
	QueryOptions
}

// UserQuotaUpdateRequest sets a user's limits in a project. As in Nova
// each limit must lie between what the user uses and what the project
// leaves the user (its limit minus the other users' usage), unless
// Force is set.
type UserQuotaUpdateRequest struct {
	ProjectID string
	UserID    string
	Limits    map[string]int64
	Force     bool
	WriteRequest
}

// UserQuotaDeleteRequest drops a user's own limits in a project.
type UserQuotaDeleteRequest struct {
	ProjectID string
	UserID    string
	WriteRequest
}
