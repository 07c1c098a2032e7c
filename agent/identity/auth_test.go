package identity

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/internal/authtoken"
	"github.com/stratus-cloud/stratus/structs"
)

var keystoneTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

func TestVersionDiscovery(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	for _, path := range []string{"/identity", "/identity/"} {
		r := e.do(t, "GET", path, "").want(t, http.StatusMultipleChoices)
		if get(r.body, "versions", "values", 0, "id") != "v3.14" ||
			get(r.body, "versions", "values", 0, "links", 0, "href") != e.http.URL+"/identity/v3/" ||
			get(r.body, "versions", "values", 0, "media-types", 0, "type") != "application/vnd.openstack.identity-v3+json" {
			t.Fatalf("%s: %s", path, r.raw)
		}
	}
	for _, path := range []string{"/identity/v3", "/identity/v3/"} {
		r := e.do(t, "GET", path, "").want(t, http.StatusOK)
		if get(r.body, "version", "status") != "stable" || get(r.body, "version", "links", 0, "rel") != "self" {
			t.Fatalf("%s: %s", path, r.raw)
		}
	}
}

func TestIssuePasswordTokenScopedByName(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	tok, r := e.issue(t, "admin", "admin", "admin")
	if !strings.HasPrefix(tok, authtoken.Prefix) || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("token %q, headers %v", tok, r.header)
	}
	body := r.body["token"].(map[string]any)
	if get(body, "methods", 0) != "password" || get(body, "user", "name") != "admin" ||
		get(body, "user", "domain", "id") != "default" || get(body, "user", "domain", "name") != "Default" ||
		get(body, "project", "name") != "admin" || get(body, "project", "domain", "id") != "default" ||
		get(body, "roles", 0, "name") != "admin" || get(body, "is_domain") != false {
		t.Fatalf("token body %s", r.raw)
	}
	if v, ok := get(body, "user").(map[string]any)["password_expires_at"]; !ok || v != nil {
		t.Fatalf("password_expires_at must be null: %s", r.raw)
	}
	issued, _ := body["issued_at"].(string)
	expires, _ := body["expires_at"].(string)
	if !keystoneTimeRE.MatchString(issued) || !keystoneTimeRE.MatchString(expires) {
		t.Fatalf("timestamps %q %q", issued, expires)
	}
	it, _ := time.Parse(time.RFC3339Nano, issued)
	et, _ := time.Parse(time.RFC3339Nano, expires)
	if et.Sub(it) != time.Hour {
		t.Fatalf("lifetime %s", et.Sub(it))
	}
	if ids, _ := body["audit_ids"].([]any); len(ids) != 1 || len(ids[0].(string)) != 22 {
		t.Fatalf("audit ids %v", body["audit_ids"])
	}
	// The catalog: compute, image and identity, three interfaces each,
	// at this agent's URL.
	urls := map[string]string{}
	for _, svc := range body["catalog"].([]any) {
		eps := get(svc, "endpoints").([]any)
		if len(eps) != 3 || get(eps[0], "region") != "RegionOne" || get(eps[0], "region_id") != "RegionOne" || get(svc, "id") == "" {
			t.Fatalf("catalog entry %v", svc)
		}
		for _, ep := range eps {
			if get(ep, "url") != get(eps[0], "url") || get(ep, "id") == "" {
				t.Fatalf("endpoints differ: %v", eps)
			}
		}
		urls[get(svc, "type").(string)+"/"+get(svc, "name").(string)] = get(eps[0], "url").(string)
	}
	if urls["compute/nova"] != e.http.URL+"/compute/v2.1" || urls["identity/keystone"] != e.http.URL+"/identity/v3" ||
		urls["image/glance"] != e.http.URL+"/image" || urls["network/neutron"] != e.http.URL+"/network" ||
		urls["volumev3/cinderv3"] != e.http.URL+"/volume/v3" || urls["block-storage/cinder"] != e.http.URL+"/volume/v3" || len(urls) != 6 {
		t.Fatalf("catalog urls %v", urls)
	}
	// What the token carries verifies on this agent.
	v, err := e.svc.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if !v.IsAdmin() || !v.HasRole("admin") || v.HasRole("member") || v.ProjectName != "admin" || v.UserName != "admin" {
		t.Fatalf("verified %+v", v)
	}

	// ?nocatalog leaves the catalog out.
	r = e.do(t, "POST", "/identity/v3/auth/tokens?nocatalog", passwordAuth("demo", "demo", "demo")).want(t, http.StatusCreated)
	if _, ok := get(r.body, "token").(map[string]any)["catalog"]; ok || get(r.body, "token", "roles", 0, "name") != "member" {
		t.Fatalf("nocatalog body %s", r.raw)
	}
}

