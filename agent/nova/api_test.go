package nova

import (
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestVersionDiscovery(t *testing.T) {
	h := newHarness(t)
	r := h.req("GET", "/compute/", "", "", nil).expect(t, 200)
	versions := r.list("versions")
	if len(versions) != 2 {
		t.Fatalf("versions %v", versions)
	}
	// v2.0 first, then v2.1, as Nova.
	sameShape(t, "versions", r.body, sample(t, "versions/versions-get-resp.json"))
	want := sample(t, "versions/versions-get-resp.json")["versions"].([]any)[0]
	if !reflect.DeepEqual(without(versions[0].(map[string]any), "links"), without(want.(map[string]any), "links")) {
		t.Fatalf("v2.0 %v, want %v", versions[0], want)
	}
	if href := versions[0].(map[string]any)["links"].([]any)[0].(map[string]any)["href"]; href != h.srv.URL+"/compute/v2/" {
		t.Fatalf("v2.0 self link %v", href)
	}
	v := versions[1].(map[string]any)
	if v["id"] != "v2.1" || v["status"] != "CURRENT" || v["version"] != "2.100" || v["min_version"] != "2.1" {
		t.Fatalf("version %v", v)
	}
	if href := v["links"].([]any)[0].(map[string]any)["href"]; href != h.srv.URL+"/compute/v2.1/" {
		t.Fatalf("self link %v", href)
	}

	for _, path := range []string{"/compute/v2.1", "/compute/v2.1/"} {
		r = h.req("GET", path, "", "", nil).expect(t, 200)
		sameShape(t, "version", r.body, sample(t, "versions/v21-version-get-resp.json"))
		if r.obj("version")["version"] != "2.100" {
			t.Fatalf("version %v", r.body)
		}
	}
	h.req("POST", "/compute/", "", "", nil).fault(t, 405, "badMethod", "not allowed")

	// The legacy v2 API's document, without microversion headers.
	for _, path := range []string{"/compute/v2", "/compute/v2/"} {
		r = h.req("GET", path, "", "", nil).expect(t, 200)
		want := sample(t, "versions/v2-version-get-resp.json")
		sameShape(t, "v2 version", r.body, want)
		got := r.obj("version")
		if !reflect.DeepEqual(without(got, "links"), without(want["version"].(map[string]any), "links")) {
			t.Fatalf("v2 version %v", got)
		}
		if got["links"].([]any)[0].(map[string]any)["href"] != h.srv.URL+"/compute/v2/" {
			t.Fatalf("v2 self link %v", got["links"])
		}
		if r.header.Get("OpenStack-API-Version") != "" || r.header.Get("X-OpenStack-Nova-API-Version") != "" {
			t.Fatalf("v2 version headers %v", r.header)
		}
	}
	h.req("POST", "/compute/v2", "", "", nil).fault(t, 405, "badMethod", "not allowed")
}

// without is m without the keys.
func without(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if !contains(keys, k) {
			out[k] = v
		}
	}
	return out
}

func TestMicroversionNegotiation(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		header, value, want string
	}{
		{"", "", "2.1"},
		{"OpenStack-API-Version", "compute latest", "2.100"},
		{"OpenStack-API-Version", "compute 2.47", "2.47"},
		{"OpenStack-API-Version", "volume 3.0, compute 2.60", "2.60"},
		{"X-OpenStack-Nova-API-Version", "2.53", "2.53"},
		{"X-OpenStack-Nova-API-Version", "latest", "2.100"},
	} {
		r, _ := http.NewRequest("GET", h.srv.URL+"/compute/v2.1/flavors", nil)
		r.Header.Set("X-Auth-Token", memberTok)
		if tc.header != "" {
			r.Header.Set(tc.header, tc.value)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %s: status %d", tc.header, tc.value, resp.StatusCode)
		}
		hd := resp.Header
		if hd.Get("X-OpenStack-Nova-API-Version") != tc.want || hd.Get("OpenStack-API-Version") != "compute "+tc.want {
			t.Errorf("%s %q: version headers %q %q, want %s", tc.header, tc.value,
				hd.Get("X-OpenStack-Nova-API-Version"), hd.Get("OpenStack-API-Version"), tc.want)
		}
		if hd.Get("Vary") != "OpenStack-API-Version, X-OpenStack-Nova-API-Version" || hd.Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", hd)
		}
		id := hd.Get("X-OpenStack-Request-ID")
		if !strings.HasPrefix(id, "req-") || len(id) != 40 || hd.Get("X-Compute-Request-ID") != id {
			t.Errorf("request ids %q %q", id, hd.Get("X-Compute-Request-ID"))
		}
	}
	// The new header wins over the legacy one.
	r, _ := http.NewRequest("GET", h.srv.URL+"/compute/v2.1/flavors", nil)
	r.Header.Set("X-Auth-Token", memberTok)
	r.Header.Set("X-OpenStack-Nova-API-Version", "2.10")
	r.Header.Set("OpenStack-API-Version", "compute 2.20")
	resp, _ := http.DefaultClient.Do(r)
	resp.Body.Close()
	if got := resp.Header.Get("X-OpenStack-Nova-API-Version"); got != "2.20" {
		t.Fatalf("both headers: %s", got)
	}

	h.req("GET", "/compute/v2.1/flavors", memberTok, "2.101", nil).
		fault(t, 406, "computeFault", "Version 2.101 is not supported by the API. Minimum is 2.1 and maximum is 2.100.")
	h.req("GET", "/compute/v2.1/flavors", memberTok, "3.0", nil).fault(t, 406, "computeFault", "Version 3.0 is not supported")
	h.req("GET", "/compute/v2.1/flavors", memberTok, "2.0", nil).fault(t, 406, "computeFault", "not supported")
	h.req("GET", "/compute/v2.1/flavors", memberTok, "abc", nil).
		fault(t, 400, "badRequest", "API Version String abc is of invalid format. Must be of format MajorNum.MinorNum.")
}

