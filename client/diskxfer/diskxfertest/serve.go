// Package diskxfertest serves a test's hypervisor agents' disk exports
// and live-migration prepare calls, as the agent daemon does on its HTTP
// port, for tests that run
// client.Client directly. It must never be imported by non-test code.
package diskxfertest

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratus-cloud/stratus/client/diskxfer"
	"github.com/stratus-cloud/stratus/virt"
)

// Exporter is what serves an allocation's disks and prepares a live
// migration's destination: a *client.Client.
type Exporter interface {
	ExportDisks(ctx context.Context, allocID, token string) ([]virt.ExportedDisk, error)
	PrepareLiveMigration(ctx context.Context, allocID, token string) (diskxfer.Prepared, error)
}

// Export is one listening disk export.
type Export struct {
	// URL is what the agent publishes (client.Config.DiskExportURL).
	URL string
	to  atomic.Value // Exporter
	// sent counts the disk data bytes served (manifests aside).
	sent atomic.Int64
}

// Sent is how many bytes of disk data the export has served: none for
// a move between hosts sharing their pool.
func (e *Export) Sent() int64 { return e.sent.Load() }

// Serve starts a disk export on 127.0.0.1, closed when the test ends;
// requests fail as unknown until Set names the agent behind it.
func Serve(t testing.TB) *Export {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &Export{URL: "http://" + ln.Addr().String() + diskxfer.MountPath}
	lookup := func(ctx context.Context, allocID, token string) ([]virt.ExportedDisk, error) {
		x, _ := e.to.Load().(Exporter)
		if x == nil {
			return nil, diskxfer.ErrUnknown
		}
		return x.ExportDisks(ctx, allocID, token)
	}
	prepare := func(ctx context.Context, allocID, token string) (diskxfer.Prepared, error) {
		x, _ := e.to.Load().(Exporter)
		if x == nil {
			return diskxfer.Prepared{}, diskxfer.ErrUnknown
		}
		return x.PrepareLiveMigration(ctx, allocID, token)
	}
	inner := diskxfer.NewServer(lookup, nil).WithPrepare(prepare)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Count(strings.TrimPrefix(r.URL.Path, diskxfer.MountPath), "/") == 1 && r.Method == http.MethodGet {
			w = &counter{ResponseWriter: w, n: &e.sent}
		}
		inner.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return e
}

// Set makes x the agent whose disks the export serves.
func (e *Export) Set(x Exporter) { e.to.Store(x) }

// counter counts the bytes of a disk's data it passes on.
type counter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n.Add(int64(n))
	return n, err
}
