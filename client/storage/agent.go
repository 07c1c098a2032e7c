package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/structs"
)

// RPC reaches the servers.
type RPC interface {
	RPC(method string, args, reply any) error
}

// ImageFiles resolves an image to a local file (the image cache).
type ImageFiles interface {
	Get(ctx context.Context, img imagecache.Image) (string, error)
}

// Config configures an Agent.
type Config struct {
	// HostID is the storage host (the agent's registered host).
	HostID string
	Region string
	// NodeSecret authenticates the agent's calls about its host.
	NodeSecret string
	RPC        RPC
	Backend    Backend
	// Exports serves the volumes attached to instances on other hosts;
	// nil serves none (the servers then attach none across hosts).
	Exports Exporter
	// Images fetches images for volumes made from one; nil refuses
	// them.
	Images ImageFiles
	// Uploader sends volumes uploaded to images (upload.go) to the
	// servers; nil refuses uploads. WorkDir holds the converted image
	// while it is sent (default: the system's temporary directory).
	Uploader ImageUploader
	WorkDir  string
	Logger   hclog.Logger
	// MaxQueryTime bounds one blocking query (default 5 minutes).
	MaxQueryTime time.Duration
}

// Agent drives the volumes and snapshots of one storage host.
type Agent struct {
	cfg Config
	log hclog.Logger
	// failed is the first report of the current sync that did not
	// reach the servers.
	failed error
}

