package docgen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "page.md")
	page := "# Title\n\n<!-- tbl:begin (note) -->\nold\n<!-- tbl:end -->\ntail\n"
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Sync(path, "tbl", "old\n"); err != nil {
		t.Errorf("equal block: %v", err)
	}
	if err := Sync(path, "tbl", "new\n"); err == nil || !strings.Contains(err.Error(), EnvUpdate) {
		t.Errorf("different block: %v", err)
	}
	if err := Sync(path, "missing", "x"); err == nil {
		t.Error("missing block accepted")
	}
	t.Setenv(EnvUpdate, "1")
	if err := Sync(path, "tbl", "new\n"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if want := "# Title\n\n<!-- tbl:begin (note) -->\nnew\n<!-- tbl:end -->\ntail\n"; string(got) != want {
		t.Errorf("rewritten page %q", got)
	}
}
