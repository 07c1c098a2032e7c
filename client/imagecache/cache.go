package imagecache

import (
	"context"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"
)

// Image is what the cache needs to know of an image to fetch and check
// it: the image service's record, reduced.
type Image struct {
	// ID is the image's id; the cache remembers which ids a file serves
	// so that InUse can pin it.
	ID string
	// HashValue is the hex SHA-512 of the data (Glance's os_hash_value);
	// it names the cached file.
	HashValue string
	// Size is the data's size in bytes.
	Size int64
}

// Fetcher opens an image's data from wherever it is kept (the servers'
// image stores). The cache reads it to the end and closes it.
type Fetcher interface {
	Fetch(ctx context.Context, img Image) (io.ReadCloser, error)
}

// FetcherFunc adapts a function to Fetcher.
type FetcherFunc func(ctx context.Context, img Image) (io.ReadCloser, error)

// Fetch calls f.
func (f FetcherFunc) Fetch(ctx context.Context, img Image) (io.ReadCloser, error) { return f(ctx, img) }

// ErrHashMismatch means the fetched data was not the image's: its size
// or SHA-512 differ from the record's. Nothing is cached.
var ErrHashMismatch = errors.New("image data does not match its recorded size and sha512")

// Config configures a Cache.
type Config struct {
	// Dir holds the cached files. Required; made if missing.
	Dir string
	// MaxBytes bounds the cache's size; 0 means unbounded. An image
	// larger than the bound is still cached (an instance needs it) after
	// everything evictable is evicted.
	MaxBytes int64
	// Fetcher downloads image data. Required.
	Fetcher Fetcher
	// InUse returns the ids of the images the host's instances use; their
	// files are never evicted. Nil means none.
	InUse func() map[string]bool
	// Logger receives the cache's logs (default: discard).
	Logger hclog.Logger
	// Registerer, when set, receives the cache's metrics.
	Registerer prometheus.Registerer
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// entry is one cached file.
type entry struct {
	IDs      []string `json:"ids,omitempty"`
	Size     int64    `json:"size"`
	LastUsed int64    `json:"last_used"` // unix nanoseconds
}

// flight is one download in progress, shared by its waiters.
type flight struct {
	done chan struct{}
	err  error
}

// Cache is the image cache. It is safe for concurrent use.
type Cache struct {
	cfg     Config
	logger  hclog.Logger
	metrics *metrics

	mu      sync.Mutex
	entries map[string]*entry // by hash
	flights map[string]*flight
}

var hashRE = regexp.MustCompile(`^[0-9a-f]{128}$`)

const (
	indexFile = "index.json"
	partDir   = "tmp"
)

// New opens the cache at cfg.Dir, rebuilding its contents from the
// files there and the index beside them. Leftovers of interrupted
// downloads are removed.
func New(cfg Config) (*Cache, error) {
	if cfg.Dir == "" {
		return nil, errors.New("image cache: a directory is required")
	}
	if cfg.Fetcher == nil {
		return nil, errors.New("image cache: a fetcher is required")
	}
	if cfg.MaxBytes < 0 {
		return nil, fmt.Errorf("image cache: negative size bound %d", cfg.MaxBytes)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("image cache: %w", err)
	}
	cfg.Dir = dir
	if err := os.RemoveAll(filepath.Join(dir, partDir)); err != nil {
		return nil, fmt.Errorf("image cache: remove partial downloads: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, partDir), 0o755); err != nil {
		return nil, fmt.Errorf("image cache: %w", err)
	}
	c := &Cache{cfg: cfg, logger: cfg.Logger, entries: map[string]*entry{}, flights: map[string]*flight{}}
	if err := c.load(); err != nil {
		return nil, fmt.Errorf("image cache %s: %w", dir, err)
	}
	c.metrics = newMetrics(c, cfg.Registerer)
	return c, nil
}

// load rebuilds the entries from the files, taking ids and last use
// from the index where it knows them.
func (c *Cache) load() error {
	index := map[string]*entry{}
	data, err := os.ReadFile(filepath.Join(c.cfg.Dir, indexFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &index); err != nil {
			c.logger.Warn("image cache index unreadable; rebuilding it from the files", "error", err)
			index = map[string]*entry{}
		}
	}
	files, err := os.ReadDir(c.cfg.Dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if !hashRE.MatchString(f.Name()) || !f.Type().IsRegular() {
			continue
		}
		info, err := f.Info()
		if err != nil {
			return err
		}
		e := &entry{Size: info.Size(), LastUsed: info.ModTime().UnixNano()}
		if old := index[f.Name()]; old != nil {
			e.IDs, e.LastUsed = old.IDs, max(old.LastUsed, 1)
		}
		c.entries[f.Name()] = e
	}
	return c.saveLocked()
}

// saveLocked writes the index through a temporary file. c.mu is held
// (or c is not shared yet).
func (c *Cache) saveLocked() error {
	data, err := json.Marshal(c.entries)
	if err != nil {
		return err
	}
	tmp := filepath.Join(c.cfg.Dir, partDir, indexFile)
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.cfg.Dir, indexFile))
}

