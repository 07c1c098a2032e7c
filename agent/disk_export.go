package agent

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/diskxfer"
	"github.com/stratus-cloud/stratus/virt"
)

// diskExports serves, at diskxfer.MountPath on the HTTP port, the disks
// this agent's hosts hand to a resize's or cold migration's destination
// on another host, and prepares the allocations of live migrations
// coming in (fetching their images). It is not an API route: the move's token, which
// only the two hosts' allocations carry, is the whole access check.
type diskExports struct {
	mu      sync.Mutex
	clients []*client.Client
}

// add makes a host's allocations exportable.
func (d *diskExports) add(c *client.Client) {
	d.mu.Lock()
	d.clients = append(d.clients, c)
	d.mu.Unlock()
}

// lookup asks each host in turn for the allocation's disks.
func (d *diskExports) lookup(ctx context.Context, allocID, token string) ([]virt.ExportedDisk, error) {
	d.mu.Lock()
	clients := append([]*client.Client(nil), d.clients...)
	d.mu.Unlock()
	for _, c := range clients {
		disks, err := c.ExportDisks(ctx, allocID, token)
		if !errors.Is(err, diskxfer.ErrUnknown) {
			return disks, err
		}
	}
	return nil, diskxfer.ErrUnknown
}

// prepare asks each host in turn to prepare the allocation for an
// incoming live migration.
func (d *diskExports) prepare(ctx context.Context, allocID, token string) (diskxfer.Prepared, error) {
	d.mu.Lock()
	clients := append([]*client.Client(nil), d.clients...)
	d.mu.Unlock()
	for _, c := range clients {
		p, err := c.PrepareLiveMigration(ctx, allocID, token)
		if !errors.Is(err, diskxfer.ErrUnknown) {
			return p, err
		}
	}
	return diskxfer.Prepared{}, diskxfer.ErrUnknown
}

// diskExportURL is the base URL other agents fetch this one's disks at.
func (a *Agent) diskExportURL() string {
	return a.httpScheme() + "://" + a.httpAddr + diskxfer.MountPath
}

// mountDiskExports serves the hosts' disk exports.
func (a *Agent) mountDiskExports(mux *http.ServeMux) {
	srv := diskxfer.NewServer(a.diskExports.lookup, a.logger.Named("disk-export")).WithPrepare(a.diskExports.prepare)
	mux.Handle(diskxfer.MountPath, srv)
}