func TestAuthentication(t *testing.T) {
	h := newHarness(t)
	for _, tok := range []string{"", "bogus"} {
		r := h.req("GET", "/compute/v2.1/servers", tok, "", nil)
		r.fault(t, 401, "unauthorized", "The request you have made requires authentication.")
		if string(r.raw) != `{"unauthorized":{"code":401,"message":"The request you have made requires authentication."}}` {
			t.Fatalf("401 body %s", r.raw)
		}
	}
	// The project in the URL is optional, and must be the token's.
	r := h.req("GET", "/compute/v2.1/p-demo/flavors", memberTok, "", nil).expect(t, 200)
	href := r.list("flavors")[0].(map[string]any)["links"].([]any)[0].(map[string]any)["href"].(string)
	if href != h.srv.URL+"/compute/v2.1/p-demo/flavors/1" {
		t.Fatalf("self link with project %s", href)
	}
	r = h.req("GET", "/compute/v2.1/flavors", memberTok, "", nil).expect(t, 200)
	href = r.list("flavors")[0].(map[string]any)["links"].([]any)[1].(map[string]any)["href"].(string)
	if href != h.srv.URL+"/compute/flavors/1" {
		t.Fatalf("bookmark link %s", href)
	}
	h.req("GET", "/compute/v2.1/p-other/flavors", memberTok, "", nil).
		fault(t, 400, "badRequest", "Malformed request URL: URL's project_id 'p-other' doesn't match Context's project_id 'p-demo'")
	// A token without a role may not even list flavors.
	h.req("GET", "/compute/v2.1/servers", noRoleTok, "", nil).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:servers:index to be performed.")
}