// Path returns where the file of an image with hash hashValue is (or
// would be) kept.
func (c *Cache) Path(hashValue string) string { return filepath.Join(c.cfg.Dir, hashValue) }

// Get returns the local path of img's data, downloading it first if the
// cache does not hold it. Concurrent calls for one image share one
// download; a caller whose ctx ends stops waiting, but the download goes
// on for the others.
func (c *Cache) Get(ctx context.Context, img Image) (string, error) {
	if !hashRE.MatchString(img.HashValue) {
		return "", fmt.Errorf("image %s: no valid sha512 recorded (os_hash_value %q); is its upload finished?", img.ID, img.HashValue)
	}
	if img.Size < 0 {
		return "", fmt.Errorf("image %s: negative size %d", img.ID, img.Size)
	}
	for {
		c.mu.Lock()
		if e := c.entries[img.HashValue]; e != nil {
			c.touchLocked(img, e)
			c.mu.Unlock()
			c.metrics.hit()
			return c.Path(img.HashValue), nil
		}
		f := c.flights[img.HashValue]
		if f == nil {
			f = &flight{done: make(chan struct{})}
			c.flights[img.HashValue] = f
			c.mu.Unlock()
			c.metrics.miss()
			go c.download(img, f)
		} else {
			c.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("image %s: %w", img.ID, ctx.Err())
		case <-f.done:
		}
		if f.err != nil {
			return "", f.err
		}
		// Loop: the entry is there now (or was evicted at once by a
		// concurrent fill, and is fetched again).
	}
}

// touchLocked records a use of e by img.
func (c *Cache) touchLocked(img Image, e *entry) {
	e.LastUsed = max(c.cfg.Now().UnixNano(), e.LastUsed+1)
	if img.ID != "" && !slices.Contains(e.IDs, img.ID) {
		e.IDs = append(e.IDs, img.ID)
		slices.Sort(e.IDs)
	}
	if err := c.saveLocked(); err != nil {
		c.logger.Warn("cannot write the image cache index", "error", err)
	}
}

// download fetches img into the cache and ends flight f. It runs on its
// own context: waiters may give up, the download does not.
func (c *Cache) download(img Image, f *flight) {
	start := c.cfg.Now()
	err := c.fetch(img)
	c.mu.Lock()
	delete(c.flights, img.HashValue)
	if err == nil {
		e := &entry{Size: img.Size}
		c.entries[img.HashValue] = e
		c.touchLocked(img, e)
		c.evictLocked(img.HashValue)
	}
	c.mu.Unlock()
	if err != nil {
		c.metrics.failed()
		c.logger.Error("image download failed", "image_id", img.ID, "error", err)
	} else {
		c.metrics.downloaded(img.Size)
		c.logger.Info("cached image", "image_id", img.ID, "bytes", img.Size, "duration", c.cfg.Now().Sub(start))
	}
	f.err = err
	close(f.done)
}

