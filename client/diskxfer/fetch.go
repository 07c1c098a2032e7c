package diskxfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// roleRE is what a manifest's role may be: it names files here.
var roleRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// Progress, when set, is told how many bytes of a disk have arrived.
type Progress func(role string, done, total int64)

// Fetcher fetches a move's disks into a staging directory.
type Fetcher struct {
	// HTTP is the client it fetches with; nil means http.DefaultClient.
	HTTP *http.Client
	// Progress is told how the fetch goes; nil for silence.
	Progress Progress
	// Local, when set, finds a disk's file (the manifest's File) in
	// this host's own shared pool (virt.SharedPool.SharedFile): a disk
	// found there with the manifest's size and digest is handed to the
	// driver as a shared file to copy locally, and not fetched.
	Local func(name string) (path string, ok bool)
	// Skipped, when set, is told why a disk the manifest names a file
	// for is fetched after all.
	Skipped func(role string, reason error)
}

// Fetch brings every disk of src into dir (created if missing) and
// returns them for the driver. What an earlier Fetch into dir completed
// is kept; a partial file is resumed. A disk whose digest does not match
// the manifest is deleted and the fetch fails, so a retry starts it
// afresh.
func (f *Fetcher) Fetch(ctx context.Context, src *structs.DiskSource, dir string) ([]virt.ImportedDisk, error) {
	if src == nil || src.URL == "" {
		return nil, errors.New("the source host publishes no disk export: its agent or driver cannot send disks")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("staging directory: %w", err)
	}
	m, err := f.manifest(ctx, src)
	if err != nil {
		return nil, err
	}
	var out []virt.ImportedDisk
	for _, d := range m.Disks {
		if !roleRE.MatchString(d.Role) || d.Size < 0 {
			return nil, fmt.Errorf("the source's manifest has a bad disk %q", d.Role)
		}
		if shared, ok := f.shared(d); ok {
			out = append(out, shared)
			continue
		}
		path := filepath.Join(dir, d.Role)
		if err := f.fetchDisk(ctx, src, d, path); err != nil {
			return nil, fmt.Errorf("fetch the %s disk: %w", d.Role, err)
		}
		out = append(out, virt.ImportedDisk{Role: d.Role, Format: d.Format, BackingImageID: d.BackingImageID, Path: path})
	}
	return out, nil
}

func (f *Fetcher) client() *http.Client {
	if f.HTTP != nil {
		return f.HTTP
	}
	return http.DefaultClient
}

func (f *Fetcher) get(ctx context.Context, src *structs.DiskSource, suffix string, header http.Header) (*http.Response, error) {
	u := strings.TrimSuffix(src.URL, "/") + "/" + url.PathEscape(src.AllocID) + suffix
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set(TokenHeader, src.Token)
	resp, err := f.client().Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		defer resp.Body.Close()
		var body struct{ Error string }
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if json.Unmarshal(raw, &body) != nil || body.Error == "" {
			body.Error = strings.TrimSpace(string(raw))
		}
		return nil, fmt.Errorf("source host answered %s: %s", resp.Status, body.Error)
	}
	return resp, nil
}

func (f *Fetcher) manifest(ctx context.Context, src *structs.DiskSource) (*Manifest, error) {
	resp, err := f.get(ctx, src, "", nil)
	if err != nil {
		return nil, fmt.Errorf("disk manifest: %w", err)
	}
	defer resp.Body.Close()
	var m Manifest
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("disk manifest: %w", err)
	}
	return &m, nil
}

// fetchDisk brings one disk to path, through path.part, resuming it.
func (f *Fetcher) fetchDisk(ctx context.Context, src *structs.DiskSource, d Disk, path string) error {
	done := path + ".sha256"
	if sum, err := os.ReadFile(done); err == nil && string(sum) == d.SHA256 {
		if st, err := os.Stat(path); err == nil && st.Size() == d.Size {
			return nil // fetched and checked by an earlier attempt
		}
	}
	part := path + ".part"
	file, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer file.Close()
	offset, err := file.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if offset > d.Size {
		if err := file.Truncate(0); err != nil {
			return err
		}
		offset = 0
	}
	if offset < d.Size {
		if err := f.download(ctx, src, d, file, offset); err != nil {
			return err
		}
	}
	sum, err := fileDigest(file)
	if err != nil {
		return err
	}
	if sum != d.SHA256 {
		_ = os.Remove(part)
		return fmt.Errorf("digest mismatch (got %s, the source says %s): the partial copy is discarded", sum, d.SHA256)
	}
	if err := file.Sync(); err != nil {
		return err
	}
	if err := os.Rename(part, path); err != nil {
		return err
	}
	return os.WriteFile(done, []byte(d.SHA256), 0o600)
}

// download appends the disk's bytes from offset to file.
func (f *Fetcher) download(ctx context.Context, src *structs.DiskSource, d Disk, file *os.File, offset int64) error {
	h := http.Header{}
	if offset > 0 {
		h.Set("Range", fmt.Sprintf("bytes=%d-", offset))
	}
	resp, err := f.get(ctx, src, "/"+url.PathEscape(d.Role), h)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if offset > 0 && resp.StatusCode != http.StatusPartialContent {
		// The source ignored the range: start over.
		if err := file.Truncate(0); err != nil {
			return err
		}
		offset = 0
	}
	if _, err := file.Seek(offset, io.SeekStart); err != nil {
		return err
	}
	w := io.Writer(file)
	if f.Progress != nil {
		w = &progressWriter{w: file, role: d.Role, done: offset, total: d.Size, fn: f.Progress}
	}
	if _, err := io.Copy(w, io.LimitReader(resp.Body, d.Size-offset)); err != nil {
		return fmt.Errorf("after %d bytes: %w", offset, err)
	}
	return nil
}

func fileDigest(file *os.File) (string, error) {
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, file); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

type progressWriter struct {
	w           io.Writer
	role        string
	done, total int64
	fn          Progress
	reported    int64
}

func (p *progressWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.done += int64(n)
	if p.done-p.reported >= 64<<20 || p.done == p.total {
		p.reported = p.done
		p.fn(p.role, p.done, p.total)
	}
	return n, err
}
