package identity

import (
	"errors"
	"net/http"
	"regexp"
	"testing"
)

var keystoneIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestAdminAPIsNeedTheAdminRole(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	member := "X-Auth-Token: " + e.token(t, "demo", "demo")
	calls := []struct{ method, path, body string }{
		{"GET", "/identity/v3/projects", ""},
		{"POST", "/identity/v3/projects", `{"project": {"name": "sneaky"}}`},
		{"DELETE", "/identity/v3/projects/x", ""},
		{"GET", "/identity/v3/users", ""},
		{"POST", "/identity/v3/users", `{"user": {"name": "sneaky"}}`},
		{"GET", "/identity/v3/users/" + userID(t, "admin"), ""},
		{"GET", "/identity/v3/roles", ""},
		{"POST", "/identity/v3/roles", `{"role": {"name": "sneaky"}}`},
		{"PUT", "/identity/v3/projects/p/users/u/roles/r", ""},
		{"GET", "/identity/v3/role_assignments", ""},
		{"GET", "/identity/v3/domains", ""},
		{"GET", "/identity/v3/domains/default", ""},
	}
	for _, c := range calls {
		r := e.do(t, c.method, c.path, c.body, member)
		if r.status != http.StatusForbidden {
			t.Errorf("%s %s as a member: %d %s", c.method, c.path, r.status, r.raw)
			continue
		}
		r.wantError(t, http.StatusForbidden, "Forbidden")
		e.do(t, c.method, c.path, c.body).wantError(t, http.StatusUnauthorized, "Unauthorized")
	}
	// A user reads itself.
	r := e.do(t, "GET", "/identity/v3/users/"+userID(t, "demo"), "", member).want(t, http.StatusOK)
	if get(r.body, "user", "name") != "demo" {
		t.Fatalf("self %s", r.raw)
	}
}

func TestAdminLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	admin := "X-Auth-Token: " + e.token(t, "admin", "admin")

	// Projects.
	r := e.do(t, "POST", "/identity/v3/projects", `{"project": {"name": "proj-x", "description": "first",
		"domain_id": "default", "enabled": true, "is_domain": false, "options": {}}}`, admin).want(t, http.StatusCreated)
	pid, _ := get(r.body, "project", "id").(string)
	if !keystoneIDRE.MatchString(pid) || get(r.body, "project", "parent_id") != "default" ||
		get(r.body, "project", "links", "self") != e.http.URL+"/identity/v3/projects/"+pid || get(r.body, "project", "enabled") != true {
		t.Fatalf("created project %s", r.raw)
	}
	e.do(t, "POST", "/identity/v3/projects", `{"project": {"name": "proj-x"}}`, admin).wantError(t, http.StatusConflict, "Conflict")
	e.do(t, "POST", "/identity/v3/projects", `{"project": {"name": "y", "colour": "red"}}`, admin).wantError(t, http.StatusBadRequest, "Bad Request")
	e.do(t, "POST", "/identity/v3/projects", `{"project": {"name": "y", "domain_id": "elsewhere"}}`, admin).wantError(t, http.StatusNotFound, "Not Found")
	r = e.do(t, "GET", "/identity/v3/projects?name=proj-x", "", admin).want(t, http.StatusOK)
	if ps := r.body["projects"].([]any); len(ps) != 1 || get(ps[0], "id") != pid || get(r.body, "links", "next") != nil {
		t.Fatalf("list by name %s", r.raw)
	}
	r = e.do(t, "PATCH", "/identity/v3/projects/"+pid, `{"project": {"description": "second"}}`, admin).want(t, http.StatusOK)
	if get(r.body, "project", "name") != "proj-x" || get(r.body, "project", "description") != "second" {
		t.Fatalf("patched %s", r.raw)
	}

	// A user, a role, and a grant.
	r = e.do(t, "POST", "/identity/v3/users", `{"user": {"name": "alice", "password": "pw-one", "default_project_id": "`+pid+
		`", "email": "alice@example.com", "enabled": true}}`, admin).want(t, http.StatusCreated)
	uid, _ := get(r.body, "user", "id").(string)
	if !keystoneIDRE.MatchString(uid) || get(r.body, "user", "email") != "alice@example.com" || get(r.body, "user", "password") != nil {
		t.Fatalf("created user %s", r.raw)
	}
	r = e.do(t, "POST", "/identity/v3/roles", `{"role": {"name": "dev-x", "description": "developers"}}`, admin).want(t, http.StatusCreated)
	rid, _ := get(r.body, "role", "id").(string)
	grant := "/identity/v3/projects/" + pid + "/users/" + uid + "/roles/" + rid
	e.do(t, "HEAD", grant, "", admin).want(t, http.StatusNotFound)
	e.do(t, "PUT", grant, "", admin).want(t, http.StatusNoContent)
	e.do(t, "HEAD", grant, "", admin).want(t, http.StatusNoContent)
	e.do(t, "PUT", "/identity/v3/projects/"+pid+"/users/"+uid+"/roles/nope", "", admin).wantError(t, http.StatusNotFound, "Not Found")
	r = e.do(t, "GET", "/identity/v3/projects/"+pid+"/users/"+uid+"/roles", "", admin).want(t, http.StatusOK)
	if rs := r.body["roles"].([]any); len(rs) != 1 || get(rs[0], "name") != "dev-x" {
		t.Fatalf("grants %s", r.raw)
	}
	r = e.do(t, "GET", "/identity/v3/role_assignments?user.id="+uid+"&include_names", "", admin).want(t, http.StatusOK)
	if as := r.body["role_assignments"].([]any); len(as) != 1 || get(as[0], "role", "name") != "dev-x" ||
		get(as[0], "scope", "project", "name") != "proj-x" || get(as[0], "user", "domain", "id") != "default" ||
		get(as[0], "links", "assignment") != e.http.URL+grant {
		t.Fatalf("assignments %s", r.raw)
	}
	r = e.do(t, "GET", "/identity/v3/role_assignments?scope.project.id="+pid, "", admin).want(t, http.StatusOK)
	if as := r.body["role_assignments"].([]any); len(as) != 1 || get(as[0], "user", "id") != uid || get(as[0], "user", "name") != nil {
		t.Fatalf("assignments by project %s", r.raw)
	}

	// The new user works; losing the grant revokes its scoped token.
	alice, r := e.issue(t, "alice", "pw-one", "proj-x")
	if get(r.body, "token", "roles", 0, "name") != "dev-x" {
		t.Fatalf("alice's token %s", r.raw)
	}
	e.do(t, "DELETE", grant, "", admin).want(t, http.StatusNoContent)
	e.do(t, "DELETE", grant, "", admin).wantError(t, http.StatusNotFound, "Not Found")
	waitFor(t, "the token to lose its grant", func() error {
		if _, err := e.svc.Verify(alice); err == nil {
			return errors.New("still valid")
		}
		return nil
	})

	// Passwords: an admin sets one; the user changes it, proving it.
	e.do(t, "PATCH", "/identity/v3/users/"+uid, `{"user": {"password": "pw-two"}}`, admin).want(t, http.StatusOK)
	alice, _ = e.issue(t, "alice", "pw-two", "")
	self := "X-Auth-Token: " + alice
	e.do(t, "GET", "/identity/v3/users/"+uid, "", self).want(t, http.StatusOK)
	e.do(t, "POST", "/identity/v3/users/"+uid+"/password", `{"user": {"password": "pw-3", "original_password": "wrong"}}`, self).
		wantError(t, http.StatusUnauthorized, "Unauthorized")
	e.do(t, "POST", "/identity/v3/users/"+uid+"/password", `{"user": {"password": "pw-3", "original_password": "pw-two"}}`, self).
		want(t, http.StatusNoContent)
	waitFor(t, "the password change to revoke the token", func() error {
		if _, err := e.svc.Verify(alice); err == nil {
			return errors.New("still valid")
		}
		return nil
	})

	// Domains: the one.
	r = e.do(t, "GET", "/identity/v3/domains?name=Default", "", admin).want(t, http.StatusOK)
	if ds := r.body["domains"].([]any); len(ds) != 1 || get(ds[0], "id") != "default" {
		t.Fatalf("domains %s", r.raw)
	}
	e.do(t, "GET", "/identity/v3/domains/default", "", admin).want(t, http.StatusOK)
	e.do(t, "GET", "/identity/v3/domains/other", "", admin).wantError(t, http.StatusNotFound, "Not Found")

	// Deletes.
	for _, path := range []string{"/identity/v3/users/" + uid, "/identity/v3/roles/" + rid, "/identity/v3/projects/" + pid} {
		e.do(t, "DELETE", path, "", admin).want(t, http.StatusNoContent)
		r := e.do(t, "GET", path, "", admin)
		r.wantError(t, http.StatusNotFound, "Not Found")
		if msg := get(r.body, "error", "message"); msg == "" {
			t.Fatalf("404 without a message: %s", r.raw)
		}
	}
	r = e.do(t, "GET", "/identity/v3/roles?name=dev-x", "", admin).want(t, http.StatusOK)
	if rs := r.body["roles"].([]any); len(rs) != 0 {
		t.Fatalf("deleted role still listed: %s", r.raw)
	}
}
