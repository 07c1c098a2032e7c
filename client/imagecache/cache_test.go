package imagecache

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// source is a Fetcher over images held in memory; gate, when set, holds
// every download until it is closed.
type source struct {
	mu      sync.Mutex
	data    map[string][]byte // by hash
	fetches atomic.Int64
	gate    chan struct{}
}

func (s *source) add(data []byte, id string) Image {
	sum := sha512.Sum512(data)
	h := hex.EncodeToString(sum[:])
	s.mu.Lock()
	if s.data == nil {
		s.data = map[string][]byte{}
	}
	s.data[h] = data
	s.mu.Unlock()
	return Image{ID: id, HashValue: h, Size: int64(len(data))}
}

func (s *source) Fetch(ctx context.Context, img Image) (io.ReadCloser, error) {
	s.fetches.Add(1)
	if s.gate != nil {
		<-s.gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.data[img.HashValue]
	if !ok {
		return nil, fmt.Errorf("image %s not found", img.ID)
	}
	return io.NopCloser(bytes.NewReader(d)), nil
}

// clock is a test clock that moves one second per reading.
func clock() func() time.Time {
	var mu sync.Mutex
	t := time.Unix(1_700_000_000, 0)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

func blob(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

func newCache(t *testing.T, cfg Config) *Cache {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.Now == nil {
		cfg.Now = clock()
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// TestConcurrentGetsShareOneDownload: many callers for one image wait on
// a single download and all get the same verified file.
func TestConcurrentGetsShareOneDownload(t *testing.T) {
	t.Parallel()
	src := &source{gate: make(chan struct{})}
	data := blob(3<<20+5, 1)
	img := src.add(data, "img-1")
	reg := prometheus.NewRegistry()
	c := newCache(t, Config{Fetcher: src, Registerer: reg})
	const n = 8
	paths := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i], errs[i] = c.Get(ctx(t), img)
		}()
	}
	// Let the first download start, then release it.
	deadline := time.Now().Add(60 * time.Second)
	for src.fetches.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(src.gate)
	wg.Wait()
	for i := range n {
		if errs[i] != nil || paths[i] != c.Path(img.HashValue) {
			t.Fatalf("caller %d: %q, %v", i, paths[i], errs[i])
		}
	}
	if got := src.fetches.Load(); got != 1 {
		t.Fatalf("%d downloads, want 1", got)
	}
	got, err := os.ReadFile(c.Path(img.HashValue))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("cached file: %d bytes, %v", len(got), err)
	}
	// A later call is a hit.
	if _, err := c.Get(ctx(t), img); err != nil || src.fetches.Load() != 1 {
		t.Fatalf("second get: %v, %d fetches", err, src.fetches.Load())
	}
	if v := counter(t, reg, "stratus_image_cache_misses_total"); v != 1 {
		t.Errorf("misses %v, want 1", v)
	}
	if v := counter(t, reg, "stratus_image_cache_downloaded_bytes_total"); v != float64(len(data)) {
		t.Errorf("downloaded bytes %v, want %d", v, len(data))
	}
}

// TestHashMismatchIsNotCached: data whose sha512 or size differ from the
// record fail the request, leave nothing behind, and a later request
// downloads again.
func TestHashMismatchIsNotCached(t *testing.T) {
	t.Parallel()
	src := &source{}
	good := src.add(blob(100_000, 3), "img-1")
	c := newCache(t, Config{Fetcher: src})

	wrongHash := good
	wrongHash.HashValue = hex.EncodeToString(make([]byte, 64))
	src.mu.Lock()
	src.data[wrongHash.HashValue] = blob(100_000, 4) // other bytes under that name
	src.mu.Unlock()
	if _, err := c.Get(ctx(t), wrongHash); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("wrong data: %v, want ErrHashMismatch", err)
	}
	short := good
	short.Size = good.Size + 1
	if _, err := c.Get(ctx(t), short); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("short data: %v, want ErrHashMismatch", err)
	}
	long := good
	long.Size = good.Size - 1
	if _, err := c.Get(ctx(t), long); !errors.Is(err, ErrHashMismatch) {
		t.Fatalf("long data: %v, want ErrHashMismatch", err)
	}
	if len(c.List()) != 0 {
		t.Fatalf("cached after mismatches: %+v", c.List())
	}
	for _, dir := range []string{c.cfg.Dir, filepath.Join(c.cfg.Dir, partDir)} {
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if f.Name() != indexFile && f.Name() != partDir {
				t.Errorf("left behind: %s", filepath.Join(dir, f.Name()))
			}
		}
	}
	before := src.fetches.Load()
	if _, err := c.Get(ctx(t), wrongHash); !errors.Is(err, ErrHashMismatch) || src.fetches.Load() != before+1 {
		t.Fatalf("retry: %v, fetches %d → %d", err, before, src.fetches.Load())
	}
	if _, err := c.Get(ctx(t), Image{ID: "x", HashValue: "", Size: 1}); err == nil {
		t.Fatal("an image without a hash was accepted")
	}
}

