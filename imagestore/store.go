// Package imagestore owns the content-addressed blob files on a server's
// disk: image data lives under <dir>/sha512/<hex of its SHA-512>. A blob
// is written to a temporary file while its MD5 and SHA-512 are computed,
// synced, then renamed into place, so a file under sha512/ is always
// complete and named by its content; runs of zeros are left as holes, so
// sparse disk images stay sparse. The package also reads, lists and
// removes blobs, and inspects a blob's first bytes for a disk's virtual
// size.
//
// It must not know about Raft, RPC or image records: which images name a
// blob, which servers hold it and when it may be removed are the server's
// decisions.
package imagestore

import (
	"bytes"
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNotFound is returned for a blob the store does not hold.
var ErrNotFound = errors.New("imagestore: blob not found")

// ErrHashMismatch is returned by Commit when the data is not the blob
// that was expected.
var ErrHashMismatch = errors.New("imagestore: data does not match the expected SHA-512")

// ErrTooLarge is returned by Write past the writer's limit.
var ErrTooLarge = errors.New("imagestore: data exceeds the size limit")

// Store is one directory of blobs. It is safe for concurrent use: every
// blob is written under a temporary name and renamed, and renaming a blob
// over an identical one is harmless.
type Store struct {
	root string
}

// Open opens (creating it if needed) the store rooted at dir, and removes
// temporary files an interrupted write left behind.
func Open(dir string) (*Store, error) {
	s := &Store{root: dir}
	for _, d := range []string{s.blobDir(), s.tmpDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("imagestore: %w", err)
		}
	}
	leftovers, err := os.ReadDir(s.tmpDir())
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	for _, e := range leftovers {
		_ = os.Remove(filepath.Join(s.tmpDir(), e.Name()))
	}
	return s, nil
}

// Dir is the store's root directory.
func (s *Store) Dir() string { return s.root }

func (s *Store) blobDir() string { return filepath.Join(s.root, "sha512") }
func (s *Store) tmpDir() string  { return filepath.Join(s.root, "tmp") }

