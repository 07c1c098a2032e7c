package agent

import (
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestImageCacheConfig: the client's image_cache block sets the cache's
// directory and bound; the defaults apply without it, and -1 unbounds it.
func TestImageCacheConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.hcl")
	writeFile(t, path, `
name = "hv1"
data_dir = "`+dir+`"
client {
  enabled = true
  image_cache {
    dir         = "`+dir+`/cache"
    max_size_mb = 64
  }
}
`)
	c, err := LoadConfigFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg     *ImageCacheConfig
		dir     string
		maxSize int64
	}{
		{c.Client.ImageCache, filepath.Join(dir, "cache"), 64 << 20},
		{nil, filepath.Join(dir, "client", "image-cache"), DefaultImageCacheMB << 20},
		{&ImageCacheConfig{MaxSizeMB: -1}, filepath.Join(dir, "client", "image-cache"), 0},
	} {
		a := &Agent{config: &Config{Client: &ClientConfig{ImageCache: tc.cfg}}, logger: hclog.NewNullLogger()}
		a.metrics = newMetrics(a)
		cache, err := a.newImageCache(filepath.Join(dir, "client"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cache.Path("x"); got != filepath.Join(tc.dir, "x") {
			t.Errorf("%+v: cache at %s, want %s", tc.cfg, got, tc.dir)
		}
		if got := cache.MaxBytes(); got != tc.maxSize {
			t.Errorf("%+v: bound %d, want %d", tc.cfg, got, tc.maxSize)
		}
	}
}
