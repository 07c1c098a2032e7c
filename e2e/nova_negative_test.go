package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// novaCall sends one request to the Compute API and decodes the body.
func novaCall(t *testing.T, method, url, token, version, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	if version != "" {
		req.Header.Set("OpenStack-API-Version", "compute "+version)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func issueToken(t *testing.T, base, user string) string {
	t.Helper()
	body := `{"auth":{"identity":{"methods":["password"],"password":{"user":{"name":"` + user + `","domain":{"name":"Default"},"password":"` + user + `"}}},"scope":{"project":{"name":"` + user + `","domain":{"name":"Default"}}}}}`
	var tok string
	eventually(t, "token for "+user, 30*time.Second, func() error {
		resp, err := http.Post(base+"/identity/v3/auth/tokens", "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 201 {
			return &statusErr{resp.StatusCode}
		}
		tok = resp.Header.Get("X-Subject-Token")
		return nil
	})
	return tok
}

type statusErr struct{ code int }

func (e *statusErr) Error() string { return http.StatusText(e.code) }

// TestComputeAPINegative checks what a hostile or careless client gets:
// Nova's error bodies and codes, never another project's data.
func TestComputeAPINegative(t *testing.T) {
	t.Parallel()
	dev := startAgent(t, "negdev", "--dev")
	api := dev.http + "/compute/v2.1"
	admin := issueToken(t, dev.http, "admin")
	demo := issueToken(t, dev.http, "demo")

	expect := func(name string, code int, key string, gotCode int, body map[string]any) {
		t.Helper()
		if gotCode != code {
			t.Errorf("%s: status %d, want %d (%v)", name, gotCode, code, body)
			return
		}
		if key != "" {
			if _, ok := body[key]; !ok {
				t.Errorf("%s: body %v has no %q", name, body, key)
			}
		}
	}
	c, b := novaCall(t, "GET", api+"/servers", "", "", "")
	expect("no token", 401, "unauthorized", c, b)
	forged := admin[:len(admin)-4] + "AAAA"
	c, b = novaCall(t, "GET", api+"/servers", forged, "", "")
	expect("forged token", 401, "unauthorized", c, b)
	c, b = novaCall(t, "GET", api+"/servers", admin, "9.99", "")
	expect("microversion out of range", 406, "", c, b)
	c, b = novaCall(t, "GET", api+"/servers", admin, "2.bad", "")
	expect("malformed microversion", 400, "", c, b)
	c, b = novaCall(t, "POST", api+"/servers", demo, "", `{"server":{"name":"x","imageRef":"cirros","flavorRef":"1","color":"red"}}`)
	expect("unknown field", 400, "badRequest", c, b)
	c, b = novaCall(t, "POST", api+"/servers", demo, "", `{"server":{"name":"x"`)
	expect("malformed body", 400, "badRequest", c, b)
	c, b = novaCall(t, "POST", api+"/servers", demo, "", `{"server":{"name":"x","imageRef":"cirros","flavorRef":"nope"}}`)
	expect("unknown flavor", 400, "badRequest", c, b)
	c, b = novaCall(t, "GET", api+"/os-hypervisors", demo, "", "")
	expect("member calling an admin API", 403, "forbidden", c, b)
	c, b = novaCall(t, "POST", api+"/flavors", demo, "", `{"flavor":{"name":"f","ram":1,"vcpus":1,"disk":1}}`)
	expect("member creating a flavor", 403, "forbidden", c, b)

	// Another project's server is invisible: 404, not 403.
	c, b = novaCall(t, "POST", api+"/servers", admin, "", `{"server":{"name":"secret","imageRef":"cirros","flavorRef":"1"}}`)
	if c != 202 {
		t.Fatalf("admin boot: %d %v", c, b)
	}
	id := b["server"].(map[string]any)["id"].(string)
	c, b = novaCall(t, "GET", api+"/servers/"+id, demo, "", "")
	expect("other project's server", 404, "itemNotFound", c, b)
	c, b = novaCall(t, "POST", api+"/servers/"+id+"/action", demo, "", `{"os-stop":null}`)
	expect("acting on another project's server", 404, "itemNotFound", c, b)
	c, b = novaCall(t, "GET", api+"/servers/detail", demo, "", "")
	if c != 200 || len(b["servers"].([]any)) != 0 {
		t.Fatalf("demo's list leaks: %d %v", c, b)
	}

	// A revoked token stops working.
	req, _ := http.NewRequest("DELETE", dev.http+"/identity/v3/auth/tokens", nil)
	req.Header.Set("X-Auth-Token", demo)
	req.Header.Set("X-Subject-Token", demo)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("revoke: %v %v", resp, err)
	}
	resp.Body.Close()
	eventually(t, "revoked token refused", 10*time.Second, func() error {
		if c, _ := novaCall(t, "GET", api+"/servers", demo, "", ""); c != 401 {
			return &statusErr{c}
		}
		return nil
	})
}
