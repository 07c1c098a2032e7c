package client

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestNodeSecretCreatedOncePrivateAndKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	// Concurrent first starts agree on one secret.
	secrets := make([]string, 4)
	var wg sync.WaitGroup
	for i := range secrets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := LoadOrCreateNodeSecret(dir)
			if err != nil {
				t.Error(err)
			}
			secrets[i] = s
		}()
	}
	wg.Wait()
	for _, s := range secrets {
		if len(s) != 64 || s != secrets[0] {
			t.Fatalf("secrets %q", secrets)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, NodeSecretFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	again, err := LoadOrCreateNodeSecret(dir)
	if err != nil || again != secrets[0] {
		t.Fatalf("reloaded %q %v", again, err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, NodeSecretFile+".tmp-*")); len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
	if other, _ := LoadOrCreateNodeSecret(t.TempDir()); other == secrets[0] {
		t.Fatal("two data dirs got the same secret")
	}
}

func TestNodeSecretFileChecked(t *testing.T) {
	for name, tc := range map[string]struct {
		content string
		mode    os.FileMode
		want    string
	}{
		"readable by others": {strings.Repeat("a", 64), 0o644, "readable by others"},
		"not hex":            {strings.Repeat("z", 64), 0o600, "hex-encoded"},
		"too short":          {"abcd", 0o600, "hex-encoded"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, NodeSecretFile)
		if err := os.WriteFile(path, []byte(tc.content), tc.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadOrCreateNodeSecret(dir); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