// TestEvictionSkipsImagesInUse: past its bound the cache drops the least
// recently used image that no instance uses.
func TestEvictionSkipsImagesInUse(t *testing.T) {
	t.Parallel()
	src := &source{}
	a := src.add(blob(400_000, 1), "a")
	b := src.add(blob(400_000, 2), "b")
	cImg := src.add(blob(400_000, 3), "c")
	d := src.add(blob(400_000, 4), "d")
	var mu sync.Mutex
	inUse := map[string]bool{"a": true}
	c := newCache(t, Config{Fetcher: src, MaxBytes: 1_000_000, InUse: func() map[string]bool {
		mu.Lock()
		defer mu.Unlock()
		return map[string]bool{"a": inUse["a"], "b": inUse["b"]}
	}})
	for _, img := range []Image{a, b} {
		if _, err := c.Get(ctx(t), img); err != nil {
			t.Fatal(err)
		}
	}
	// c passes the bound: a is least recently used but in use, so b goes.
	if _, err := c.Get(ctx(t), cImg); err != nil {
		t.Fatal(err)
	}
	if got := ids(c); got != "a,c" {
		t.Fatalf("after c: %s, want a,c", got)
	}
	if _, err := os.Stat(c.Path(b.HashValue)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("b's file: %v", err)
	}
	// Nothing is in use any more: d evicts the least recently used, a.
	mu.Lock()
	inUse = map[string]bool{}
	mu.Unlock()
	if _, err := c.Get(ctx(t), d); err != nil {
		t.Fatal(err)
	}
	if got := ids(c); got != "c,d" {
		t.Fatalf("after d: %s, want c,d", got)
	}
	if c.Size() > 1_000_000 {
		t.Fatalf("size %d over the bound", c.Size())
	}
}

// counter reads a counter from the registry.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

func ids(c *Cache) string {
	var out []string
	for _, e := range c.List() {
		out = append(out, e.IDs...)
	}
	slices.Sort(out)
	return strings.Join(out, ",")
}

// TestRestartKeepsTheCache: a new Cache on the same directory serves
// what the old one downloaded without fetching again, remembers which
// ids and uses, and drops partial downloads.
func TestRestartKeepsTheCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := &source{}
	a := src.add(blob(200_000, 5), "a")
	b := src.add(blob(200_000, 6), "b")
	now := clock()
	c1 := newCache(t, Config{Dir: dir, Fetcher: src, Now: now})
	for _, img := range []Image{a, b, a} {
		if _, err := c1.Get(ctx(t), img); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, partDir, "leftover.part-1"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c2 := newCache(t, Config{Dir: dir, Fetcher: src, Now: now, MaxBytes: 300_000})
	if got := ids(c2); got != "a,b" {
		t.Fatalf("after restart: %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, partDir, "leftover.part-1")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("partial download survived: %v", err)
	}
	fetches := src.fetches.Load()
	path, err := c2.Get(ctx(t), b)
	if err != nil || src.fetches.Load() != fetches {
		t.Fatalf("get after restart: %v, fetches %d → %d", err, fetches, src.fetches.Load())
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, blob(200_000, 6)) {
		t.Fatal("cached data changed")
	}
	// The remembered order counts: with b used last, a new image evicts a.
	cImg := src.add(blob(50_000, 7), "c")
	if _, err := c2.Get(ctx(t), cImg); err != nil {
		t.Fatal(err)
	}
	if got := ids(c2); got != "b,c" {
		t.Fatalf("after eviction: %s, want b,c", got)
	}
	// Without its index the cache still finds its files.
	if err := os.Remove(filepath.Join(dir, indexFile)); err != nil {
		t.Fatal(err)
	}
	c3 := newCache(t, Config{Dir: dir, Fetcher: src})
	if n := len(c3.List()); n != 2 {
		t.Fatalf("without index: %d entries, want 2", n)
	}
}

// TestSparseDownload: zero blocks become holes, and the data is intact.
func TestSparseDownload(t *testing.T) {
	t.Parallel()
	src := &source{}
	data := make([]byte, 8<<20)
	copy(data[5<<20:], "in the middle")
	data[len(data)-1] = 1
	img := src.add(data, "sparse")
	c := newCache(t, Config{Fetcher: src})
	path, err := c.Get(ctx(t), img)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("sparse copy differs: %v", err)
	}
}