// New checks cfg and returns an agent.
func New(cfg Config) (*Agent, error) {
	if cfg.HostID == "" || cfg.RPC == nil || cfg.Backend == nil {
		return nil, errors.New("storage agent: a host id, an RPC client and a backend are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.MaxQueryTime <= 0 {
		cfg.MaxQueryTime = 5 * time.Minute
	}
	if cfg.WorkDir == "" {
		cfg.WorkDir = os.TempDir()
	}
	return &Agent{cfg: cfg, log: cfg.Logger}, nil
}

// Run watches the host's volumes until ctx ends: each answer of the
// blocking query is worked through, then the query waits for the next
// change. Failed reads are retried with a growing pause.
func (a *Agent) Run(ctx context.Context) {
	var index uint64
	backoff := time.Second
	for ctx.Err() == nil {
		resp, err := a.list(index)
		if err == nil {
			if err = a.sync(ctx, resp); err == nil {
				index = max(resp.Index, 1)
				backoff = time.Second
				continue
			}
			// A report that did not reach the servers: list again
			// at once after the pause, rather than wait for a change.
			index = 0
		}
		a.log.Warn("volume sync failed; retrying", "error", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (a *Agent) list(index uint64) (*structs.VolumeHostResponse, error) {
	var resp structs.VolumeHostResponse
	err := a.cfg.RPC.RPC("Volume.HostVolumes", &structs.VolumeHostRequest{HostID: a.cfg.HostID,
		QueryOptions: structs.QueryOptions{Region: a.cfg.Region, AuthToken: a.cfg.NodeSecret,
			MinQueryIndex: index, MaxQueryTime: a.cfg.MaxQueryTime}}, &resp)
	if err != nil {
		return nil, fmt.Errorf("read the host's volumes: %w", err)
	}
	return &resp, nil
}

// sync works through one listing: snapshots first (a volume made from
// a snapshot needs it), then volumes. It returns the first report that
// could not be delivered.
func (a *Agent) sync(ctx context.Context, resp *structs.VolumeHostResponse) error {
	a.failed = nil
	// kept is, per volume, a snapshot of it still on the host after
	// this pass: a cascade delete whose snapshot could not go must
	// not take the volume's data away from under the record.
	kept := map[string]string{}
	for _, s := range resp.Snapshots {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !a.driveSnapshot(ctx, s) {
			kept[s.VolumeID] = s.ID
		}
	}
	for _, v := range resp.Volumes {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if v.Status == structs.VolumeDeleting && kept[v.ID] != "" {
			a.finishVolume(v, "", structs.VolumeErrorDeleting, "", fmt.Errorf("snapshot %s of volume %s could not be deleted", kept[v.ID], v.ID))
			continue
		}
		a.driveVolume(ctx, v)
	}
	a.syncExports(ctx, resp.Volumes, resp.HostNames)
	return a.failed
}

// driveVolume does what a volume's status asks of its host.
func (a *Agent) driveVolume(ctx context.Context, v *structs.Volume) {
	switch v.Status {
	case structs.VolumeCreating:
		src := Source{SnapshotID: v.SnapshotID, VolumeID: v.SourceVolumeID}
		var loc string
		var err error
		if v.ImageID != "" {
			src.ImagePath, err = a.image(ctx, v)
		}
		if err == nil {
			loc, err = a.cfg.Backend.CreateVolume(ctx, v, src)
		}
		a.finishVolume(v, structs.VolumeAvailable, structs.VolumeError, loc, err)
	case structs.VolumeExtending:
		if heldHere(v, a.cfg.HostID) {
			// The instance's QEMU on this host holds the file: the
			// compute agent grows it through the guest's disk and
			// reports the extend (client/volume_extend.go).
			return
		}
		err := a.cfg.Backend.ExtendVolume(ctx, v)
		// An attached volume goes back to in-use, where the compute
		// agents of its instances show the guests the new size.
		done := structs.VolumeAvailable
		if len(v.Attachments) > 0 {
			done = structs.VolumeInUse
		}
		a.finishVolume(v, done, structs.VolumeErrorExtend, "", err)
	case structs.VolumeUploading:
		a.uploadImage(ctx, v)
	case structs.VolumeDeleting:
		if err := a.cfg.Backend.DeleteVolume(ctx, v.ID); err != nil {
			a.finishVolume(v, "", structs.VolumeErrorDeleting, "", err)
			return
		}
		a.report(&structs.VolumeReportRequest{Delete: &structs.VolumeDeleteEntry{ID: v.ID,
			FromStatus: []string{structs.VolumeDeleting}}}, v.ID)
	}
}

// heldHere reports whether an instance on this host opens the volume's
// file directly (not through an export): no other process may then
// write it.
func heldHere(v *structs.Volume, hostID string) bool {
	if v.Backend == structs.VolumeBackendRBD {
		return false
	}
	return slices.ContainsFunc(v.Attachments, func(att *structs.VolumeAttachment) bool {
		return !att.External && !att.Exported && att.Host == hostID
	})
}

// finishVolume reports a volume's work done (to ok) or failed (to bad,
// with the error).
func (a *Agent) finishVolume(v *structs.Volume, ok, bad, loc string, err error) {
	u := &structs.VolumeUpdateEntry{ID: v.ID, FromStatus: []string{v.Status}, UpdatedAt: time.Now().UnixNano()}
	if err != nil {
		a.log.Error("volume operation failed", "volume_id", v.ID, "status", v.Status, "error", err)
		msg := err.Error()
		u.Status, u.ErrorMessage = bad, &msg
	} else {
		empty := ""
		u.Status, u.ErrorMessage = ok, &empty
		if loc != "" {
			u.ProviderLocation = &loc
		}
	}
	a.report(&structs.VolumeReportRequest{Update: u}, v.ID)
}

// image fetches a volume's image into the cache.
func (a *Agent) image(ctx context.Context, v *structs.Volume) (string, error) {
	if a.cfg.Images == nil {
		return "", fmt.Errorf("volume %s: this storage host has no image cache", v.ID)
	}
	path, err := a.cfg.Images.Get(ctx, imagecache.Image{ID: v.ImageID, HashValue: v.ImageHash, Size: v.ImageSize})
	if err != nil {
		return "", fmt.Errorf("fetch image %s: %w", v.ImageID, err)
	}
	return path, nil
}

// driveSnapshot does what a snapshot's status asks of its host and
// reports whether the snapshot is gone.
func (a *Agent) driveSnapshot(ctx context.Context, s *structs.VolumeSnapshot) bool {
	switch s.Status {
	case structs.SnapshotCreating:
		loc, err := a.cfg.Backend.CreateSnapshot(ctx, s)
		u := &structs.VolumeSnapshotUpdateEntry{ID: s.ID, FromStatus: []string{s.Status}, UpdatedAt: time.Now().UnixNano()}
		if err != nil {
			a.log.Error("snapshot failed", "snapshot_id", s.ID, "error", err)
			msg := err.Error()
			u.Status, u.ErrorMessage = structs.SnapshotError, &msg
		} else {
			u.Status, u.ProviderLocation = structs.SnapshotAvailable, &loc
		}
		a.report(&structs.VolumeReportRequest{SnapshotUpdate: u}, s.ID)
	case structs.SnapshotDeleting:
		if err := a.cfg.Backend.DeleteSnapshot(ctx, s.ID); err != nil {
			a.log.Error("snapshot delete failed", "snapshot_id", s.ID, "error", err)
			msg := err.Error()
			a.report(&structs.VolumeReportRequest{SnapshotUpdate: &structs.VolumeSnapshotUpdateEntry{ID: s.ID,
				FromStatus: []string{s.Status}, Status: structs.SnapshotErrorDeleting, ErrorMessage: &msg}}, s.ID)
			return false
		}
		return a.report(&structs.VolumeReportRequest{SnapshotDelete: &structs.VolumeSnapshotDeleteEntry{ID: s.ID,
			FromStatus: []string{structs.SnapshotDeleting}}}, s.ID)
	}
	return false
}

// report sends one report and says whether the servers took it. A
// refused one (the volume moved on: deleted, its status reset) is only
// logged: the next listing shows what to do.
func (a *Agent) report(req *structs.VolumeReportRequest, id string) bool {
	req.HostID = a.cfg.HostID
	req.Region, req.AuthToken = a.cfg.Region, a.cfg.NodeSecret
	err := a.cfg.RPC.RPC("Volume.Report", req, &structs.GenericResponse{})
	switch structs.KindOf(err) {
	case "":
		return true
	case structs.KindInvalid, structs.KindConflict, structs.KindNotFound:
		a.log.Info("volume report refused: the volume moved on", "id", id, "error", err)
	default:
		a.log.Warn("volume report failed", "id", id, "error", err)
		if a.failed == nil {
			a.failed = fmt.Errorf("report about %s: %w", id, err)
		}
	}
	return false
}
