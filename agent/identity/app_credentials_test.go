package identity

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// appCredAuthByID is a POST /v3/auth/tokens body of method
// application_credential, by id.
func appCredAuthByID(id, secret string) string {
	return `{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"id": "` + id +
		`", "secret": "` + secret + `"}}}}`
}

// createAppCred creates an application credential of the token's user
// and returns the answer's document.
func (e *env) createAppCred(t *testing.T, tok, userID, body string) map[string]any {
	t.Helper()
	r := e.do(t, "POST", "/identity/v3/users/"+userID+"/application_credentials", body, "X-Auth-Token: "+tok).want(t, http.StatusCreated)
	ac, _ := r.body["application_credential"].(map[string]any)
	if ac == nil {
		t.Fatalf("create answered %s", r.raw)
	}
	return ac
}

func TestAppCredLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	demoID := userID(t, "demo")
	tok := e.token(t, "demo", "demo")
	demo := "X-Auth-Token: " + tok
	base := "/identity/v3/users/" + demoID + "/application_credentials"

	ac := e.createAppCred(t, tok, demoID, `{"application_credential": {"name": "ci-lifecycle", "description": "for CI"}}`)
	id, _ := ac["id"].(string)
	secret, _ := ac["secret"].(string)
	if !keystoneIDRE.MatchString(id) || len(secret) < 64 || ac["user_id"] != demoID || ac["unrestricted"] != false ||
		ac["expires_at"] != nil || ac["description"] != "for CI" || get(ac, "roles", 0, "name") != "member" ||
		get(ac, "links", "self") != e.http.URL+base+"/"+id || ac["project_id"] == "" {
		t.Fatalf("created %v", ac)
	}
	e.do(t, "POST", base, `{"application_credential": {"name": "ci-lifecycle"}}`, demo).wantError(t, http.StatusConflict, "Conflict")

	// The secret is answered once.
	r := e.do(t, "GET", base+"/"+id, "", demo).want(t, http.StatusOK)
	if get(r.body, "application_credential", "name") != "ci-lifecycle" || get(r.body, "application_credential", "secret") != nil {
		t.Fatalf("show %s", r.raw)
	}
	r = e.do(t, "GET", base+"?name=ci-lifecycle", "", demo).want(t, http.StatusOK)
	if list, _ := r.body["application_credentials"].([]any); len(list) != 1 || get(list, 0, "id") != id || get(list, 0, "secret") != nil {
		t.Fatalf("list by name %s", r.raw)
	}
	r = e.do(t, "GET", base+"?name=no-such", "", demo).want(t, http.StatusOK)
	if list, _ := r.body["application_credentials"].([]any); len(list) != 0 {
		t.Fatalf("list by another name %s", r.raw)
	}

	// Authenticating by id answers a token of the credential's project
	// and roles.
	r = e.do(t, "POST", "/identity/v3/auth/tokens", appCredAuthByID(id, secret)).want(t, http.StatusCreated)
	acTok := r.header.Get("X-Subject-Token")
	if get(r.body, "token", "methods", 0) != "application_credential" || get(r.body, "token", "project", "name") != "demo" ||
		get(r.body, "token", "roles", 0, "name") != "member" || get(r.body, "token", "application_credential", "id") != id ||
		get(r.body, "token", "application_credential", "restricted") != true || get(r.body, "token", "user", "id") != demoID {
		t.Fatalf("token %s", r.raw)
	}
	// By name and user.
	byName := `{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"name": "ci-lifecycle",
		"secret": "` + secret + `", "user": {"name": "demo", "domain": {"id": "default"}}}}}}`
	e.do(t, "POST", "/identity/v3/auth/tokens", byName).want(t, http.StatusCreated)
	e.do(t, "POST", "/identity/v3/auth/tokens", appCredAuthByID(id, secret+"x")).wantError(t, http.StatusUnauthorized, "Unauthorized")
	e.do(t, "POST", "/identity/v3/auth/tokens", appCredAuthByID("nope", secret)).wantError(t, http.StatusUnauthorized, "Unauthorized")
	// The token works on the API, but a restricted credential's token
	// manages no application credentials, nor is it exchanged for one
	// of another scope.
	e.do(t, "GET", "/identity/v3/auth/projects", "", "X-Auth-Token: "+acTok).want(t, http.StatusOK)
	e.do(t, "POST", base, `{"application_credential": {"name": "child"}}`, "X-Auth-Token: "+acTok).wantError(t, http.StatusForbidden, "Forbidden")
	e.do(t, "DELETE", base+"/"+id, "", "X-Auth-Token: "+acTok).wantError(t, http.StatusForbidden, "Forbidden")
	exchange := `{"auth": {"identity": {"methods": ["token"], "token": {"id": "` + acTok + `"}},
		"scope": {"project": {"name": "demo", "domain": {"id": "default"}}}}}`
	e.do(t, "POST", "/identity/v3/auth/tokens", exchange).wantError(t, http.StatusUnauthorized, "Unauthorized")

	// Deleting it refuses the secret and revokes its tokens.
	e.do(t, "DELETE", base+"/"+id, "", demo).want(t, http.StatusNoContent)
	e.do(t, "GET", base+"/"+id, "", demo).wantError(t, http.StatusNotFound, "Not Found")
	e.do(t, "DELETE", base+"/"+id, "", demo).wantError(t, http.StatusNotFound, "Not Found")
	e.do(t, "POST", "/identity/v3/auth/tokens", appCredAuthByID(id, secret)).wantError(t, http.StatusUnauthorized, "Unauthorized")
	waitFor(t, "the credential's token to be revoked", func() error {
		if r := e.do(t, "GET", "/identity/v3/auth/projects", "", "X-Auth-Token: "+acTok); r.status != http.StatusUnauthorized {
			return fmt.Errorf("status %d", r.status)
		}
		return nil
	})
	// The user's own token is not.
	e.do(t, "GET", "/identity/v3/auth/projects", "", demo).want(t, http.StatusOK)
}

