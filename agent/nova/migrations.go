package nova

import (
	"net/http"
	"sort"
	"strconv"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const (
	migrationsRule       = "os_compute_api:os-migrations:index"
	serverMigrationsRule = "os_compute_api:servers:migrations:"
)

// The server migration routes check their admin-only policy after
// looking the server up, so another project's server stays a 404.
func (a *API) migrationRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /os-migrations", Access: admin, Policy: migrationsRule, Handle: a.migrationList},
		{Pattern: "GET /servers/{id}/migrations", MinVersion: 23, Access: reader, Policy: serverMigrationsRule + "index", Handle: a.serverMigrationList},
		{Pattern: "GET /servers/{id}/migrations/{migration_id}", MinVersion: 23, Access: reader, Policy: serverMigrationsRule + "show", Handle: a.serverMigrationShow},
		{Pattern: "DELETE /servers/{id}/migrations/{migration_id}", MinVersion: 24, Access: reader, Policy: serverMigrationsRule + "delete", Handle: a.serverMigrationAbort},
		{Pattern: "POST /servers/{id}/migrations/{migration_id}/action", MinVersion: 22, Access: reader, Policy: serverMigrationsRule + "force_complete", Handle: a.serverMigrationAction},
	}
}

// migrationStatus is a migration's status as Nova words it: a live
// migration under way is "running".
func migrationStatus(m *structs.Migration) string {
	if m.Type == structs.MigrationTypeLive && m.Status == structs.MigrationMigrating {
		return structs.MigrationRunning
	}
	return m.Status
}

// liveInProgress reports whether m is a live migration under way, the
// only kind /servers/{id}/migrations shows.
func liveInProgress(m *structs.Migration) bool {
	return m.Type == structs.MigrationTypeLive && !m.Terminal()
}

// migrationRefs resolves what a migration view names: hosts (for their
// addresses) and flavors (for Nova's integer flavor ids).
type migrationRefs struct {
	hosts   map[string]*structs.Host
	flavors map[string]*structs.Flavor
}

func (q *request) migrationRefs() (*migrationRefs, error) {
	hosts, err := q.hostsByID()
	if err != nil {
		return nil, err
	}
	var fl structs.FlavorListResponse
	if err := q.call("Flavor.List", &structs.FlavorListRequest{}, &fl); err != nil {
		return nil, err
	}
	refs := &migrationRefs{hosts: hosts, flavors: make(map[string]*structs.Flavor, len(fl.Flavors))}
	for _, f := range fl.Flavors {
		refs.flavors[f.ID] = f
	}
	return refs, nil
}

// flavorID is Nova's integer id of a flavor (instance_type_id): the
// flavor id itself when it is a number, else the index that created the
// flavor; null for a flavor that is gone.
func (r *migrationRefs) flavorID(id string) any {
	if n, err := strconv.ParseInt(id, 10, 64); err == nil {
		return n
	}
	if f := r.flavors[id]; f != nil {
		return f.CreateIndex
	}
	return nil
}

// hostAddr is a migration's dest_host: the destination's IP address.
func (r *migrationRefs) hostAddr(id string) any {
	if h := r.hosts[id]; h != nil {
		return hostIP(h)
	}
	return nil
}

// migrationLinks are the links of a live migration under way: the
// server migration it is.
func (q *request) migrationLinks(m *structs.Migration) []link {
	id := strconv.FormatUint(m.ID, 10)
	return []link{{Href: q.selfHref("servers", m.InstanceID, "migrations", id), Rel: "self"},
		{Href: q.bookmarkHref("servers", m.InstanceID, "migrations", id), Rel: "bookmark"}}
}

// migrationView is a migration in os-migrations: migration_type and
// links (for live migrations under way) from 2.23, uuid from 2.59,
// user_id and project_id from 2.80. A host is its own node in Stratus.
func (q *request) migrationView(m *structs.Migration, refs *migrationRefs) map[string]any {
	v := map[string]any{
		"created_at":           pyTime(m.CreatedAt),
		"dest_compute":         nullString(m.DestHost),
		"dest_host":            refs.hostAddr(m.DestHostID),
		"dest_node":            nullString(m.DestHost),
		"id":                   m.ID,
		"instance_uuid":        m.InstanceID,
		"new_instance_type_id": refs.flavorID(m.NewFlavorID),
		"old_instance_type_id": refs.flavorID(m.OldFlavorID),
		"source_compute":       nullString(m.SourceHost),
		"source_node":          nullString(m.SourceHost),
		"status":               migrationStatus(m),
		"updated_at":           pyTime(m.UpdatedAt),
	}
	if q.atLeast(23) {
		v["migration_type"] = m.Type
		if liveInProgress(m) {
			v["links"] = q.migrationLinks(m)
		}
	}
	if q.atLeast(59) {
		v["uuid"] = m.UUID
	}
	if q.atLeast(80) {
		v["user_id"], v["project_id"] = nullString(m.UserID), nullString(m.ProjectID)
	}
	return v
}

