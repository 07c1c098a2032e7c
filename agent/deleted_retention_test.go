package agent

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDeletedRetentionConfig(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"": 0, "forever": -1, "0": -1, "-1": -1, "72h": 72 * time.Hour, "3600": time.Hour,
	} {
		got, err := deletedRetention(in)
		if err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.hcl")
	writeFile(t, path, "name = \"n1\"\ndata_dir = \""+dir+"\"\nserver {\n  enabled = true\n  deleted_retention = \"48h\"\n}\n")
	c, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if got := mustRetention(c.Server.DeletedRetention); got != 48*time.Hour {
		t.Fatalf("deleted_retention parsed as %s", got)
	}
	c.Server.DeletedRetention = "soon"
	if err := c.Finalize(); err == nil || !strings.Contains(err.Error(), "deleted_retention") {
		t.Fatalf("a bad deleted_retention answered %v", err)
	}
	c.Server.DeletedRetention = ""
	for _, name := range []string{"eval_gc_threshold", "idempotency_key_ttl"} {
		c.Server.EvalGCThreshold, c.Server.IdempotencyKeyTTL = "10m", "10m"
		if name == "eval_gc_threshold" {
			c.Server.EvalGCThreshold = "0"
		} else {
			c.Server.IdempotencyKeyTTL = "-1h"
		}
		if err := c.Finalize(); err == nil || !strings.Contains(err.Error(), name) {
			t.Fatalf("a bad %s answered %v", name, err)
		}
	}
	c.Server.EvalGCThreshold, c.Server.IdempotencyKeyTTL = "10m", "600"
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"0", "-1m", "soon"} {
		c.Server.VolumeBuildTimeout = bad
		if err := c.Finalize(); err == nil || !strings.Contains(err.Error(), "volume_build_timeout") {
			t.Fatalf("volume_build_timeout %q answered %v", bad, err)
		}
	}
	c.Server.VolumeBuildTimeout = "30m"
	if err := c.Finalize(); err != nil || mustDuration(c.Server.VolumeBuildTimeout) != 30*time.Minute {
		t.Fatalf("volume_build_timeout 30m: %v", err)
	}
}

func TestPurgeDeletedOverHTTP(t *testing.T) {
	t.Parallel()
	a := testAgent(t, nil)
	for _, body := range []string{``, `{}`, `{"Before":"yesterday"}`, `{"Before":"1960-01-01T00:00:00Z"}`, `{"Before":"2026-11-01T00:00:00Z","X":1}`} {
		if code, _, out := do(t, "POST", a.url("/v1/operator/purge-deleted"), strings.NewReader(body)); code != 400 {
			t.Errorf("body %q: %d %s", body, code, out)
		}
	}
	code, hdr, out := do(t, "POST", a.url("/v1/operator/purge-deleted"), strings.NewReader(`{"Before":"2026-11-01T00:00:00Z"}`))
	if code != 200 || !strings.Contains(string(out), `"Purged": 0`) || hdr.Get("X-Stratus-Index") == "" {
		t.Fatalf("purge of nothing: %d %v %s", code, hdr, out)
	}
}
