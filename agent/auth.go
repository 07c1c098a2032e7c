package agent

import (
	"context"
	"net/http"
	"strings"

	"github.com/stratus-cloud/stratus/policy"
	"github.com/stratus-cloud/stratus/structs"
)

type subjectKey struct{}

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

// authorize applies a native route's access level. With ACLs off every
// request passes unrestricted (dev mode's open API). With them on, any
// level above Public needs a token the identity service verifies (401
// otherwise) whose roles reach the level (403 otherwise); the verified
// subject rides in the request's context for handlers that scope
// answers to the caller's project.
func (a *Agent) authorize(r *http.Request, level policy.Access) (*http.Request, error) {
	if !a.config.ACLEnabled() || level == policy.Public {
		return r, nil
	}
	raw := requestToken(r)
	if raw == "" {
		return r, structs.Errorf(structs.KindUnauthenticated, "this API requires a token: log in with `cloudctl login` or set CLOUDCTL_TOKEN")
	}
	if a.identity == nil {
		return r, structs.Errorf(structs.KindUnavailable, "the identity service is not running on this agent")
	}
	tok, err := a.identity.Verify(raw)
	if err != nil || tok == nil {
		return r, structs.Errorf(structs.KindUnauthenticated, "%s", structs.Message(err))
	}
	subj := &policy.Subject{UserID: tok.UserID, ProjectID: tok.ProjectID, Roles: tok.Roles}
	if !level.Allows(subj) {
		if subj.ProjectID == "" {
			return r, structs.Errorf(structs.KindPermission, "this API needs a project-scoped token")
		}
		return r, structs.Errorf(structs.KindPermission, "this API needs the %s role", level)
	}
	return r.WithContext(context.WithValue(r.Context(), subjectKey{}, subj)), nil
}

// subjectOf returns the verified caller of a request, nil when ACLs are
// off or the route is public.
func subjectOf(r *http.Request) *policy.Subject {
	s, _ := r.Context().Value(subjectKey{}).(*policy.Subject)
	return s
}

// restrictedProject is the project a request is confined to: the
// caller's, unless it is an admin or ACLs are off ("" then).
func restrictedProject(r *http.Request) string {
	s := subjectOf(r)
	if s == nil || s.IsAdmin() {
		return ""
	}
	return s.ProjectID
}

// checkInstanceScope hides other projects' instances from a confined
// caller: they answer 404, as if they did not exist, never 403.
func (a *Agent) checkInstanceScope(r *http.Request, id string) error {
	project := restrictedProject(r)
	if project == "" {
		return nil
	}
	var out structs.SingleInstanceResponse
	args := structs.InstanceSpecificRequest{InstanceID: id}
	args.AuthToken = requestToken(r)
	if err := a.rpc.RPC("Instance.Get", &args, &out); err != nil {
		return err
	}
	if out.Instance == nil || out.Instance.ProjectID != project {
		return notFound("instance", id)
	}
	return nil
}

// caller is who a native request acts as, in the fields the servers'
// task and delete endpoints take: an admin (locks and admin-only
// operations allowed) when ACLs are off or the token is an admin's,
// else a member of its project.
func caller(r *http.Request) (projectID, userID string, admin bool) {
	s := subjectOf(r)
	if s == nil {
		return "", "", true
	}
	return s.ProjectID, s.UserID, s.IsAdmin()
}
