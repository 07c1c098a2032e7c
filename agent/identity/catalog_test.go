package identity

import (
	"net/http"
	"testing"
)

// TestCatalogResources: services, endpoints and regions are the token
// catalog's, read-only, with Keystone's views, filters and policy.
func TestCatalogResources(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	admin := "X-Auth-Token: " + e.token(t, "admin", "admin")
	member := "X-Auth-Token: " + e.token(t, "demo", "demo")

	// The token's catalog is what the resources list.
	_, tr := e.issue(t, "admin", "admin", "admin")
	catalog := get(tr.body, "token", "catalog").([]any)

	r := e.do(t, "GET", "/identity/v3/services", "", admin).want(t, http.StatusOK)
	services := r.body["services"].([]any)
	if len(services) != len(catalog) {
		t.Fatalf("services %s, catalog has %d", r.raw, len(catalog))
	}
	byType := map[string]string{}
	for i, svc := range services {
		if get(svc, "id") != get(catalog[i], "id") || get(svc, "type") != get(catalog[i], "type") || get(svc, "enabled") != true {
			t.Errorf("service %d: %v, catalog %v", i, svc, catalog[i])
		}
		byType[get(svc, "type").(string)] = get(svc, "id").(string)
	}
	computeID := byType["compute"]
	r = e.do(t, "GET", "/identity/v3/services?type=compute", "", admin).want(t, http.StatusOK)
	if s := r.body["services"].([]any); len(s) != 1 || get(s[0], "name") != "nova" {
		t.Errorf("services?type=compute %s", r.raw)
	}
	r = e.do(t, "GET", "/identity/v3/services/"+computeID, "", admin).want(t, http.StatusOK)
	if get(r.body, "service", "type") != "compute" {
		t.Errorf("service %s", r.raw)
	}
	e.do(t, "GET", "/identity/v3/services/nope", "", admin).wantError(t, http.StatusNotFound, "Not Found")

	r = e.do(t, "GET", "/identity/v3/endpoints", "", admin).want(t, http.StatusOK)
	if n := len(r.body["endpoints"].([]any)); n != 3*len(catalog) {
		t.Errorf("%d endpoints, want 3 per service: %s", n, r.raw)
	}
	r = e.do(t, "GET", "/identity/v3/endpoints?interface=public&service_id="+computeID, "", admin).want(t, http.StatusOK)
	eps := r.body["endpoints"].([]any)
	if len(eps) != 1 || get(eps[0], "interface") != "public" || get(eps[0], "service_id") != computeID {
		t.Fatalf("public compute endpoint %s", r.raw)
	}
	want := get(catalog[0], "endpoints").([]any)[0]
	if get(eps[0], "url") != get(want, "url") || get(eps[0], "id") != get(want, "id") {
		t.Errorf("endpoint %v, catalog's %v", eps[0], want)
	}
	e.do(t, "GET", "/identity/v3/endpoints/"+get(eps[0], "id").(string), "", admin).want(t, http.StatusOK)
	e.do(t, "GET", "/identity/v3/endpoints?interface=outer", "", admin).wantError(t, http.StatusBadRequest, "Bad Request")
	e.do(t, "GET", "/identity/v3/endpoints/nope", "", admin).wantError(t, http.StatusNotFound, "Not Found")

	// Regions are any token's; services and endpoints the admin's.
	r = e.do(t, "GET", "/identity/v3/regions", "", member).want(t, http.StatusOK)
	regions := r.body["regions"].([]any)
	if len(regions) != 1 || get(regions[0], "id") != get(want, "region_id") || get(regions[0], "parent_region_id") != nil {
		t.Fatalf("regions %s", r.raw)
	}
	e.do(t, "GET", "/identity/v3/regions/"+get(regions[0], "id").(string), "", member).want(t, http.StatusOK)
	e.do(t, "GET", "/identity/v3/regions/Elsewhere", "", member).wantError(t, http.StatusNotFound, "Not Found")
	e.do(t, "GET", "/identity/v3/services", "", member).wantError(t, http.StatusForbidden, "Forbidden")
	e.do(t, "GET", "/identity/v3/endpoints", "", member).wantError(t, http.StatusForbidden, "Forbidden")
	e.do(t, "GET", "/identity/v3/regions", "").wantError(t, http.StatusUnauthorized, "Unauthorized")
	// Read-only: the catalog is built, not stored.
	r = e.do(t, "POST", "/identity/v3/services", `{"service": {"type": "x"}}`, admin)
	if r.status != http.StatusMethodNotAllowed {
		t.Errorf("POST services: %d %s", r.status, r.raw)
	}
}
