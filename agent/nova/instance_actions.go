package nova

import (
	"slices"
	"strconv"

	"github.com/stratus-cloud/stratus/internal/route"
	"github.com/stratus-cloud/stratus/structs"
)

const instanceActionsRule = "os_compute_api:os-instance-actions:"

func (a *API) instanceActionRoutes() []route.Route[handler] {
	return []route.Route[handler]{
		{Pattern: "GET /servers/{id}/os-instance-actions", Access: reader, Policy: instanceActionsRule + "list", Handle: a.instanceActionList},
		{Pattern: "GET /servers/{id}/os-instance-actions/{request_id}", Access: reader, Policy: instanceActionsRule + "show", Handle: a.instanceActionShow},
	}
}

// serverActionsOf reads a server's actions, newest first (one of them
// when requestID is set). A server the caller may not see is a 404;
// from 2.21 so is a deleted server's, unless its actions are still kept
// and belong to the caller's project (or the caller is an admin).
func (q *request) serverActionsOf(id, requestID string) ([]*structs.InstanceAction, error) {
	_, err := q.getServer(id)
	if err != nil && (!q.atLeast(21) || !isStatus(err, 404)) {
		return nil, err
	}
	deleted := err != nil
	args := &structs.InstanceActionListRequest{InstanceID: id, RequestID: requestID}
	if deleted {
		args.RequestID = "" // every action, to learn whose they are
	}
	var out structs.InstanceActionListResponse
	if err := q.call("Instance.Actions", args, &out); err != nil {
		return nil, err
	}
	if !deleted {
		return out.Actions, nil
	}
	if len(out.Actions) == 0 || (!q.isAdmin() && out.Actions[0].ProjectID != q.token.ProjectID) {
		return nil, notFound("Instance %s could not be found.", id)
	}
	if requestID == "" {
		return out.Actions, nil
	}
	for _, a := range out.Actions {
		if a.RequestID == requestID {
			return []*structs.InstanceAction{a}, nil
		}
	}
	return nil, nil
}

// instanceActionList answers GET /servers/{id}/os-instance-actions; from
// 2.58 with limit, marker (a request id) and changes-since, from 2.66
// changes-before, and a next link when a page is full.
func (a *API) instanceActionList(q *request) (*reply, error) {
	f, err := q.actionListFilter()
	if err != nil {
		return nil, err
	}
	acts, err := q.serverActionsOf(q.param("id"), "")
	if err != nil {
		return nil, err
	}
	acts = slices.DeleteFunc(slices.Clone(acts), func(a *structs.InstanceAction) bool { return !f.keep(a.UpdatedAt) })
	acts, err = pageOf(acts, f.pg, func(a *structs.InstanceAction) string { return a.RequestID })
	if err != nil {
		return nil, err
	}
	views := make([]any, 0, len(acts))
	for _, act := range acts {
		views = append(views, q.instanceActionView(act))
	}
	body := map[string]any{"instanceActions": views}
	if q.atLeast(58) && len(acts) > 0 {
		if l := q.nextLinks(f.pg, len(acts), acts[len(acts)-1].RequestID, "servers", q.param("id"), "os-instance-actions"); l != nil {
			body["links"] = l
		}
	}
	return okReply(body)
}

// instanceActionShow answers GET /servers/{id}/os-instance-actions/{rid}
// with the action's events: for admins always, for the server's project
// from 2.51 (without tracebacks); hostId from 2.62, the host itself for
// admins, and from 2.84 the details for admins.
func (a *API) instanceActionShow(q *request) (*reply, error) {
	rid := q.param("request_id")
	acts, err := q.serverActionsOf(q.param("id"), rid)
	if err != nil {
		return nil, err
	}
	if len(acts) == 0 {
		return nil, notFound("Action %s not found", rid)
	}
	act := acts[0]
	v := q.instanceActionView(act)
	if q.isAdmin() || q.atLeast(51) {
		hosts, err := q.hostsByID()
		if err != nil {
			return nil, err
		}
		events := make([]any, 0, len(act.Events))
		// Nova lists events newest first.
		for i := len(act.Events) - 1; i >= 0; i-- {
			events = append(events, q.actionEventView(act, act.Events[i], hosts))
		}
		v["events"] = events
	}
	return okReply(map[string]any{"instanceAction": v})
}

