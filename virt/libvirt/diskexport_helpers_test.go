package libvirt_test

import (
	"context"
	"net"
	"net/http"

	"github.com/stratus-cloud/stratus/client/diskxfer"
	"github.com/stratus-cloud/stratus/virt"
)

// diskExport serves the host's disks to other hosts' agents, as the
// agent daemon does on its HTTP port, through whichever agent the host
// runs now; it returns the URL to publish.
func (c *cloud) diskExport(h *host) string {
	c.t.Helper()
	if h.exportURL != "" {
		return h.exportURL
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		c.t.Fatal(err)
	}
	lookup := func(ctx context.Context, allocID, token string) ([]virt.ExportedDisk, error) {
		c.mu.Lock()
		a := h.agent
		c.mu.Unlock()
		if a == nil {
			return nil, diskxfer.ErrUnknown
		}
		return a.ExportDisks(ctx, allocID, token)
	}
	srv := &http.Server{Handler: diskxfer.NewServer(lookup, testLogger(c.t, "export-"+h.name))}
	go func() { _ = srv.Serve(ln) }()
	c.t.Cleanup(func() { _ = srv.Close() })
	h.exportURL = "http://" + ln.Addr().String() + diskxfer.MountPath
	return h.exportURL
}
