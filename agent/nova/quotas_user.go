package nova

import "github.com/stratus-cloud/stratus/structs"

// Per-user quotas: os-quota-sets/{project}?user_id=U reads, sets and
// drops a user's own limits inside a project, as Nova's. The servers
// store them (fsm/quota_user.go) and enforce them when the user boots
// (instances, cores, ram) and creates key pairs.

// userQuota reads a user's effective limits in a project and, with
// usage, what the user uses there.
func (q *request) userQuota(project, user string, usage bool) (*structs.QuotaResponse, error) {
	var out structs.QuotaResponse
	err := q.call("Quota.GetUser", &structs.UserQuotaGetRequest{ProjectID: project, UserID: user, Usage: usage}, &out)
	if err == nil && usage && out.Usage == nil {
		out.Usage = map[string]int64{}
	}
	return &out, err
}

// userQuotaShow answers GET (and, with usage, GET …/detail) of
// os-quota-sets/{project}?user_id=U.
func (q *request) userQuotaShow(project, user string, usage bool) (*reply, error) {
	out, err := q.userQuota(project, user, usage)
	if err != nil {
		return nil, err
	}
	return okReply(q.quotaSet(project, out.Limits, out.Usage))
}

// userQuotaUpdate answers PUT os-quota-sets/{project}?user_id=U (admin)
// with the user's limits; a limit outside what the user uses and what
// the project leaves the user is a 400 unless force is set.
func (q *request) userQuotaUpdate(project, user string, in map[string]any) (*reply, error) {
	var out structs.QuotaResponse
	err := q.call("Quota.UpdateUser", &structs.UserQuotaUpdateRequest{ProjectID: project, UserID: user,
		Limits: quotaLimits(in), Force: boolOf(in["force"])}, &out)
	if err != nil {
		return nil, err
	}
	return okReply(q.quotaSet("", out.Limits, nil))
}

// userQuotaDelete answers DELETE os-quota-sets/{project}?user_id=U
// (admin): the user's own limits are dropped (202).
func (q *request) userQuotaDelete(project, user string) (*reply, error) {
	if err := q.call("Quota.DeleteUser", &structs.UserQuotaDeleteRequest{ProjectID: project, UserID: user}, &structs.GenericResponse{}); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}
