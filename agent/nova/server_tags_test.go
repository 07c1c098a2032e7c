package nova

import (
	"fmt"
	"strings"
	"testing"
)

func tagList(r *response) string {
	var out []string
	for _, t := range r.list("tags") {
		out = append(out, t.(string))
	}
	return strings.Join(out, ",")
}

// TestServerTagsAndHostnameAgainstARealServer: tags given at create
// (2.52), the six tag calls, the list filters, and a 2.90 host name set
// at create and changed by update.
func TestServerTagsAndHostnameAgainstARealServer(t *testing.T) {
	h, _ := newRealHarness(t, "hv-1")
	create := func(name, version string, extra map[string]any) string {
		t.Helper()
		srv := map[string]any{"name": name, "imageRef": "cirros", "flavorRef": "1", "networks": "none"}
		for k, v := range extra {
			srv[k] = v
		}
		r := h.req("POST", "/compute/v2.1/servers", memberTok, version, map[string]any{"server": srv}).expect(t, 202)
		return r.obj("server")["id"].(string)
	}
	web := create("web", "2.90", map[string]any{"tags": []string{"web", "prod"}, "hostname": "web-01"})
	db := create("db", "2.52", map[string]any{"tags": []string{"db", "prod"}})
	waitServer(h, web, "ACTIVE")
	waitServer(h, db, "ACTIVE")
	h.req("POST", "/compute/v2.1/servers", memberTok, "2.51", map[string]any{"server": map[string]any{
		"name": "x", "imageRef": "cirros", "flavorRef": "1", "tags": []string{"a"}}}).fault(t, 400, "badRequest", "")

	s := h.req("GET", "/compute/v2.1/servers/"+web, memberTok, "2.90", nil).expect(t, 200).obj("server")
	if fmt.Sprint(s["tags"]) != "[prod web]" || s["OS-EXT-SRV-ATTR:hostname"] != "web-01" {
		t.Fatalf("view: tags %v hostname %v", s["tags"], s["OS-EXT-SRV-ATTR:hostname"])
	}
	if got := tagList(h.req("GET", "/compute/v2.1/servers/"+web+"/tags", memberTok, "2.26", nil).expect(t, 200)); got != "prod,web" {
		t.Fatalf("list %q", got)
	}
	h.req("GET", "/compute/v2.1/servers/"+web+"/tags", memberTok, "2.25", nil).expect(t, 404)
	h.req("GET", "/compute/v2.1/servers/"+web+"/tags/web", memberTok, "2.26", nil).expect(t, 204)
	h.req("GET", "/compute/v2.1/servers/"+web+"/tags/nope", memberTok, "2.26", nil).fault(t, 404, "itemNotFound", "Tag nope could not be found.")

	r := h.req("PUT", "/compute/v2.1/servers/"+web+"/tags/blue", memberTok, "2.26", nil).expect(t, 201)
	if loc := r.header.Get("Location"); !strings.HasSuffix(loc, "/v2.1/servers/"+web+"/tags/blue") {
		t.Fatalf("Location %q", loc)
	}
	h.req("PUT", "/compute/v2.1/servers/"+web+"/tags/blue", memberTok, "2.26", nil).expect(t, 204)
	h.req("PUT", "/compute/v2.1/servers/"+web+"/tags/a,b", memberTok, "2.26", nil).fault(t, 400, "badRequest", "")
	h.req("DELETE", "/compute/v2.1/servers/"+web+"/tags/prod", memberTok, "2.26", nil).expect(t, 204)
	h.req("DELETE", "/compute/v2.1/servers/"+web+"/tags/prod", memberTok, "2.26", nil).fault(t, 404, "itemNotFound", "")
	if got := tagList(h.req("GET", "/compute/v2.1/servers/"+web+"/tags", memberTok, "2.26", nil)); got != "blue,web" {
		t.Fatalf("after add and delete %q", got)
	}
	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprintf("t%02d", i)
	}
	h.req("PUT", "/compute/v2.1/servers/"+web+"/tags", memberTok, "2.26", map[string]any{"tags": many}).fault(t, 400, "badRequest", "")
	r = h.req("PUT", "/compute/v2.1/servers/"+db+"/tags", memberTok, "2.26", map[string]any{"tags": []string{"db", "green", "db"}}).expect(t, 200)
	if got := tagList(r); got != "db,green" {
		t.Fatalf("replace %q", got)
	}
	// Another project's server is not found, whatever the call.
	h.req("PUT", "/compute/v2.1/servers/"+db+"/tags/x", otherTok, "2.26", nil).expect(t, 404)
	h.req("PUT", "/compute/v2.1/servers/"+db+"/tags/x", readerTok, "2.26", nil).expect(t, 403)

	list := func(query string) string {
		t.Helper()
		var names []string
		for _, s := range h.req("GET", "/compute/v2.1/servers?"+query, memberTok, "2.26", nil).expect(t, 200).list("servers") {
			names = append(names, s.(map[string]any)["name"].(string))
		}
		return strings.Join(names, ",")
	}
	for query, want := range map[string]string{
		"tags=web":             "web",
		"tags=db,green":        "db",
		"tags-any=blue,green":  "db,web",
		"not-tags=db,green":    "web",
		"not-tags-any=web":     "db",
		"tags=web&tags-any=db": "",
	} {
		if got := list(query); !sameSet(got, want) {
			t.Errorf("%s: %q, want %q", query, got, want)
		}
	}

	h.req("DELETE", "/compute/v2.1/servers/"+db+"/tags", memberTok, "2.26", nil).expect(t, 204)
	if got := tagList(h.req("GET", "/compute/v2.1/servers/"+db+"/tags", memberTok, "2.26", nil)); got != "" {
		t.Fatalf("after delete all %q", got)
	}

	r = h.req("PUT", "/compute/v2.1/servers/"+web, memberTok, "2.90", map[string]any{"server": map[string]any{"hostname": "web-02"}}).expect(t, 200)
	if r.obj("server")["OS-EXT-SRV-ATTR:hostname"] != "web-02" {
		t.Fatalf("update hostname: %s", r.raw)
	}
	h.req("POST", "/compute/v2.1/servers", memberTok, "2.90", map[string]any{"server": map[string]any{
		"name": "x", "imageRef": "cirros", "flavorRef": "1", "networks": "none", "hostname": "x", "max_count": 2}}).fault(t, 400, "badRequest", "")
}

func sameSet(a, b string) bool {
	split := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, x := range strings.Split(s, ",") {
			if x != "" {
				m[x] = true
			}
		}
		return m
	}
	return fmt.Sprint(split(a)) == fmt.Sprint(split(b))
}