// serverMigrationView is a live migration in /servers/{id}/migrations.
// Stratus does not track a live migration's memory and disk progress:
// those counters are null, as Nova shows them before the first report.
func (q *request) serverMigrationView(m *structs.Migration, refs *migrationRefs) map[string]any {
	v := map[string]any{
		"created_at":             pyTime(m.CreatedAt),
		"dest_compute":           nullString(m.DestHost),
		"dest_host":              refs.hostAddr(m.DestHostID),
		"dest_node":              nullString(m.DestHost),
		"id":                     m.ID,
		"server_uuid":            m.InstanceID,
		"source_compute":         nullString(m.SourceHost),
		"source_node":            nullString(m.SourceHost),
		"status":                 migrationStatus(m),
		"updated_at":             pyTime(m.UpdatedAt),
		"memory_total_bytes":     nil,
		"memory_processed_bytes": nil,
		"memory_remaining_bytes": nil,
		"disk_total_bytes":       nil,
		"disk_processed_bytes":   nil,
		"disk_remaining_bytes":   nil,
	}
	if q.atLeast(59) {
		v["uuid"] = m.UUID
	}
	if q.atLeast(80) {
		v["user_id"], v["project_id"] = nullString(m.UserID), nullString(m.ProjectID)
	}
	return v
}

// migrationList answers GET /os-migrations (admins): Nova's filters
// (instance_uuid, status, host, source_compute, migration_type; user_id
// and project_id from 2.80), by id before 2.59; from 2.59 newest first
// with limit, marker (a migration uuid) and changes-since (and
// changes-before from 2.66), and a next link when a page is full.
func (a *API) migrationList(q *request) (*reply, error) {
	f := &listFilter{pg: page{limit: maxLimit}}
	if q.atLeast(59) {
		allowed := []string{"hidden", "host", "instance_uuid", "migration_type", "source_compute", "status",
			"limit", "marker", "changes-since"}
		if q.atLeast(66) {
			allowed = append(allowed, "changes-before")
		}
		if q.atLeast(80) {
			allowed = append(allowed, "user_id", "project_id")
		}
		var err error
		if f, err = q.listQuery(allowed); err != nil {
			return nil, err
		}
	}
	v := q.query()
	var out structs.MigrationListResponse
	if err := q.call("Migration.List", &structs.MigrationListRequest{InstanceID: v.Get("instance_uuid")}, &out); err != nil {
		return nil, err
	}
	match := func(k, got string) bool { return !v.Has(k) || v.Get(k) == got }
	var ms []*structs.Migration
	for _, m := range out.Migrations {
		ok := match("instance_uuid", m.InstanceID) && match("status", migrationStatus(m)) &&
			match("migration_type", m.Type) && match("source_compute", m.SourceHost) &&
			(!v.Has("host") || v.Get("host") == m.SourceHost || v.Get("host") == m.DestHost) && f.keep(m.UpdatedAt)
		if q.atLeast(80) {
			ok = ok && match("user_id", m.UserID) && match("project_id", m.ProjectID)
		}
		if ok {
			ms = append(ms, m)
		}
	}
	if q.atLeast(59) {
		sort.SliceStable(ms, func(i, j int) bool {
			if ms[i].CreatedAt != ms[j].CreatedAt {
				return ms[i].CreatedAt > ms[j].CreatedAt
			}
			return ms[i].ID > ms[j].ID
		})
	} else {
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	}
	ms, err := pageOf(ms, f.pg, func(m *structs.Migration) string { return m.UUID })
	if err != nil {
		return nil, err
	}
	refs, err := q.migrationRefs()
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(ms))
	for _, m := range ms {
		views = append(views, q.migrationView(m, refs))
	}
	body := map[string]any{"migrations": views}
	if q.atLeast(59) && len(ms) > 0 {
		if l := q.nextLinks(f.pg, len(ms), ms[len(ms)-1].UUID, "os-migrations"); l != nil {
			body["migrations_links"] = l
		}
	}
	return okReply(body)
}

// migrationServer looks up the server of a /servers/{id}/migrations
// request and applies the admin-only rule.
func (q *request) migrationServer(rule string) (*structs.Instance, error) {
	inst, err := q.getServer(q.param("id"))
	if err != nil {
		return nil, err
	}
	if !q.isAdmin() {
		return nil, policyFault(serverMigrationsRule + rule)
	}
	return inst, nil
}

// serverMigrations reads a server's migrations.
func (q *request) serverMigrations(inst *structs.Instance) ([]*structs.Migration, error) {
	var out structs.MigrationListResponse
	if err := q.call("Migration.List", &structs.MigrationListRequest{InstanceID: inst.ID}, &out); err != nil {
		return nil, err
	}
	sort.SliceStable(out.Migrations, func(i, j int) bool { return out.Migrations[i].ID < out.Migrations[j].ID })
	return out.Migrations, nil
}