// ValidHash reports whether h is a lowercase hex SHA-512, the only names
// the store accepts (so no name can escape its directory).
func ValidHash(h string) bool {
	if len(h) != 2*sha512.Size {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (s *Store) path(h string) (string, error) {
	if !ValidHash(h) {
		return "", fmt.Errorf("imagestore: %q is not a SHA-512", h)
	}
	return filepath.Join(s.blobDir(), h), nil
}

// Blob describes a stored blob.
type Blob struct {
	// Hash is the hex SHA-512; MD5 the hex MD5.
	Hash    string
	MD5     string
	Size    int64
	ModTime time.Time
	// Header is the first bytes of the data (up to HeaderSize), for
	// format inspection; only Commit fills it.
	Header []byte
}

// HeaderSize is how many leading bytes Commit keeps for inspection.
const HeaderSize = 512

// Has reports whether the store holds the blob.
func (s *Store) Has(h string) bool {
	p, err := s.path(h)
	if err != nil {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Open opens a blob for reading; the caller closes it. It returns the
// blob's size too.
func (s *Store) Open(h string) (*os.File, int64, error) {
	p, err := s.path(h)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("imagestore: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("imagestore: %w", err)
	}
	return f, st.Size(), nil
}

// Remove deletes a blob; a missing one is not an error.
func (s *Store) Remove(h string) error {
	p, err := s.path(h)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("imagestore: %w", err)
	}
	return nil
}

// List returns every blob's hash, size and modification time (not its
// MD5, which would mean reading it).
func (s *Store) List() ([]Blob, error) {
	entries, err := os.ReadDir(s.blobDir())
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	out := make([]Blob, 0, len(entries))
	for _, e := range entries {
		if !ValidHash(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, Blob{Hash: e.Name(), Size: info.Size(), ModTime: info.ModTime()})
	}
	return out, nil
}

// Writer receives one blob's data. Write it, then Commit or Abort.
type Writer struct {
	store  *Store
	f      *os.File
	md5    hash.Hash
	sha    hash.Hash
	n      int64
	hole   int64 // zeros received but not written: a pending hole
	header []byte
	limit  int64
	done   bool
}

// NewWriter starts a blob. limit bounds its size (0 for none).
func (s *Store) NewWriter(limit int64) (*Writer, error) {
	f, err := os.CreateTemp(s.tmpDir(), "blob-*")
	if err != nil {
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	return &Writer{store: s, f: f, md5: md5.New(), sha: sha512.New(), limit: limit}, nil
}

// blockSize is the granularity at which zeros become holes.
const blockSize = 64 << 10

var zeros = make([]byte, blockSize)

// parallelHashMin is the write size from which MD5 and SHA-512 are
// computed concurrently; they are the cost of storing a blob.
const parallelHashMin = 256 << 10

// Write hashes p and stores it, leaving holes for blocks of zeros.
func (w *Writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, errors.New("imagestore: write after commit or abort")
	}
	if w.limit > 0 && w.n+int64(len(p)) > w.limit {
		return 0, ErrTooLarge
	}
	if len(w.header) < HeaderSize {
		w.header = append(w.header, p[:min(len(p), HeaderSize-len(w.header))]...)
	}
	w.hash(p)
	for rest := p; len(rest) > 0; {
		block := rest[:min(len(rest), blockSize)]
		rest = rest[len(block):]
		if bytes.Equal(block, zeros[:len(block)]) {
			w.hole += int64(len(block))
			continue
		}
		if w.hole > 0 {
			if _, err := w.f.Seek(w.hole, io.SeekCurrent); err != nil {
				return 0, fmt.Errorf("imagestore: %w", err)
			}
			w.hole = 0
		}
		if _, err := w.f.Write(block); err != nil {
			return 0, fmt.Errorf("imagestore: %w", err)
		}
	}
	w.n += int64(len(p))
	return len(p), nil
}

func (w *Writer) hash(p []byte) {
	if len(p) < parallelHashMin {
		w.md5.Write(p)
		w.sha.Write(p)
		return
	}
	done := make(chan struct{})
	go func() {
		w.md5.Write(p)
		close(done)
	}()
	w.sha.Write(p)
	<-done
}

// Written is how many bytes were written so far.
func (w *Writer) Written() int64 { return w.n }

// Abort discards the data.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	name := w.f.Name()
	w.f.Close()
	_ = os.Remove(name)
}

// Commit syncs the data and moves it into place under its SHA-512. With
// expect set, data of another hash is discarded with ErrHashMismatch.
func (w *Writer) Commit(expect string) (*Blob, error) {
	if w.done {
		return nil, errors.New("imagestore: commit after commit or abort")
	}
	sum := hex.EncodeToString(w.sha.Sum(nil))
	if expect != "" && !strings.EqualFold(sum, expect) {
		w.Abort()
		return nil, ErrHashMismatch
	}
	name := w.f.Name()
	fail := func(err error) (*Blob, error) {
		w.Abort()
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	if w.hole > 0 {
		// A trailing hole: extend the file without writing.
		if err := w.f.Truncate(w.n); err != nil {
			return fail(err)
		}
	}
	if err := w.f.Sync(); err != nil {
		return fail(err)
	}
	w.done = true
	if err := w.f.Close(); err != nil {
		_ = os.Remove(name)
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	final, _ := w.store.path(sum)
	if err := os.Rename(name, final); err != nil {
		_ = os.Remove(name)
		return nil, fmt.Errorf("imagestore: %w", err)
	}
	syncDir(w.store.blobDir())
	now := time.Now()
	if st, err := os.Stat(final); err == nil {
		now = st.ModTime()
	}
	return &Blob{Hash: sum, MD5: hex.EncodeToString(w.md5.Sum(nil)), Size: w.n, ModTime: now, Header: w.header}, nil
}

// syncDir makes a rename durable; failures only weaken durability.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