func TestAppCredBadRequests(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	demoID, adminID := userID(t, "demo"), userID(t, "admin")
	demo := "X-Auth-Token: " + e.token(t, "demo", "demo")
	base := "/identity/v3/users/" + demoID + "/application_credentials"
	past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	for _, body := range []string{
		`{"application_credential": {}}`,
		`{"application_credential": {"name": " "}}`,
		`{"application_credential": {"name": "x", "expires_at": "` + past + `"}}`,
		`{"application_credential": {"name": "x", "expires_at": "tomorrow"}}`,
		`{"application_credential": {"name": "x", "roles": [{"name": "admin"}]}}`,
		`{"application_credential": {"name": "x", "access_rules": [{"path": "/v2.1/servers", "method": "GET", "service": "compute"}]}}`,
		`{"application_credential": {"name": "x", "colour": "red"}}`,
		`{"application_credential": {"name": "x", "secret": ""}}`,
		`{}`,
	} {
		if r := e.do(t, "POST", base, body, demo); r.status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", body, r.status, r.raw)
		}
	}
	// Another user's: not even an admin creates one for someone else;
	// a member neither reads nor lists an admin's.
	admin := "X-Auth-Token: " + e.token(t, "admin", "admin")
	e.do(t, "POST", base, `{"application_credential": {"name": "x"}}`, admin).wantError(t, http.StatusForbidden, "Forbidden")
	e.do(t, "GET", "/identity/v3/users/"+adminID+"/application_credentials", "", demo).wantError(t, http.StatusForbidden, "Forbidden")
	e.do(t, "GET", base, "").wantError(t, http.StatusUnauthorized, "Unauthorized")
	// An unscoped token has no project to delegate.
	unscoped, _ := e.issue(t, "demo", "demo", "")
	e.do(t, "POST", base, `{"application_credential": {"name": "x"}}`, "X-Auth-Token: "+unscoped).wantError(t, http.StatusForbidden, "Forbidden")
	// The method's own bad input.
	for _, body := range []string{
		`{"auth": {"identity": {"methods": ["application_credential"]}}}`,
		`{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"id": "x"}}}}`,
		`{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"name": "x", "secret": "s"}}}}`,
	} {
		e.do(t, "POST", "/identity/v3/auth/tokens", body).wantError(t, http.StatusBadRequest, "Bad Request")
	}
	scoped := `{"auth": {"identity": {"methods": ["application_credential"], "application_credential": {"id": "x", "secret": "s"}},
		"scope": {"project": {"name": "demo", "domain": {"id": "default"}}}}}`
	e.do(t, "POST", "/identity/v3/auth/tokens", scoped).wantError(t, http.StatusUnauthorized, "Unauthorized")
}

func TestAppCredSecretRolesAndAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	adminID, demoID := userID(t, "admin"), userID(t, "demo")
	tok := e.token(t, "admin", "admin")
	// A client's secret, a role by name, unrestricted.
	ac := e.createAppCred(t, tok, adminID, `{"application_credential": {"name": "tf-admin", "secret": "`+strings.Repeat("s3cr3t", 20)+`",
		"roles": [{"name": "admin"}], "unrestricted": true}}`)
	if ac["secret"] != strings.Repeat("s3cr3t", 20) || ac["unrestricted"] != true || get(ac, "roles", 0, "name") != "admin" {
		t.Fatalf("created %v", ac)
	}
	id, _ := ac["id"].(string)
	r := e.do(t, "POST", "/identity/v3/auth/tokens", appCredAuthByID(id, strings.Repeat("s3cr3t", 20))).want(t, http.StatusCreated)
	acTok := r.header.Get("X-Subject-Token")
	if get(r.body, "token", "application_credential", "restricted") != false || get(r.body, "token", "catalog") == nil {
		t.Fatalf("token %s", r.raw)
	}
	// Only the first 72 bytes reach bcrypt: the whole secret counts.
	e.do(t, "POST", "/identity/v3/auth/tokens", appCredAuthByID(id, strings.Repeat("s3cr3t", 19)+"s3cr3u")).wantError(t, http.StatusUnauthorized, "Unauthorized")
	// An unrestricted credential's token creates another.
	child := e.createAppCred(t, acTok, adminID, `{"application_credential": {"name": "tf-admin-child"}}`)
	// An admin lists and deletes another user's.
	demoTok := e.token(t, "demo", "demo")
	d := e.createAppCred(t, demoTok, demoID, `{"application_credential": {"name": "seen-by-admin"}}`)
	admin := "X-Auth-Token: " + tok
	r = e.do(t, "GET", "/identity/v3/users/"+demoID+"/application_credentials", "", admin).want(t, http.StatusOK)
	if list, _ := r.body["application_credentials"].([]any); len(list) == 0 {
		t.Fatalf("admin's list of demo's %s", r.raw)
	}
	e.do(t, "DELETE", "/identity/v3/users/"+demoID+"/application_credentials/"+d["id"].(string), "", admin).want(t, http.StatusNoContent)
	// Another user's credential id under one's own path is not found.
	e.do(t, "GET", "/identity/v3/users/"+demoID+"/application_credentials/"+id, "", admin).wantError(t, http.StatusNotFound, "Not Found")
	for _, c := range []string{child["id"].(string), id} {
		e.do(t, "DELETE", "/identity/v3/users/"+adminID+"/application_credentials/"+c, "", admin).want(t, http.StatusNoContent)
	}
}

func TestAppCredExpires(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	demoID := userID(t, "demo")
	expires := time.Now().Add(2 * time.Second).UTC()
	ac := e.createAppCred(t, e.token(t, "demo", "demo"), demoID,
		`{"application_credential": {"name": "short-lived", "expires_at": "`+expires.Format("2006-01-02T15:04:05.999999")+`"}}`)
	if ac["expires_at"] != expires.Format(appCredTime) {
		t.Fatalf("expires_at %v, want %s", ac["expires_at"], expires.Format(appCredTime))
	}
	id, secret := ac["id"].(string), ac["secret"].(string)
	r := e.do(t, "POST", "/identity/v3/auth/tokens", appCredAuthByID(id, secret))
	if r.status == http.StatusCreated {
		// The token never outlives its credential.
		at, err := time.Parse(time.RFC3339Nano, get(r.body, "token", "expires_at").(string))
		if err != nil || at.After(expires) {
			t.Fatalf("token expires at %v (%v), the credential at %v", at, err, expires)
		}
	} else if time.Now().Before(expires) {
		t.Fatalf("auth before expiry: %d %s", r.status, r.raw)
	}
	waitFor(t, "the credential to expire", func() error {
		if r := e.do(t, "POST", "/identity/v3/auth/tokens", appCredAuthByID(id, secret)); r.status != http.StatusUnauthorized {
			return fmt.Errorf("status %d", r.status)
		}
		return nil
	})
	e.do(t, "DELETE", "/identity/v3/users/"+demoID+"/application_credentials/"+id, "", "X-Auth-Token: "+e.token(t, "demo", "demo")).want(t, http.StatusNoContent)
}