// serverMigration finds one of a server's migrations by its id; nil
// when it has none such.
func (q *request) serverMigration(inst *structs.Instance) (*structs.Migration, error) {
	id, err := strconv.ParseUint(q.param("migration_id"), 10, 64)
	if err != nil {
		return nil, nil
	}
	ms, err := q.serverMigrations(inst)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.ID == id && m.InstanceID == inst.ID {
			return m, nil
		}
	}
	return nil, nil
}

// serverMigrationList answers GET /servers/{id}/migrations (2.23): the
// server's live migrations under way.
func (a *API) serverMigrationList(q *request) (*reply, error) {
	inst, err := q.migrationServer("index")
	if err != nil {
		return nil, err
	}
	ms, err := q.serverMigrations(inst)
	if err != nil {
		return nil, err
	}
	refs, err := q.migrationRefs()
	if err != nil {
		return nil, err
	}
	views := []any{}
	for _, m := range ms {
		if liveInProgress(m) {
			views = append(views, q.serverMigrationView(m, refs))
		}
	}
	return okReply(map[string]any{"migrations": views})
}

// serverMigrationShow answers GET /servers/{id}/migrations/{mid} (2.23)
// for a live migration under way, with Nova's 404s otherwise.
func (a *API) serverMigrationShow(q *request) (*reply, error) {
	inst, err := q.migrationServer("show")
	if err != nil {
		return nil, err
	}
	m, err := q.serverMigration(inst)
	if err != nil {
		return nil, err
	}
	mid := q.param("migration_id")
	switch {
	case m == nil:
		return nil, notFound("In-progress live migration %s is not found for server %s.", mid, inst.ID)
	case m.Type != structs.MigrationTypeLive:
		return nil, notFound("Migration %s for server %s is not live-migration.", mid, inst.ID)
	case !liveInProgress(m):
		return nil, notFound("Live migration %s for server %s is not in progress.", mid, inst.ID)
	}
	refs, err := q.migrationRefs()
	if err != nil {
		return nil, err
	}
	return okReply(map[string]any{"migration": q.serverMigrationView(m, refs)})
}

// liveMigrationUnderWay checks what Nova's abort and force-complete ask
// of the server and the migration: the server migrating (409), the
// migration its own (404 for abort, 400 for force_complete) and running
// (400). method is Nova's wording of the operation.
func (q *request) liveMigrationUnderWay(inst *structs.Instance, method, action string, missing int) (*structs.Migration, error) {
	if inst.TaskState != structs.TaskMigrating {
		state := inst.TaskState
		if state == "" {
			state = "None"
		}
		return nil, faultf(http.StatusConflict, "Cannot '%s' instance %s while it is in task_state %s", action, inst.ID, state)
	}
	m, err := q.serverMigration(inst)
	if err != nil {
		return nil, err
	}
	mid := q.param("migration_id")
	if m == nil {
		return nil, faultf(missing, "Migration %s not found for instance %s", mid, inst.ID)
	}
	if !liveInProgress(m) {
		return nil, badRequest("Migration %s state of instance %s is %s. Cannot %s while the migration is in this state.", mid, inst.ID, migrationStatus(m), method)
	}
	return m, nil
}

// serverMigrationAbort answers DELETE /servers/{id}/migrations/{mid}
// (2.24). The servers cannot abort a live migration yet: one under way
// is a 409, as Nova answers a migration it cannot abort.
func (a *API) serverMigrationAbort(q *request) (*reply, error) {
	inst, err := q.migrationServer("delete")
	if err != nil {
		return nil, err
	}
	m, err := q.liveMigrationUnderWay(inst, "abort live migration", "abort live migration", http.StatusNotFound)
	if err != nil {
		return nil, err
	}
	return nil, faultf(http.StatusConflict, "Aborting live migration %d of server %s is not supported.", m.ID, inst.ID)
}

var forceCompleteSchema = &schema{types: tObject, required: []string{"force_complete"}, props: map[string]*schema{
	"force_complete": {types: tNull},
}}

// serverMigrationAction answers POST /servers/{id}/migrations/{mid}/action
// (2.22): force_complete, which the servers cannot do yet (409 for a
// live migration under way).
func (a *API) serverMigrationAction(q *request) (*reply, error) {
	body, err := decodeBody(q, anyBody)
	if err != nil {
		return nil, err
	}
	if _, ok := body["force_complete"]; !ok || len(body) != 1 {
		for k := range body {
			if k != "force_complete" {
				return nil, badRequest("There is no such action: %s", k)
			}
		}
		return nil, badRequest("Malformed request body")
	}
	if err := forceCompleteSchema.validate(map[string]any(body), nil); err != nil {
		return nil, err
	}
	inst, err := q.migrationServer("force_complete")
	if err != nil {
		return nil, err
	}
	m, err := q.liveMigrationUnderWay(inst, "force complete", "force_complete", http.StatusBadRequest)
	if err != nil {
		return nil, err
	}
	return nil, faultf(http.StatusConflict, "Forcing live migration %d of server %s to complete is not supported.", m.ID, inst.ID)
}
