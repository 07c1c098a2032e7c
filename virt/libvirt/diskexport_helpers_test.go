package libvirt_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stratus-cloud/stratus/client/diskxfer"
	"github.com/stratus-cloud/stratus/virt"
)

// exportState is a host's disk export as the tests see it.
type exportState struct {
	url string
	// slow makes disk data flow at about 8 MiB/s, so that a test can
	// kill an agent while a copy is under way.
	slow atomic.Bool
	// gen changes when the host's agent restarts: a copy it was serving
	// is cut, as the agent's own HTTP server would be.
	gen atomic.Int64
	// ranges counts the disk requests that resumed at an offset.
	ranges atomic.Int64
	// sent counts the disk data bytes served (manifests aside).
	sent atomic.Int64
}

// diskExport serves the host's disks to other hosts' agents and their
// live migrations' prepare calls, as the agent daemon does on its HTTP
// port, through whichever agent the host runs now; it returns the URL
// to publish.
func (c *cloud) diskExport(h *host) string {
	c.t.Helper()
	if h.export != nil {
		return h.export.url
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	ex := &exportState{url: "http://" + ln.Addr().String() + diskxfer.MountPath}
	h.export = ex
	lookup := func(ctx context.Context, allocID, token string) ([]virt.ExportedDisk, error) {
		c.mu.Lock()
		a := h.agent
		c.mu.Unlock()
		if a == nil {
			return nil, diskxfer.ErrUnknown
		}
		return a.ExportDisks(ctx, allocID, token)
	}
	prepare := func(ctx context.Context, allocID, token string) (diskxfer.Prepared, error) {
		c.mu.Lock()
		a := h.agent
		c.mu.Unlock()
		if a == nil {
			return diskxfer.Prepared{}, diskxfer.ErrUnknown
		}
		return a.PrepareLiveMigration(ctx, allocID, token)
	}
	inner := diskxfer.NewServer(lookup, testLogger(c.t, "export-"+h.name)).WithPrepare(prepare)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isData := strings.Count(strings.TrimPrefix(r.URL.Path, diskxfer.MountPath), "/") == 1
		if isData && r.Header.Get("Range") != "" {
			ex.ranges.Add(1)
		}
		if isData && ex.slow.Load() {
			w = &slowWriter{ResponseWriter: w, ex: ex, gen: ex.gen.Load()}
		}
		if isData {
			w = &countingWriter{ResponseWriter: w, n: &ex.sent}
		}
		inner.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	c.t.Cleanup(func() { _ = srv.Close() })
	return ex.url
}

// slowWriter paces a disk's bytes and cuts them when the agent restarts.
type slowWriter struct {
	http.ResponseWriter
	ex  *exportState
	gen int64
}

func (s *slowWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		if s.ex.gen.Load() != s.gen {
			panic(http.ErrAbortHandler) // the serving agent died
		}
		n := min(len(b), 64<<10)
		m, err := s.ResponseWriter.Write(b[:n])
		written += m
		if err != nil {
			return written, err
		}
		if f, ok := s.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
		b = b[n:]
		time.Sleep(8 * time.Millisecond)
	}
	return written, nil
}

// countingWriter counts the bytes of a disk's data it passes on.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}