// fetch downloads img to a temporary file, checking size and hash as it
// writes, and renames it into place when both match.
func (c *Cache) fetch(img Image) (err error) {
	ctx := context.Background()
	rc, err := c.cfg.Fetcher.Fetch(ctx, img)
	if err != nil {
		return fmt.Errorf("image %s: download: %w", img.ID, err)
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(filepath.Join(c.cfg.Dir, partDir), img.HashValue[:16]+".part-*")
	if err != nil {
		return fmt.Errorf("image %s: %w", img.ID, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	h := sha512.New()
	// One byte more than expected shows data that is too long.
	n, err := copySparse(h, tmp, io.LimitReader(rc, img.Size+1))
	if err != nil {
		return fmt.Errorf("image %s: download: %w", img.ID, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); n != img.Size || got != img.HashValue {
		return fmt.Errorf("image %s: %w: got %d bytes with sha512 %.16s…, want %d bytes with %.16s…",
			img.ID, ErrHashMismatch, n, got, img.Size, img.HashValue)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("image %s: %w", img.ID, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("image %s: %w", img.ID, err)
	}
	if err := os.Chmod(tmp.Name(), 0o444); err != nil {
		return fmt.Errorf("image %s: %w", img.ID, err)
	}
	if err := os.Rename(tmp.Name(), c.Path(img.HashValue)); err != nil {
		return fmt.Errorf("image %s: %w", img.ID, err)
	}
	return nil
}

// evictLocked removes least recently used entries no instance uses
// until the cache fits its bound; keep is never removed.
func (c *Cache) evictLocked(keep string) {
	if c.cfg.MaxBytes == 0 {
		return
	}
	total := int64(0)
	for _, e := range c.entries {
		total += e.Size
	}
	if total <= c.cfg.MaxBytes {
		return
	}
	var inUse map[string]bool
	if c.cfg.InUse != nil {
		inUse = c.cfg.InUse()
	}
	hashes := make([]string, 0, len(c.entries))
	for h := range c.entries {
		hashes = append(hashes, h)
	}
	sort.Slice(hashes, func(i, j int) bool { return c.entries[hashes[i]].LastUsed < c.entries[hashes[j]].LastUsed })
	for _, h := range hashes {
		if total <= c.cfg.MaxBytes {
			break
		}
		e := c.entries[h]
		if h == keep || slices.ContainsFunc(e.IDs, func(id string) bool { return inUse[id] }) {
			continue
		}
		if err := os.Remove(c.Path(h)); err != nil && !errors.Is(err, os.ErrNotExist) {
			c.logger.Warn("cannot evict a cached image", "hash", h[:16], "error", err)
			continue
		}
		delete(c.entries, h)
		total -= e.Size
		c.metrics.evicted()
		c.logger.Info("evicted cached image", "image_ids", e.IDs, "bytes", e.Size)
	}
	if total > c.cfg.MaxBytes {
		c.logger.Warn("image cache is over its bound: the rest is in use", "bytes", total, "max_bytes", c.cfg.MaxBytes)
	}
	if err := c.saveLocked(); err != nil {
		c.logger.Warn("cannot write the image cache index", "error", err)
	}
}

// Entry describes one cached image, for listings and tests.
type Entry struct {
	HashValue string
	IDs       []string
	Size      int64
	LastUsed  time.Time
}

// List returns the cached images, least recently used first.
func (c *Cache) List() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Entry, 0, len(c.entries))
	for h, e := range c.entries {
		out = append(out, Entry{HashValue: h, IDs: slices.Clone(e.IDs), Size: e.Size, LastUsed: time.Unix(0, e.LastUsed)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].LastUsed.Before(out[j].LastUsed) })
	return out
}

// Size returns the bytes the cache holds.
func (c *Cache) Size() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := int64(0)
	for _, e := range c.entries {
		total += e.Size
	}
	return total
}

// MaxBytes returns the cache's bound; 0 means unbounded.
func (c *Cache) MaxBytes() int64 { return c.cfg.MaxBytes }
