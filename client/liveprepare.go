package client

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/stratus-cloud/stratus/client/diskxfer"
	"github.com/stratus-cloud/stratus/internal/retry"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// A live migration's destination prepares before the source sends the
// guest, as Nova's pre_live_migration on the destination compute: the
// source's agent asks the destination's (Allocation.PrepareDest, agent
// to agent with the move's token) and the destination's agent fetches
// the instance's image into its image cache, which then keeps it as the
// image of a live allocation. The source's driver builds the
// destination's root overlay on that file, so only what the guest wrote
// travels. A destination that cannot prepare — dead, restarting too
// long, or without the image's data — fails the migration before it
// starts: the instance stays on its source as it was. One whose agent
// predates the call (diskxfer.ErrNoPrepare) is migrated unprepared, as
// before.

const (
	// prepareAttempts bounds how often the source asks: enough to ride
	// out a dropped connection, short enough that a dead destination
	// fails the migration promptly.
	prepareAttempts = 3
	// prepareTimeout bounds one prepare call, which waits for the
	// image's download on the destination.
	prepareTimeout = 30 * time.Minute
)

// PrepareLiveMigration prepares allocation allocID, a live migration's
// destination on this host, for the holder of token: it fetches the
// instance's image into the image cache and returns its path there. The
// allocation must be this agent's, carry that token and still be held
// (not yet the instance's). It is the diskxfer.PrepareFunc of this host.
func (c *Client) PrepareLiveMigration(ctx context.Context, allocID, token string) (diskxfer.Prepared, error) {
	r := c.runner(allocID)
	if r == nil {
		return diskxfer.Prepared{}, diskxfer.ErrUnknown
	}
	r.mu.Lock()
	want, held, imageID := r.exportToken, r.held, r.imageID
	r.mu.Unlock()
	if want == "" || subtle.ConstantTimeCompare([]byte(want), []byte(token)) != 1 {
		return diskxfer.Prepared{}, diskxfer.ErrDenied
	}
	if !held {
		return diskxfer.Prepared{}, fmt.Errorf("%w: the allocation is not waiting for a live migration", diskxfer.ErrBusy)
	}
	// The agent's shutdown ends the prepare too: the source then fails
	// the migration rather than wait for an agent that is gone.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	start := time.Now()
	path, err := c.imagePathCtx(ctx, imageID)
	if err != nil {
		return diskxfer.Prepared{}, fmt.Errorf("fetch the instance's image: %w", err)
	}
	r.logger.Info("prepared for an incoming live migration", "image_id", imageID, "image_path", path, "took", time.Since(start).Round(time.Millisecond))
	return diskxfer.Prepared{ImagePath: path}, nil
}

// liveTarget is where the pending live migration goes: ActionArg, with
// what the destination prepared when the servers named it a
// PrepareDest with a disk export. An error means the destination could
// not prepare and the migration must not start.
func (r *runner) liveTarget() (virt.LiveMigrationTarget, error) {
	a := r.alloc
	to := virt.LiveMigrationTarget{URI: a.ActionArg}
	pd := a.PrepareDest
	if pd == nil || pd.URL == "" {
		if pd != nil {
			r.logger.Warn("the destination publishes no disk export; migrating without preparing it", "to_host", pd.HostID)
		}
		return to, nil
	}
	b := retry.Backoff{Min: 500 * time.Millisecond, Max: 4 * time.Second}
	var err error
	for attempt := 1; attempt <= prepareAttempts; attempt++ {
		var p diskxfer.Prepared
		if p, err = r.prepareOnce(pd); err == nil {
			to.ImagePath = p.ImagePath
			r.logger.Info("the destination is prepared", "to_host", pd.HostID, "image_path", p.ImagePath)
			return to, nil
		}
		if errors.Is(err, diskxfer.ErrNoPrepare) {
			r.logger.Warn("the destination's agent is too old to prepare; migrating without preparing it", "to_host", pd.HostID)
			return to, nil
		}
		if r.c.ctx.Err() != nil {
			return to, err
		}
		r.logger.Warn("the destination cannot prepare yet", "to_host", pd.HostID, "attempt", attempt, "error", err)
		if attempt < prepareAttempts && !r.c.sleep(b.Next()) {
			return to, r.c.ctx.Err()
		}
	}
	return to, err
}

func (r *runner) prepareOnce(pd *structs.DiskSource) (diskxfer.Prepared, error) {
	ctx, cancel := context.WithTimeout(r.c.ctx, prepareTimeout)
	defer cancel()
	return diskxfer.Prepare(ctx, r.c.cfg.DiskHTTP, pd)
}

// sendLive migrates the instance to to with the driver lm, using what
// the destination prepared when there is something and the driver can.
func (r *runner) sendLive(lm virt.LiveMigrator, to virt.LiveMigrationTarget) error {
	if p, ok := lm.(virt.PreparedLiveMigrator); ok && to.ImagePath != "" {
		return p.LiveMigrateTo(r.c.ctx, r.alloc.InstanceID, to)
	}
	return lm.LiveMigrate(r.c.ctx, r.alloc.InstanceID, to.URI)
}
