package diskxfer

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// exporter is a source agent with one allocation's disks.
type exporter struct {
	mu     sync.Mutex
	token  string
	busy   bool
	disks  map[string][]byte
	files  map[string]string // role → file name in a shared pool
	ranges []string          // Range headers of disk requests, in order
	// cutAfter, when > 0, makes the next disk response stop after that
	// many bytes, as a source agent dying mid-copy.
	cutAfter int
}

func (e *exporter) lookup(_ context.Context, allocID, token string) ([]virt.ExportedDisk, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case allocID != "a1":
		return nil, ErrUnknown
	case token != e.token:
		return nil, ErrDenied
	case e.busy:
		return nil, virt.InvalidState("export the disks of", virt.PowerRunning)
	}
	var out []virt.ExportedDisk
	for _, role := range []string{virt.DiskRoleRoot, virt.DiskRoleEphemeral} {
		data, ok := e.disks[role]
		if !ok {
			continue
		}
		base := ""
		if role == virt.DiskRoleRoot {
			base = "img-1"
		}
		out = append(out, virt.ExportedDisk{Role: role, Format: "qcow2", BackingImageID: base, File: e.files[role],
			Open: func() (io.ReadSeekCloser, error) { return nopReadSeeker{bytes.NewReader(data)}, nil }})
	}
	return out, nil
}

type nopReadSeeker struct{ *bytes.Reader }

func (nopReadSeeker) Close() error { return nil }

func (e *exporter) serve(t *testing.T) *httptest.Server {
	s := NewServer(e.lookup, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		cut := 0
		if strings.Count(strings.TrimPrefix(r.URL.Path, MountPath), "/") == 1 {
			e.ranges = append(e.ranges, r.Header.Get("Range"))
			cut, e.cutAfter = e.cutAfter, 0
		}
		e.mu.Unlock()
		if cut > 0 {
			s.ServeHTTP(&cutWriter{ResponseWriter: w, left: cut}, r)
			panic(http.ErrAbortHandler) // drop the connection mid-body
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

type cutWriter struct {
	http.ResponseWriter
	left int
}

func (c *cutWriter) Write(b []byte) (int, error) {
	if c.left <= 0 {
		return 0, errors.New("cut")
	}
	if len(b) > c.left {
		b = b[:c.left]
	}
	n, err := c.ResponseWriter.Write(b)
	c.left -= n
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	return n, err
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func newExporter(t *testing.T) (*exporter, *structs.DiskSource) {
	e := &exporter{token: "tok", disks: map[string][]byte{
		virt.DiskRoleRoot: randomBytes(t, 3<<20), virt.DiskRoleEphemeral: randomBytes(t, 1<<20+17),
	}}
	ts := e.serve(t)
	return e, &structs.DiskSource{AllocID: "a1", URL: ts.URL + MountPath, Token: "tok"}
}

func checkFetched(t *testing.T, e *exporter, got []virt.ImportedDisk) {
	t.Helper()
	if len(got) != 2 || got[0].Role != virt.DiskRoleRoot || got[0].BackingImageID != "img-1" || got[1].BackingImageID != "" {
		t.Fatalf("fetched %+v", got)
	}
	for _, d := range got {
		data, err := os.ReadFile(d.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, e.disks[d.Role]) {
			t.Errorf("%s disk differs from the source's (%d bytes, want %d)", d.Role, len(data), len(e.disks[d.Role]))
		}
	}
}

func TestFetchCopiesEveryDisk(t *testing.T) {
	t.Parallel()
	e, src := newExporter(t)
	dir := filepath.Join(t.TempDir(), "stage")
	got, err := (&Fetcher{}).Fetch(t.Context(), src, dir)
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, e, got)
	// A second fetch (a retried spawn) finds them done and sends nothing.
	n := len(e.ranges)
	if _, err := (&Fetcher{}).Fetch(t.Context(), src, dir); err != nil {
		t.Fatal(err)
	}
	if len(e.ranges) != n {
		t.Errorf("a repeated fetch downloaded again: %v", e.ranges[n:])
	}
}

// TestFetchResumesAfterTheSourceDies: a copy cut mid-disk leaves its
// partial file, and the next fetch asks only for the rest.
func TestFetchResumesAfterTheSourceDies(t *testing.T) {
	t.Parallel()
	e, src := newExporter(t)
	dir := t.TempDir()
	e.cutAfter = 1 << 20
	if _, err := (&Fetcher{}).Fetch(t.Context(), src, dir); err == nil {
		t.Fatal("a fetch whose source died mid-copy succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, virt.DiskRoleRoot)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a half-copied disk became the disk: %v", err)
	}
	st, err := os.Stat(filepath.Join(dir, virt.DiskRoleRoot+".part"))
	if err != nil || st.Size() == 0 || st.Size() >= 3<<20 {
		t.Fatalf("partial file after the cut: %v, %v", st, err)
	}
	got, err := (&Fetcher{}).Fetch(t.Context(), src, dir)
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, e, got)
	if want := "bytes="; len(e.ranges) < 2 || !strings.HasPrefix(e.ranges[1], want) {
		t.Errorf("the second fetch asked for %q, want a resumed range", e.ranges)
	}
}

// TestFetchDiscardsACorruptCopy: a partial file whose bytes are not the
// source's fails the digest check, is deleted, and the next fetch starts
// over.
func TestFetchDiscardsACorruptCopy(t *testing.T) {
	t.Parallel()
	e, src := newExporter(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, virt.DiskRoleRoot+".part"), randomBytes(t, 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&Fetcher{}).Fetch(t.Context(), src, dir)
	if err == nil || !strings.Contains(err.Error(), "digest mismatch") {
		t.Fatalf("fetch over a corrupt partial file = %v, want a digest mismatch", err)
	}
	if _, err := os.Stat(filepath.Join(dir, virt.DiskRoleRoot)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a corrupt copy became the disk")
	}
	got, err := (&Fetcher{}).Fetch(t.Context(), src, dir)
	if err != nil {
		t.Fatal(err)
	}
	checkFetched(t, e, got)
}

func TestExportRefusals(t *testing.T) {
	t.Parallel()
	e, src := newExporter(t)
	for _, tc := range []struct {
		name  string
		edit  func(s *structs.DiskSource)
		busy  bool
		words string
	}{
		{"wrong token", func(s *structs.DiskSource) { s.Token = "nope" }, false, "403"},
		{"no token", func(s *structs.DiskSource) { s.Token = "" }, false, "401"},
		{"unknown allocation", func(s *structs.DiskSource) { s.AllocID = "a2" }, false, "404"},
		{"running instance", func(*structs.DiskSource) {}, true, "409"},
		{"no export", func(s *structs.DiskSource) { s.URL = "" }, false, "publishes no disk export"},
	} {
		s := *src
		tc.edit(&s)
		e.mu.Lock()
		e.busy = tc.busy
		e.mu.Unlock()
		dir := t.TempDir()
		_, err := (&Fetcher{}).Fetch(t.Context(), &s, dir)
		if err == nil || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: fetch = %v, want %q", tc.name, err, tc.words)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s: the refused fetch left %d files", tc.name, len(ents))
		}
	}
}
