package nova

import (
	"net/http"

	"github.com/stratus-cloud/stratus/structs"
)

// Nova's default quotas. Stratus does not enforce them yet (quotas
// become enforceable in their own change); limits and os-quota-sets
// report them with the project's real usage.
const (
	maxServerMeta = 128
)

// quota is one of Nova's quota resources and the microversion range it
// is shown in (0: unbounded).
type quota struct {
	name, limitName string // os-quota-sets key, limits key ("" for none)
	usedName        string // limits' usage key ("" for none)
	value           int
	maxV            int
}

// quotas are Nova's defaults, in the order Nova lists them. Network and
// file-injection quotas disappeared in 2.36 and 2.57.
var quotas = []quota{
	{"cores", "maxTotalCores", "totalCoresUsed", 20, 0},
	{"fixed_ips", "", "", -1, 35},
	{"floating_ips", "maxTotalFloatingIps", "totalFloatingIpsUsed", -1, 35},
	{"injected_file_content_bytes", "maxPersonalitySize", "", 10240, 56},
	{"injected_file_path_bytes", "", "", 255, 56},
	{"injected_files", "maxPersonality", "", 5, 56},
	{"instances", "maxTotalInstances", "totalInstancesUsed", 10, 0},
	{"key_pairs", "maxTotalKeypairs", "", 100, 0},
	{"metadata_items", "maxServerMeta", "", maxServerMeta, 0},
	{"ram", "maxTotalRAMSize", "totalRAMUsed", 51200, 0},
	{"security_group_rules", "maxSecurityGroupRules", "", -1, 35},
	{"security_groups", "maxSecurityGroups", "totalSecurityGroupsUsed", -1, 35},
	{"server_groups", "maxServerGroups", "totalServerGroupsUsed", 10, 0},
	{"server_group_members", "maxServerGroupMembers", "", 10, 0},
}

// shown reports whether the quota exists at the request's microversion.
func (q *request) shown(qt quota) bool { return qt.maxV == 0 || q.mv <= qt.maxV }

// usage is what a project consumes, by quota name.
func (q *request) usage(projectID string) (map[string]int, error) {
	var out structs.InstanceListResponse
	if err := q.call("Instance.List", &structs.InstanceListRequest{ProjectID: projectID}, &out); err != nil {
		return nil, err
	}
	used := map[string]int{}
	for _, inst := range out.Instances {
		used["instances"]++
		if inst.Flavor != nil {
			used["cores"] += inst.Flavor.VCPUs
			used["ram"] += inst.Flavor.MemoryMB
		}
	}
	return used, nil
}

func (a *API) quotaRoutes() []routeSpec {
	const rule = "os_compute_api:os-quota-sets:"
	return []routeSpec{
		{pattern: "GET /os-quota-sets/{project}", access: reader, policy: rule + "show", handle: a.quotaShow},
		{pattern: "GET /os-quota-sets/{project}/defaults", access: anyone, policy: rule + "defaults", handle: a.quotaDefaults},
		{pattern: "GET /os-quota-sets/{project}/detail", access: reader, policy: rule + "detail", handle: a.quotaDetail},
		{pattern: "PUT /os-quota-sets/{project}", access: admin, policy: rule + "update", handle: a.quotaWrite},
		{pattern: "DELETE /os-quota-sets/{project}", access: admin, policy: rule + "delete", handle: a.quotaWrite},
	}
}

// quotaProject checks that the caller may read the project's quotas:
// its own, or any for admins.
func (q *request) quotaProject(rule string) (string, error) {
	p := q.param("project")
	if p != q.token.ProjectID && !q.isAdmin() {
		return "", policyFault("os_compute_api:os-quota-sets:" + rule)
	}
	return p, nil
}

// quotaSet is the project's quota set: limits, or with usage the
// {in_use, limit, reserved} detail.
func (q *request) quotaSet(project string, used map[string]int) map[string]any {
	set := map[string]any{"id": project}
	for _, qt := range quotas {
		if !q.shown(qt) {
			continue
		}
		if used == nil {
			set[qt.name] = qt.value
		} else {
			set[qt.name] = map[string]int{"in_use": used[qt.name], "limit": qt.value, "reserved": 0}
		}
	}
	return map[string]any{"quota_set": set}
}

// quotaShow answers GET /os-quota-sets/{project}: the defaults, since
// Stratus has no per-project quotas yet (a user_id asks for a user's,
// which are the project's).
func (a *API) quotaShow(q *request) (*reply, error) {
	project, err := q.quotaProject("show")
	if err != nil {
		return nil, err
	}
	return okReply(q.quotaSet(project, nil))
}

func (a *API) quotaDefaults(q *request) (*reply, error) {
	return okReply(q.quotaSet(q.param("project"), nil))
}

// quotaDetail answers GET /os-quota-sets/{project}/detail with the
// project's usage; key pairs count the caller's own.
func (a *API) quotaDetail(q *request) (*reply, error) {
	project, err := q.quotaProject("detail")
	if err != nil {
		return nil, err
	}
	used, err := q.usage(project)
	if err != nil {
		return nil, err
	}
	var kps structs.KeyPairListResponse
	if err := q.call("KeyPair.List", &structs.KeyPairListRequest{UserID: q.token.UserID}, &kps); err != nil {
		return nil, err
	}
	used["key_pairs"] = len(kps.KeyPairs)
	return okReply(q.quotaSet(project, used))
}

// quotaWrite answers PUT and DELETE: quotas cannot be changed until
// they are stored and enforced.
func (a *API) quotaWrite(q *request) (*reply, error) {
	return nil, faultf(http.StatusNotImplemented, "Changing quotas is not implemented yet: the default quotas apply to every project.")
}

func (a *API) limitRoutes() []routeSpec {
	return []routeSpec{{pattern: "GET /limits", access: anyone, policy: "os_compute_api:limits", handle: a.limits}}
}

// limits answers GET /limits: Nova's default absolute limits with the
// project's usage (an admin may name another project with tenant_id).
func (a *API) limits(q *request) (*reply, error) {
	if err := q.checkQuery("tenant_id", "reserved"); err != nil {
		return nil, err
	}
	project := q.token.ProjectID
	if t := q.query().Get("tenant_id"); t != "" && t != project {
		if !q.isAdmin() {
			return nil, policyFault("os_compute_api:limits:other_project")
		}
		project = t
	}
	used, err := q.usage(project)
	if err != nil {
		return nil, err
	}
	abs := map[string]int{}
	for _, qt := range quotas {
		if !q.shown(qt) || qt.limitName == "" {
			continue
		}
		abs[qt.limitName] = qt.value
		if qt.usedName != "" {
			abs[qt.usedName] = used[qt.name]
		}
	}
	if !q.atLeast(39) {
		abs["maxImageMeta"] = maxServerMeta
	}
	return okReply(map[string]any{"limits": map[string]any{"rate": []any{}, "absolute": abs}})
}
