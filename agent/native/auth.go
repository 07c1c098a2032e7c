package native

import (
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

// requestToken is the identity token a request carries: the native
// client's X-Stratus-Token, OpenStack's X-Auth-Token or an
// "Authorization: Bearer" header, in that order.
func requestToken(r *http.Request) string {
	if t := r.Header.Get("X-Stratus-Token"); t != "" {
		return t
	}
	if t := r.Header.Get("X-Auth-Token"); t != "" {
		return t
	}
	if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(t)
	}
	return ""
}

// authorize applies a route's access level to a request's token. With
// ACLs off every request passes unrestricted (dev mode's open API). With
// them on, any level above Public needs a token the identity service
// verifies (401 otherwise) whose roles reach the level (403 otherwise);
// the verified subject is returned for handlers that scope answers to
// the caller's project.
func (a *API) authorize(raw string, level policy.Access) (*policy.Subject, error) {
	if level == policy.Public {
		return nil, nil
	}
	if !a.cfg.ACLEnabled {
		if raw == "" && a.cfg.Anonymous != nil {
			return a.cfg.Anonymous()
		}
		return nil, nil
	}
	if raw == "" {
		return nil, structs.Errorf(structs.KindUnauthenticated, "this API requires a token: log in with `cloudctl login` or set CLOUDCTL_TOKEN")
	}
	if a.cfg.Verifier == nil {
		return nil, structs.Errorf(structs.KindUnavailable, "the identity service is not running on this agent")
	}
	tok, err := a.cfg.Verifier.Verify(raw)
	if err != nil || tok == nil {
		return nil, structs.Errorf(structs.KindUnauthenticated, "%s", structs.Message(err))
	}
	subj := &policy.Subject{UserID: tok.UserID, ProjectID: tok.ProjectID, Roles: tok.Roles}
	if !level.Allows(subj) {
		if subj.ProjectID == "" {
			return nil, structs.Errorf(structs.KindPermission, "this API needs a project-scoped token")
		}
		return nil, structs.Errorf(structs.KindPermission, "this API needs the %s role", level)
	}
	return subj, nil
}

// restrictedProject is the project a request is confined to: the
// caller's, unless it is an admin or ACLs are off ("" then).
func (q *request) restrictedProject() string {
	if q.subject == nil || q.subject.IsAdmin() {
		return ""
	}
	return q.subject.ProjectID
}

// checkInstanceScope hides other projects' instances from a confined
// caller: they answer 404, as if they did not exist, never 403.
func (a *API) checkInstanceScope(q *request, id string) error {
	project := q.restrictedProject()
	if project == "" {
		return nil
	}
	var out structs.SingleInstanceResponse
	if err := q.rpc.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &out); err != nil {
		return err
	}
	if out.Instance == nil || out.Instance.ProjectID != project {
		return notFound("instance", id)
	}
	return nil
}

// caller is who a request acts as, in the fields the servers' task and
// delete endpoints take: an admin (locks and admin-only operations
// allowed) when ACLs are off or the token is an admin's, else a member
// of its project.
func (q *request) caller() (projectID, userID string, admin bool) {
	if q.subject == nil {
		return "", "", true
	}
	return q.subject.ProjectID, q.subject.UserID, q.subject.IsAdmin()
}