func TestRoutingErrors(t *testing.T) {
	h := newHarness(t)
	h.req("GET", "/compute/v2.1/nothing-here", memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("GET", "/compute/v3/servers", memberTok, "", nil).fault(t, 404, "itemNotFound", "could not be found")
	r := h.req("PATCH", "/compute/v2.1/servers", memberTok, "", nil)
	r.fault(t, 405, "badMethod", "The method specified is not allowed for this resource.")
	if r.header.Get("Allow") != "GET, POST" {
		t.Fatalf("Allow %q", r.header.Get("Allow"))
	}
	// Routes outside the requested microversion do not exist: a 404 even
	// where the path has other methods, as Nova's VersionNotFoundForAPIMethod.
	h.req("PUT", "/compute/v2.1/flavors/1", adminTok, "2.54", map[string]any{"flavor": map[string]any{"description": "x"}}).
		fault(t, 404, "itemNotFound", msgNotFound)
	h.req("GET", "/compute/v2.1/os-hypervisors/statistics", adminTok, "2.88", nil).fault(t, 404, "itemNotFound", "could not be found")
	h.req("GET", "/compute/v2.1/os-hypervisors/statistics", adminTok, "2.87", nil).expect(t, 200)
	// HEAD is GET, without a body; what GET lacks at a version HEAD lacks too.
	if r := h.req("HEAD", "/compute/v2.1/flavors", memberTok, "", nil).expect(t, 200); len(r.raw) != 0 {
		t.Fatalf("HEAD answered a body: %s", r.raw)
	}
	h.req("HEAD", "/compute/v2.1/os-hypervisors/statistics", adminTok, "2.88", nil).expect(t, 404)
	if r := h.req("HEAD", "/compute/v2.1/os-keypairs/k/x", memberTok, "", nil); r.status != 404 {
		t.Fatalf("HEAD on no route: %d", r.status)
	}
	// Authentication comes before routing: no token, no 404 either.
	h.req("GET", "/compute/v2.1/nothing-here", "", "", nil).fault(t, 401, "unauthorized", "requires authentication")
	h.req("GET", "/compute/v2.1/extensions", memberTok, "", nil).expect(t, 200)
	h.req("GET", "/compute/v2.1/extensions/no-such-alias", memberTok, "", nil).fault(t, 404, "itemNotFound", msgNotFound)
}

func TestBodyValidation(t *testing.T) {
	h := newHarness(t)
	post := func(body any) *response {
		return h.req("POST", "/compute/v2.1/servers", memberTok, "", body)
	}
	post("{not json").fault(t, 400, "badRequest", "Malformed request body")
	post(nil).fault(t, 400, "badRequest", "None is not of type 'object'")
	post(map[string]any{"server": map[string]any{"name": "x", "flavorRef": "1", "imageRef": "i", "bogus": 1}}).
		fault(t, 400, "badRequest", "Invalid input for field/attribute server. Value: ")
	r := post(map[string]any{"server": map[string]any{"name": "x", "flavorRef": "1", "imageRef": "i", "bogus": 1}})
	if !strings.Contains(r.obj("badRequest")["message"].(string), "Additional properties are not allowed ('bogus' was unexpected)") {
		t.Fatalf("message %s", r.raw)
	}
	post(map[string]any{"server": map[string]any{"flavorRef": "1"}}).
		fault(t, 400, "badRequest", "'name' is a required property")
	post(map[string]any{"server": map[string]any{"name": 5, "flavorRef": "1"}}).
		fault(t, 400, "badRequest", "Invalid input for field/attribute name. Value: 5. 5 is not of type 'string'")
	post(map[string]any{"server": map[string]any{"name": "x", "flavorRef": "1", "imageRef": "i", "min_count": 0}}).
		fault(t, 400, "badRequest", "Invalid input for field/attribute min_count. Value: 0. 0 is less than the minimum of 1")
	post(map[string]any{"server": map[string]any{"name": " x", "flavorRef": "1", "imageRef": "i"}}).
		fault(t, 400, "badRequest", "Can not start or end with whitespace")

	req, _ := http.NewRequest("POST", h.srv.URL+"/compute/v2.1/servers", strings.NewReader(`{"server":{}}`))
	req.Header.Set("X-Auth-Token", memberTok)
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 415 {
		t.Fatalf("text/plain body: %d", resp.StatusCode)
	}
	big := strings.Repeat("a", maxBody+1)
	post(`{"server":{"name":"`+big+`"}}`).fault(t, 413, "overLimit", "Request is too large.")
}

func TestInternalErrorsAreComputeFaults(t *testing.T) {
	h := newHarness(t)
	h.rpc.fail["Flavor.List"] = errString("boom")
	h.req("GET", "/compute/v2.1/flavors", memberTok, "", nil).fault(t, 500, "computeFault", "Unexpected API Error.")
	h.rpc.fail["Flavor.List"] = errNoLeader
	h.req("GET", "/compute/v2.1/flavors", memberTok, "", nil).fault(t, 503, "serviceUnavailable", "no cluster leader")
}

// TestDeleteWithAnEmptyIDIsNotFound: DELETE on a collection with a
// trailing slash names an empty id, which no route has: 404 on every
// collection, as Nova's router, not the 405 its other methods would make.
func TestDeleteWithAnEmptyIDIsNotFound(t *testing.T) {
	h := newHarness(t)
	n := 0
	for _, rt := range h.api.table.Routes() {
		segs := strings.Split(rt.Path(), "/")
		last := segs[len(segs)-1]
		if rt.Method() != "DELETE" || !strings.HasPrefix(last, "{") {
			continue
		}
		for i, s := range segs {
			if strings.HasPrefix(s, "{") {
				segs[i] = "x"
			}
		}
		segs[len(segs)-1] = ""
		version := "2.1"
		if rt.MinVersion > 0 {
			version = "2." + strconv.Itoa(rt.MinVersion)
		}
		// (DELETE /servers/{id}/tags/ is the collection's own DELETE.)
		h.req("DELETE", "/compute/v2.1"+strings.Join(segs, "/"), adminTok, version, nil).expect(t, 404)
		n++
	}
	if n < 15 {
		t.Fatalf("only %d collections with a DELETE", n)
	}
	h.req("DELETE", "/compute/v2.1/servers", adminTok, "", nil).fault(t, 405, "badMethod", msgMethodNotAllow)
	h.req("GET", "/compute/v2.1/servers/", adminTok, "", nil).expect(t, 200)
}
