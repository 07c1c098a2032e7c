package client

import (
	"context"
	"crypto/subtle"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stratus-cloud/stratus/client/diskxfer"
	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// Disks move with a resize or cold migration to another host: the
// servers give the source allocation a token (DiskExportToken) and the
// destination where to fetch (DiskSource). The source's agent serves the
// powered-off instance's disks (ExportDisks, mounted by the agent
// daemon); the destination's agent fetches them into a staging directory
// before it spawns (fetchDisks) and its driver builds the instance on
// them; when both hosts share the driver's pool (virt.SharedPool) the
// destination's driver copies the source's files inside it instead. The source's disks are not touched: a revert boots them again,
// a confirm destroys them after the destination is up.

// fetchAttempts bounds how often a destination tries to fetch the disks
// before its spawn fails (and the move with it, the source resuming):
// enough to ride out a source agent's restart.
const fetchAttempts = 6

// ExportDisks returns the disks of allocation allocID to the holder of
// token: the allocation must be one of this agent's, carry that token
// and be desired stopped, and its instance powered off. It is the
// diskxfer.Lookup of this host.
func (c *Client) ExportDisks(ctx context.Context, allocID, token string) ([]virt.ExportedDisk, error) {
	r := c.runner(allocID)
	if r == nil {
		return nil, diskxfer.ErrUnknown
	}
	r.mu.Lock()
	want, stopped, id := r.exportToken, r.desiredStopped, r.instanceID
	r.mu.Unlock()
	if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(token)) != 1 {
		return nil, diskxfer.ErrDenied
	}
	if !stopped {
		return nil, fmt.Errorf("%w: the instance is not being stopped for a move", diskxfer.ErrBusy)
	}
	mover, ok := c.driver.(virt.DiskMover)
	if !ok {
		return nil, fmt.Errorf("the %s driver cannot send disks: %w", c.driver.Name(), virt.ErrNotSupported)
	}
	return mover.ExportDisks(ctx, id)
}

// stagingDir is where an allocation's fetched disks wait for its spawn.
func (c *Client) stagingDir(allocID string) string {
	return filepath.Join(c.cfg.DataDir, "disks", allocID)
}

// fetchDisks brings the disks of a move's source for the spawn of this
// allocation, retrying a failed fetch (which resumes where it stopped).
func (r *runner) fetchDisks(src *structs.DiskSource) ([]virt.ImportedDisk, error) {
	if _, ok := r.c.driver.(virt.DiskMover); !ok {
		return nil, fmt.Errorf("the %s driver cannot take over another host's disks: %w", r.c.driver.Name(), virt.ErrNotSupported)
	}
	f := &diskxfer.Fetcher{HTTP: r.c.cfg.DiskHTTP, Progress: func(role string, done, total int64) {
		r.logger.Info("fetching disk", "role", role, "bytes", done, "of", total)
	}}
	if pool, ok := r.c.driver.(virt.SharedPool); ok {
		// Hosts sharing the pool: the disks are copied inside it.
		f.Local = pool.SharedFile
		f.Skipped = func(role string, reason error) {
			r.logger.Info("fetching a disk the source keeps in a shared pool", "role", role, "reason", reason)
		}
	}
	dir := r.c.stagingDir(r.allocID)
	b := retry.Backoff{Min: 500 * time.Millisecond, Max: 8 * time.Second}
	var err error
	for attempt := 1; attempt <= fetchAttempts; attempt++ {
		var disks []virt.ImportedDisk
		start := time.Now()
		if disks, err = f.Fetch(r.c.ctx, src, dir); err == nil {
			r.logger.Info("fetched the instance's disks", "from_host", src.HostID, "disks", len(disks),
				"from_shared_pool", sharedCount(disks), "took", time.Since(start).Round(time.Millisecond))
			return disks, nil
		}
		if r.c.ctx.Err() != nil {
			return nil, err
		}
		r.logger.Warn("cannot fetch the instance's disks yet", "attempt", attempt, "error", err)
		if attempt < fetchAttempts && !r.c.sleep(b.Next()) {
			return nil, r.c.ctx.Err()
		}
	}
	return nil, fmt.Errorf("fetch the disks from the source host: %w", err)
}

// sharedCount is how many of disks were taken from a shared pool.
func sharedCount(disks []virt.ImportedDisk) int {
	n := 0
	for _, d := range disks {
		if d.Shared {
			n++
		}
	}
	return n
}

// dropStagedDisks deletes the allocation's fetched disks once its driver
// took them over, or when the allocation goes.
func (r *runner) dropStagedDisks() {
	if err := os.RemoveAll(r.c.stagingDir(r.allocID)); err != nil {
		r.logger.Warn("cannot delete the fetched disks", "error", err)
	}
}