func (q *request) instanceActionView(a *structs.InstanceAction) map[string]any {
	v := map[string]any{
		"action":        a.Action,
		"instance_uuid": a.InstanceID,
		"message":       nullString(a.Message),
		"project_id":    nullString(a.ProjectID),
		"request_id":    a.RequestID,
		"start_time":    pyTime(a.StartTime),
		"user_id":       nullString(a.UserID),
	}
	if q.atLeast(58) {
		v["updated_at"] = pyTime(a.UpdatedAt)
	}
	return v
}

func (q *request) actionEventView(a *structs.InstanceAction, e *structs.InstanceActionEvent, hosts map[string]*structs.Host) map[string]any {
	v := map[string]any{
		"event":       e.Event,
		"start_time":  pyTime(e.StartTime),
		"finish_time": pyTime(e.FinishTime),
		"result":      nullString(e.Result),
	}
	admin := q.isAdmin()
	if admin {
		v["traceback"] = nil
	}
	hostName := e.HostID
	if h := hosts[e.HostID]; h != nil {
		hostName = h.Name
	}
	if q.atLeast(62) {
		v["hostId"] = ""
		if hostName != "" {
			v["hostId"] = generateHostID(a.ProjectID, hostName)
		}
		if admin {
			v["host"] = nullString(hostName)
		}
	}
	if q.atLeast(84) && admin {
		v["details"] = nullString(e.Details)
	}
	return v
}

// listFilter is the paging and time filter of a list (os-instance-actions
// from 2.58, os-migrations from 2.59).
type listFilter struct {
	pg            page
	since, before int64
}

func (f *listFilter) keep(updated int64) bool {
	return (f.since == 0 || updated >= f.since) && (f.before == 0 || updated <= f.before)
}

// pageOf applies a page's marker and limit; an unknown marker is a 400.
func pageOf[T any](items []T, pg page, id func(T) string) ([]T, error) {
	if pg.marker != "" {
		i := slices.IndexFunc(items, func(it T) bool { return id(it) == pg.marker })
		if i < 0 {
			return nil, badRequest("Marker %s could not be found.", pg.marker)
		}
		items = items[i+1:]
	}
	if len(items) > pg.limit {
		items = items[:pg.limit]
	}
	return items, nil
}

// actionListFilter reads os-instance-actions' query (2.58+: Nova's query
// schema refuses other parameters).
func (q *request) actionListFilter() (*listFilter, error) {
	if !q.atLeast(58) {
		return &listFilter{pg: page{limit: maxLimit}}, nil
	}
	allowed := []string{"limit", "marker", "changes-since"}
	if q.atLeast(66) {
		allowed = append(allowed, "changes-before")
	}
	return q.listQuery(allowed)
}

// listQuery checks a list's query parameters against allowed and reads
// limit, marker, changes-since and changes-before.
func (q *request) listQuery(allowed []string) (*listFilter, error) {
	v := q.query()
	for _, k := range sortedKeys(v) {
		if !containsString(allowed, k) {
			return nil, badRequest("Additional properties are not allowed ('%s' was unexpected)", k)
		}
	}
	f := &listFilter{pg: page{limit: maxLimit, marker: v.Get("marker")}}
	if v.Has("limit") {
		s := v.Get("limit")
		n, err := strconv.Atoi(s)
		if err != nil || !digitsPattern.MatchString(s) || s == "" {
			return nil, badRequest("Invalid input for query parameters limit. Value: %s. '%s' does not match '^[0-9]*$'", s, s)
		}
		f.pg.limit = min(n, maxLimit)
	}
	for _, k := range []string{"changes-since", "changes-before"} {
		if !v.Has(k) {
			continue
		}
		t, err := parseTime(k, v.Get(k))
		if err != nil {
			return nil, err
		}
		if k == "changes-since" {
			f.since = t.UnixNano()
		} else {
			f.before = t.UnixNano()
		}
	}
	if f.since != 0 && f.before != 0 && f.since > f.before {
		return nil, badRequest("The value of changes-since must be less than or equal to changes-before.")
	}
	return f, nil
}
