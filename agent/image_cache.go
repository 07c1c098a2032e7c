package agent

import (
	"context"
	"io"
	"path/filepath"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/structs"
)

// DefaultImageCacheMB is the image cache's default bound.
const DefaultImageCacheMB = 20480

// newImageCache opens the host's image cache (client { image_cache }):
// images come from the servers' image stores over Blob streams, and the
// images of the instances inUse reports are never evicted.
func (a *Agent) newImageCache(hostDir string, inUse func() map[string]bool) (*imagecache.Cache, error) {
	ic := a.config.Client.ImageCache
	if ic == nil {
		ic = &ImageCacheConfig{}
	}
	dir := ic.Dir
	if dir == "" {
		dir = filepath.Join(hostDir, "image-cache")
	}
	maxMB := ic.MaxSizeMB
	switch {
	case maxMB == 0:
		maxMB = DefaultImageCacheMB
	case maxMB < 0:
		maxMB = 0
	}
	return imagecache.New(imagecache.Config{
		Dir: dir, MaxBytes: maxMB << 20, InUse: inUse,
		Fetcher:    imagecache.FetcherFunc(a.fetchImage),
		Logger:     a.logger.Named("imagecache"),
		Registerer: a.metrics.registry,
	})
}

// fetchImage opens an image's whole data from the servers, preferring
// those its record says hold it.
func (a *Agent) fetchImage(ctx context.Context, img imagecache.Image) (io.ReadCloser, error) {
	rec := &structs.Image{ID: img.ID, HashValue: img.HashValue, Size: img.Size}
	var resp structs.SingleImageResponse
	if err := a.nodeRPC().RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: img.ID}, &resp); err == nil &&
		resp.Image != nil && resp.Image.HashValue == img.HashValue {
		rec.Locations = resp.Image.Locations
	}
	return a.imageData.Download(a.ownToken(), rec, 0, -1)
}

// snapshotUploader sends agents' snapshots to the servers' image stores.
type snapshotUploader struct{ d *imageData }

var _ client.ImageUploader = snapshotUploader{}

// Upload streams body as image imageID's data; the servers record it
// active.
func (u snapshotUploader) Upload(ctx context.Context, imageID string, size int64, body io.Reader) error {
	_, err := u.d.Upload(u.d.a.ownToken(), imageID, size, &ctxReader{ctx: ctx, r: body})
	return err
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