func TestIssueUnscopedThenRescopeWithTokenMethod(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	id := userID(t, "demo")
	r := e.do(t, "POST", "/identity/v3/auth/tokens", `{"auth": {"identity": {"methods": ["password"],
		"password": {"user": {"id": "`+id+`", "password": "demo"}}}, "scope": "unscoped"}}`).want(t, http.StatusCreated)
	body := r.body["token"].(map[string]any)
	for _, key := range []string{"project", "roles", "catalog", "is_domain"} {
		if _, ok := body[key]; ok {
			t.Fatalf("unscoped token has %s: %s", key, r.raw)
		}
	}
	unscoped := r.header.Get("X-Subject-Token")

	var projectID string
	r = e.do(t, "GET", "/identity/v3/auth/projects", "", "X-Auth-Token: "+unscoped).want(t, http.StatusOK)
	if ps := r.body["projects"].([]any); len(ps) != 1 || get(ps[0], "name") != "demo" || get(r.body, "links", "self") != e.http.URL+"/identity/v3/auth/projects" {
		t.Fatalf("auth/projects %s", r.raw)
	} else {
		projectID = get(ps[0], "id").(string)
	}
	e.do(t, "GET", "/identity/v3/auth/catalog", "", "X-Auth-Token: "+unscoped).wantError(t, http.StatusForbidden, "Forbidden")

	r = e.do(t, "POST", "/identity/v3/auth/tokens", `{"auth": {"identity": {"methods": ["token"], "token": {"id": "`+unscoped+
		`"}}, "scope": {"project": {"id": "`+projectID+`"}}}}`).want(t, http.StatusCreated)
	scoped := r.body["token"].(map[string]any)
	if get(scoped, "methods", 0) != "token" || get(scoped, "project", "id") != projectID || get(scoped, "roles", 0, "name") != "member" {
		t.Fatalf("rescoped %s", r.raw)
	}
	if scoped["expires_at"] != body["expires_at"] || get(scoped, "audit_ids", 1) != get(body, "audit_ids", 0) {
		t.Fatalf("rescoped token must keep the expiry and chain the audit id: %v / %v", scoped, body)
	}
	tok := r.header.Get("X-Subject-Token")
	r = e.do(t, "GET", "/identity/v3/auth/catalog", "", "X-Auth-Token: "+tok).want(t, http.StatusOK)
	if len(r.body["catalog"].([]any)) != 6 {
		t.Fatalf("catalog %s", r.raw)
	}
	// demo has no role on admin: scoping there fails like bad credentials.
	e.do(t, "POST", "/identity/v3/auth/tokens", `{"auth": {"identity": {"methods": ["token"], "token": {"id": "`+unscoped+
		`"}}, "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}`).wantError(t, http.StatusUnauthorized, "Unauthorized")
}

