package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestUIIsServedAndRootRedirects(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(a.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("/: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	code, hdr, body := do(t, "GET", a.url("/ui/"), nil)
	if code != 200 || !strings.Contains(string(body), "js/app.js") || hdr.Get("Content-Security-Policy") == "" {
		t.Fatalf("/ui/: %d %v", code, hdr)
	}
	if code, _, _ := do(t, "GET", a.url("/ui/js/app.js"), nil); code != 200 {
		t.Fatalf("app.js: %d", code)
	}
	// Only the root redirects; other unknown paths stay 404.
	if code, _, _ := do(t, "GET", a.url("/nothing"), nil); code != 404 {
		t.Fatalf("/nothing: %d", code)
	}
}

func TestStatusClusterAndInstanceWatch(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	waitFor(t, "a host up", func() error {
		_, _, body := do(t, "GET", a.url("/v1/status/cluster"), nil)
		var c clusterStatusJSON
		if err := json.Unmarshal(body, &c); err != nil {
			return err
		}
		if c.Hosts.Up != 1 || c.Leader == "" {
			return fmt.Errorf("cluster: %s", body)
		}
		return nil
	})
	code, hdr, body := do(t, "GET", a.url("/v1/status/cluster"), nil)
	var c clusterStatusJSON
	if err := json.Unmarshal(body, &c); err != nil || code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if hdr.Get("X-Stratus-Index") == "" || c.Index == 0 || c.Raft["state"] != "Leader" {
		t.Fatalf("index header %q, body index %d, raft %v", hdr.Get("X-Stratus-Index"), c.Index, c.Raft)
	}
	if len(c.Servers) != 1 || !c.Servers[0].Leader || !c.Servers[0].Voter || c.Servers[0].Status != "alive" || c.LeaderName != "test" {
		t.Fatalf("servers %+v leader %q", c.Servers, c.LeaderName)
	}
	mem := c.Capacity["MEMORY_MB"]
	if c.Hosts.Total != 1 || c.Hosts.Down != 0 || mem.Total == 0 || mem.Capacity == 0 || mem.Used != 0 {
		t.Fatalf("hosts %+v capacity %+v", c.Hosts, c.Capacity)
	}

	// The watch answers only an index, and blocks until instances change.
	code, hdr, body = do(t, "GET", a.url("/v1/watch/instances"), nil)
	var w map[string]any
	if err := json.Unmarshal(body, &w); err != nil || code != 200 || len(w) != 1 || w["Index"] == nil {
		t.Fatalf("watch: %d %s", code, body)
	}
	index := hdr.Get("X-Stratus-Index")
	var wg sync.WaitGroup
	wg.Add(1)
	var after watchInstancesJSON
	go func() {
		defer wg.Done()
		_, _, body := do(t, "GET", a.url("/v1/watch/instances?wait=30s&index="+index), nil)
		_ = json.Unmarshal(body, &after)
	}()
	if code, _, body := do(t, "POST", a.url("/v1/instances"), strings.NewReader(`{"Name":"w","Flavor":"m1.tiny","Image":"cirros"}`)); code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	wg.Wait()
	if before, _ := strconv.ParseUint(index, 10, 64); after.Index <= before {
		t.Fatalf("watch answered index %d, was %s", after.Index, index)
	}
	if code, _, _ := do(t, "GET", a.url("/v1/watch/instances?index=x"), nil); code != 400 {
		t.Fatalf("bad index: %d", code)
	}
}
