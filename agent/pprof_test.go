package agent

import (
	"strings"
	"testing"
)

// TestPprofOnlyWithEnableDebug: the profiler answers admins only on an
// agent with enable_debug; elsewhere it is a 404 saying how to turn it
// on.
func TestPprofOnlyWithEnableDebug(t *testing.T) {
	t.Parallel()
	on := testAgent(t, func(c *Config) { c.EnableDebug = true })
	code, _, body := do(t, "GET", on.url("/v1/agent/pprof"), nil)
	if code != 200 || !strings.Contains(string(body), `"heap"`) || !strings.Contains(string(body), `"profile"`) {
		t.Fatalf("index: %d %s", code, body)
	}
	code, _, body = do(t, "GET", on.url("/v1/agent/pprof/goroutine?debug=1"), nil)
	if code != 200 || !strings.Contains(string(body), "goroutine profile:") {
		t.Fatalf("goroutine profile: %d %.200s", code, body)
	}
	if code, _, _ = do(t, "GET", on.url("/v1/agent/pprof/nope"), nil); code != 404 {
		t.Errorf("unknown profile: %d", code)
	}
	off := testAgent(t, nil)
	code, _, body = do(t, "GET", off.url("/v1/agent/pprof/heap"), nil)
	if code != 404 || !strings.Contains(string(body), "enable_debug") {
		t.Errorf("without enable_debug: %d %s", code, body)
	}
}