func TestBadCredentialsLookAlike(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	wrong := e.do(t, "POST", "/identity/v3/auth/tokens", passwordAuth("admin", "nope", ""))
	unknown := e.do(t, "POST", "/identity/v3/auth/tokens", passwordAuth("ghost", "admin", ""))
	for _, r := range []*response{wrong, unknown} {
		r.wantError(t, http.StatusUnauthorized, "Unauthorized")
		if r.header.Get("WWW-Authenticate") != `Keystone uri="`+e.http.URL+`/identity"` || r.header.Get("X-Subject-Token") != "" {
			t.Fatalf("headers %v", r.header)
		}
	}
	if wrong.raw != unknown.raw {
		t.Fatalf("a wrong password and an unknown user answer differently:\n%s\n%s", wrong.raw, unknown.raw)
	}
	for name, body := range map[string]string{
		"unknown field": `{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "admin", "domain": {"id": "default"}, "password": "admin", "extra": 1}}}}}`,
		"no methods":    `{"auth": {"identity": {"methods": []}}}`,
		"bad scope":     `{"auth": {"identity": {"methods": ["password"], "password": {"user": {"id": "x", "password": "y"}}}, "scope": {"domain": {"id": "default"}}}}`,
		"not json":      `{"auth":`,
		"no domain":     `{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "admin", "password": "admin"}}}}}`,
	} {
		r := e.do(t, "POST", "/identity/v3/auth/tokens", body)
		if r.status != http.StatusBadRequest {
			t.Errorf("%s: status %d %s", name, r.status, r.raw)
			continue
		}
		r.wantError(t, http.StatusBadRequest, "Bad Request")
	}
	e.do(t, "POST", "/identity/v3/auth/tokens", `{"auth": {"identity": {"methods": ["token"], "token": {"id": "v1.garbage.sig"}}}}`).
		wantError(t, http.StatusUnauthorized, "Unauthorized")
	e.do(t, "POST", "/identity/v3/auth/tokens", `{"auth": {"identity": {"methods": ["totp"]}}}`).
		wantError(t, http.StatusUnauthorized, "Unauthorized")
}

func TestValidateAndRevoke(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	other := newEnv(t, nil) // a second agent
	admin := e.token(t, "admin", "admin")
	demo, _ := e.issue(t, "demo", "demo", "demo") // this test revokes it

	r := e.do(t, "GET", "/identity/v3/auth/tokens", "", "X-Auth-Token: "+admin, "X-Subject-Token: "+demo).want(t, http.StatusOK)
	if r.header.Get("X-Subject-Token") != demo || get(r.body, "token", "user", "name") != "demo" ||
		get(r.body, "token", "project", "name") != "demo" || get(r.body, "token", "catalog", 0, "type") != "compute" {
		t.Fatalf("validate %s", r.raw)
	}
	head := e.do(t, "HEAD", "/identity/v3/auth/tokens", "", "X-Auth-Token: "+demo, "X-Subject-Token: "+demo).want(t, http.StatusOK)
	if head.raw != "" {
		t.Fatalf("HEAD answered a body %q", head.raw)
	}
	// A member may not look at someone else's token.
	e.do(t, "GET", "/identity/v3/auth/tokens", "", "X-Auth-Token: "+demo, "X-Subject-Token: "+admin).wantError(t, http.StatusForbidden, "Forbidden")
	e.do(t, "GET", "/identity/v3/auth/tokens", "", "X-Subject-Token: "+demo).wantError(t, http.StatusUnauthorized, "Unauthorized")

	if _, err := other.svc.Verify(demo); err != nil {
		t.Fatalf("the other agent refuses a valid token: %v", err)
	}
	e.do(t, "DELETE", "/identity/v3/auth/tokens", "", "X-Auth-Token: "+demo, "X-Subject-Token: "+demo).want(t, http.StatusNoContent)
	if _, err := e.svc.Verify(demo); structs.KindOf(err) != structs.KindPermission {
		t.Fatalf("revoked token verifies on the agent that revoked it: %v", err)
	}
	waitFor(t, "the other agent to learn of the revocation", func() error {
		if _, err := other.svc.Verify(demo); err == nil {
			return errors.New("still valid")
		}
		return nil
	})
	e.do(t, "GET", "/identity/v3/auth/tokens", "", "X-Auth-Token: "+admin, "X-Subject-Token: "+demo).wantError(t, http.StatusNotFound, "Not Found")
	if _, err := e.svc.Verify(admin); err != nil {
		t.Fatalf("revoking one token revoked another: %v", err)
	}
}

func TestExpiredToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.TokenTTL = 50 * time.Millisecond })
	tok, _ := e.issue(t, "demo", "demo", "")
	time.Sleep(100 * time.Millisecond)
	_, err := e.svc.Verify(tok)
	var se *structs.Error
	if !errors.As(err, &se) || se.Kind != structs.KindPermission || !strings.Contains(se.Msg, "expired") {
		t.Fatalf("expired token: %v", err)
	}
	if _, err := New(Config{RPC: srv, TokenTTL: 48 * time.Hour}); err == nil {
		t.Fatal("a TTL over the maximum was accepted")
	}
}

func TestForgedTokensFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	tok := e.token(t, "demo", "demo")
	parts := strings.Split(strings.TrimPrefix(tok, authtoken.Prefix), ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not v2.<kid>.<body>.<sig>", tok)
	}
	kid, body, sig := parts[0], parts[1], parts[2]
	raw, _ := base64.RawURLEncoding.DecodeString(body)
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	p["rn"], p["ri"] = []string{"admin"}, []string{"x"}
	elevated, _ := json.Marshal(p)
	// A key pair of the forger's own, as an agent that could sign would
	// have: its tokens name the real key id but cannot carry its
	// signature.
	_, forgerKey, err := authtoken.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	v, err := e.svc.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	adminClaims := &structs.TokenClaims{UserID: v.UserID, UserName: v.UserName, DomainID: v.DomainID,
		ProjectID: v.ProjectID, Roles: []string{"admin"}, RoleIDs: []string{"x"}, Methods: []string{"password"},
		IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour), AuditID: authtoken.NewAuditID()}
	selfSigned, err := authtoken.Sign(kid, forgerKey, adminClaims)
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(sig)
	flipped[0] ^= 'A' ^ 'B'
	for name, forged := range map[string]string{
		"elevated roles":   authtoken.Prefix + kid + "." + base64.RawURLEncoding.EncodeToString(elevated) + "." + sig,
		"unknown key":      authtoken.Prefix + "no-such-key." + body + "." + sig,
		"bad signature":    authtoken.Prefix + kid + "." + body + "." + string(flipped),
		"no signature":     authtoken.Prefix + kid + "." + body,
		"old hmac version": "v1." + body + "." + sig,
		"self-signed":      selfSigned,
		"garbage":          "garbage",
		"empty":            "",
	} {
		_, err := e.svc.Verify(forged)
		var se *structs.Error
		if !errors.As(err, &se) || se.Kind != structs.KindPermission {
			t.Errorf("%s: %v", name, err)
		}
		if name == "self-signed" {
			// Nor do the servers exchange it for a genuine token.
			r := e.do(t, "POST", "/identity/v3/auth/tokens", `{"auth": {"identity": {"methods": ["token"], "token": {"id": "`+forged+`"}}}}`)
			r.wantError(t, http.StatusUnauthorized, "Unauthorized")
			var resp structs.TokenIssueResponse
			if err := srv.RPC("Identity.IssueToken", &structs.TokenIssueRequest{Method: "token", Token: forged}, &resp); structs.KindOf(err) != structs.KindPermission {
				t.Errorf("the servers exchanged a self-signed token: %v", err)
			}
		}
	}
	if _, err := e.svc.Verify(tok); err != nil {
		t.Fatalf("the genuine token fails: %v", err)
	}
}

func TestSigningKeysCarryNoPrivateKey(t *testing.T) {
	t.Parallel()
	var resp structs.IdentityListResponse
	if err := srv.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindSigningKeys}, &resp); err != nil {
		t.Fatal(err)
	}
	if len(resp.SigningKeys) == 0 {
		t.Fatal("no signing keys listed")
	}
	for _, k := range resp.SigningKeys {
		if len(k.Secret) != 0 || len(k.PublicKey) != 32 {
			t.Fatalf("key %s lists a private key (%d bytes) or no public key (%d bytes)", k.ID, len(k.Secret), len(k.PublicKey))
		}
	}
}

func TestUnmatchedRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.do(t, "GET", "/identity/v3/nothing", "").wantError(t, http.StatusNotFound, "Not Found")
	r := e.do(t, "POST", "/identity/v3/projects/abc", "{}")
	r.wantError(t, http.StatusMethodNotAllowed, "Method Not Allowed")
	if allow := r.header.Get("Allow"); !strings.Contains(allow, "PATCH") || !strings.Contains(allow, "DELETE") {
		t.Fatalf("Allow %q", allow)
	}
}
