package nova

import (
	"regexp"
	"unicode/utf8"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

// Quotas are stored and enforced by the servers (see fsm/quotas.go);
// this file shows them in Nova's shapes and edits them.

// quota is one of Nova's quota resources, its names in GET /limits, and
// the microversions it is shown in by os-quota-sets (maxV) and by
// os-quota-class-sets (classMinV, classMaxV); 0 is unbounded.
type quota struct {
	name, limitName string // os-quota-sets key, limits key ("" for none)
	usedName        string // limits' usage key ("" for none)
	maxV            int
	classMinV       int
	classMaxV       int
}

// quotas are Nova's quota resources, in the order Nova lists them.
// Network quotas disappeared in 2.36 (2.50 for quota classes, which
// gained the server group ones there), file injection ones in 2.57.
var quotas = []quota{
	{"cores", "maxTotalCores", "totalCoresUsed", 0, 0, 0},
	{"fixed_ips", "", "", 35, 0, 49},
	{"floating_ips", "maxTotalFloatingIps", "totalFloatingIpsUsed", 35, 0, 49},
	{"injected_file_content_bytes", "maxPersonalitySize", "", 56, 0, 56},
	{"injected_file_path_bytes", "", "", 56, 0, 56},
	{"injected_files", "maxPersonality", "", 56, 0, 56},
	{"instances", "maxTotalInstances", "totalInstancesUsed", 0, 0, 0},
	{"key_pairs", "maxTotalKeypairs", "", 0, 0, 0},
	{"metadata_items", "maxServerMeta", "", 0, 0, 0},
	{"ram", "maxTotalRAMSize", "totalRAMUsed", 0, 0, 0},
	{"security_group_rules", "maxSecurityGroupRules", "", 35, 0, 49},
	{"security_groups", "maxSecurityGroups", "totalSecurityGroupsUsed", 35, 0, 49},
	{"server_groups", "maxServerGroups", "totalServerGroupsUsed", 0, 50, 0},
	{"server_group_members", "maxServerGroupMembers", "", 0, 50, 0},
}

// shown reports whether the quota exists in os-quota-sets and limits at
// the request's microversion.
func (q *request) shown(qt quota) bool { return qt.maxV == 0 || q.mv <= qt.maxV }

// shownInClass reports whether the quota exists in os-quota-class-sets.
func (q *request) shownInClass(qt quota) bool {
	return q.mv >= qt.classMinV && (qt.classMaxV == 0 || q.mv <= qt.classMaxV)
}

func (a *API) quotaRoutes() []route.Route[handler] {
	const rule = "os_compute_api:os-quota-sets:"
	const classRule = "os_compute_api:os-quota-class-sets:"
	return []route.Route[handler]{
		{Pattern: "GET /os-quota-sets/{project}", Access: reader, Policy: rule + "show", Handle: a.quotaShow},
		{Pattern: "GET /os-quota-sets/{project}/defaults", Access: anyone, Policy: rule + "defaults", Handle: a.quotaDefaults},
		{Pattern: "GET /os-quota-sets/{project}/detail", Access: reader, Policy: rule + "detail", Handle: a.quotaDetail},
		{Pattern: "PUT /os-quota-sets/{project}", Access: admin, Policy: rule + "update", Handle: a.quotaUpdate},
		{Pattern: "DELETE /os-quota-sets/{project}", Access: admin, Policy: rule + "delete", Handle: a.quotaDelete},
		{Pattern: "GET /os-quota-class-sets/{class}", Access: admin, Policy: classRule + "show", Handle: a.quotaClassShow},
		{Pattern: "PUT /os-quota-class-sets/{class}", Access: admin, Policy: classRule + "update", Handle: a.quotaClassUpdate},
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

// projectQuota reads a project's effective limits and, with usage, what
// it uses (key pairs are the caller's own, as they are per user).
func (q *request) projectQuota(project string, usage bool) (*structs.QuotaResponse, error) {
	var out structs.QuotaResponse
	err := q.call("Quota.Get", &structs.QuotaGetRequest{ProjectID: project, UserID: q.token.UserID, Usage: usage}, &out)
	return &out, err
}

// quotaSet is a quota set body: limits, or with usage the {in_use,
// limit, reserved} detail; id is left out when empty (update answers).
func (q *request) quotaSet(id string, limits, used map[string]int64) map[string]any {
	set := map[string]any{}
	if id != "" {
		set["id"] = id
	}
	for _, qt := range quotas {
		if !q.shown(qt) {
			continue
		}
		if used == nil {
			set[qt.name] = limits[qt.name]
		} else {
			set[qt.name] = map[string]int64{"in_use": used[qt.name], "limit": limits[qt.name], "reserved": 0}
		}
	}
	return map[string]any{"quota_set": set}
}

// quotaShow answers GET /os-quota-sets/{project}; a user_id asks for a
// user's quotas in it (quotas_user.go).
func (a *API) quotaShow(q *request) (*reply, error) {
	if err := q.checkQuery("user_id"); err != nil {
		return nil, err
	}
	project, err := q.quotaProject("show")
	if err != nil {
		return nil, err
	}
	if user := q.query().Get("user_id"); user != "" {
		return q.userQuotaShow(project, user, false)
	}
	out, err := q.projectQuota(project, false)
	if err != nil {
		return nil, err
	}
	return okReply(q.quotaSet(project, out.Limits, nil))
}

// quotaDefaults answers GET /os-quota-sets/{project}/defaults: the
// default class's limits.
func (a *API) quotaDefaults(q *request) (*reply, error) {
	var out structs.QuotaResponse
	if err := q.call("Quota.GetClass", &structs.QuotaClassRequest{Class: structs.QuotaDefaultClass}, &out); err != nil {
		return nil, err
	}
	return okReply(q.quotaSet(q.param("project"), out.Limits, nil))
}

// quotaDetail answers GET /os-quota-sets/{project}/detail with the
// project's usage; key pairs count the caller's own.
func (a *API) quotaDetail(q *request) (*reply, error) {
	if err := q.checkQuery("user_id"); err != nil {
		return nil, err
	}
	project, err := q.quotaProject("detail")
	if err != nil {
		return nil, err
	}
	if user := q.query().Get("user_id"); user != "" {
		return q.userQuotaShow(project, user, true)
	}
	out, err := q.projectQuota(project, true)
	if err != nil {
		return nil, err
	}
	if out.Usage == nil {
		out.Usage = map[string]int64{}
	}
	return okReply(q.quotaSet(project, out.Limits, out.Usage))
}

// quotaValuePattern is Nova's common_quota: an integer, -1 unlimited.
var quotaValuePattern = regexp.MustCompile(`^-?[0-9]+$`)

func quotaValueSchema() *schema {
	return &schema{types: tInteger | tString, pattern: quotaValuePattern, min: ptr(-1), max: ptr(0x7FFFFFFF)}
}

// quotaUpdateSchema is Nova's PUT /os-quota-sets body at a version: the
// resources it shows, and force.
func (q *request) quotaUpdateSchema() *schema {
	props := map[string]*schema{"force": booleanSchema}
	for _, qt := range quotas {
		if q.shown(qt) {
			props[qt.name] = quotaValueSchema()
		}
	}
	return &schema{types: tObject, required: []string{"quota_set"}, props: map[string]*schema{
		"quota_set": {types: tObject, props: props}}}
}

// quotaLimits reads the validated limits of a quota body.
func quotaLimits(in map[string]any) map[string]int64 {
	out := map[string]int64{}
	for k, v := range in {
		if _, ok := structs.DefaultQuotas[k]; ok {
			out[k] = intOf(v)
		}
	}
	return out
}

// quotaUpdate answers PUT /os-quota-sets/{project} (admin) with the
// project's limits, or with user_id a user's (quotas_user.go). A limit
// below what the project uses is 400 unless force is set.
func (a *API) quotaUpdate(q *request) (*reply, error) {
	if err := q.checkQuery("user_id"); err != nil {
		return nil, err
	}
	body, err := decodeBody(q, q.quotaUpdateSchema())
	if err != nil {
		return nil, err
	}
	in := object(body, "quota_set")
	if user := q.query().Get("user_id"); user != "" {
		return q.userQuotaUpdate(q.param("project"), user, in)
	}
	var out structs.QuotaResponse
	err = q.call("Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeProject, ID: q.param("project"),
		Limits: quotaLimits(in), Force: boolOf(in["force"])}, &out)
	if err != nil {
		return nil, err
	}
	return okReply(q.quotaSet("", out.Limits, nil))
}

// quotaDelete answers DELETE /os-quota-sets/{project} (admin): the
// project's own limits are dropped and the defaults apply again (202);
// with user_id, the user's own limits in it.
func (a *API) quotaDelete(q *request) (*reply, error) {
	if err := q.checkQuery("user_id"); err != nil {
		return nil, err
	}
	if user := q.query().Get("user_id"); user != "" {
		return q.userQuotaDelete(q.param("project"), user)
	}
	if err := q.call("Quota.Delete", &structs.QuotaDeleteRequest{ProjectID: q.param("project")}, &structs.GenericResponse{}); err != nil {
		return nil, err
	}
	return acceptedReply(nil)
}

// quotaClassSet is a quota class body at the request's version.
func (q *request) quotaClassSet(id string, limits map[string]int64) map[string]any {
	set := map[string]any{}
	if id != "" {
		set["id"] = id
	}
	for _, qt := range quotas {
		if q.shownInClass(qt) {
			set[qt.name] = limits[qt.name]
		}
	}
	return map[string]any{"quota_class_set": set}
}

// quotaClassShow answers GET /os-quota-class-sets/{class} (admin);
// "default" holds the defaults every project without its own gets.
func (a *API) quotaClassShow(q *request) (*reply, error) {
	var out structs.QuotaResponse
	if err := q.call("Quota.GetClass", &structs.QuotaClassRequest{Class: q.param("class")}, &out); err != nil {
		return nil, err
	}
	return okReply(q.quotaClassSet(q.param("class"), out.Limits))
}

// quotaClassUpdate answers PUT /os-quota-class-sets/{class} (admin):
// editing the "default" class changes every project's defaults.
func (a *API) quotaClassUpdate(q *request) (*reply, error) {
	// Nova's schema takes every resource its version still has, the
	// server group ones too before 2.50, where they are stored but not
	// shown.
	props := map[string]*schema{}
	for _, qt := range quotas {
		if qt.classMaxV == 0 || q.mv <= qt.classMaxV {
			props[qt.name] = quotaValueSchema()
		}
	}
	body, err := decodeBody(q, &schema{types: tObject, required: []string{"quota_class_set"}, props: map[string]*schema{
		"quota_class_set": {types: tObject, props: props}}})
	if err != nil {
		return nil, err
	}
	class := q.param("class")
	if n := utf8.RuneCountInString(class); n > 255 {
		return nil, badRequest("Invalid input received: quota_class_name has %d characters, more than 255.", n)
	}
	var out structs.QuotaResponse
	err = q.call("Quota.Update", &structs.QuotaUpdateRequest{Scope: structs.QuotaScopeClass, ID: class,
		Limits: quotaLimits(object(body, "quota_class_set"))}, &out)
	if err != nil {
		return nil, err
	}
	return okReply(q.quotaClassSet("", out.Limits))
}

func (a *API) limitRoutes() []route.Route[handler] {
	return []route.Route[handler]{{Pattern: "GET /limits", Access: anyone, Policy: "os_compute_api:limits", Handle: a.limits}}
}

// limits answers GET /limits: the project's absolute limits with its
// usage (an admin may name another project with tenant_id).
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
	out, err := q.projectQuota(project, true)
	if err != nil {
		return nil, err
	}
	abs := map[string]int64{}
	for _, qt := range quotas {
		if !q.shown(qt) || qt.limitName == "" {
			continue
		}
		abs[qt.limitName] = out.Limits[qt.name]
		if qt.usedName != "" {
			abs[qt.usedName] = out.Usage[qt.name]
		}
	}
	if !q.atLeast(39) {
		abs["maxImageMeta"] = out.Limits[structs.QuotaMetadataItems]
	}
	return okReply(map[string]any{"limits": map[string]any{"rate": []any{}, "absolute": abs}})
}
