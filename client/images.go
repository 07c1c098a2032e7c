package client

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// ImageFiles gives the local file of an image's data, downloading it
// once (client/imagecache.Cache).
type ImageFiles interface {
	Get(ctx context.Context, img imagecache.Image) (string, error)
}

// ImageUploader streams a snapshot's data to the servers' image stores
// as the data of a queued image, which then becomes active.
type ImageUploader interface {
	Upload(ctx context.Context, imageID string, size int64, body io.Reader) error
}

// imagePath resolves an instance's image to the local file the driver
// builds its disk on: "" when the client has no image cache (its
// driver builds disks from nothing, as the fake one does), the instance
// has no image, or the image service holds no data for it (an image
// without a record, or whose upload never finished: the driver falls
// back to what it can, see libvirt's stratus_image_path).
func (c *Client) imagePath(imageID string) (string, error) {
	return c.imagePathCtx(c.ctx, imageID)
}

// imagePathCtx is imagePath for a caller with its own ctx.
func (c *Client) imagePathCtx(ctx context.Context, imageID string) (string, error) {
	if c.cfg.ImageFiles == nil || imageID == "" {
		return "", nil
	}
	img, err := c.imageRecord(imageID)
	if err != nil || img == nil || img.HashValue == "" {
		return "", err
	}
	path, err := c.cfg.ImageFiles.Get(ctx, imagecache.Image{ID: img.ID, HashValue: img.HashValue, Size: img.Size})
	if err != nil {
		return "", fmt.Errorf("image %s (%s): %w", img.Name, img.ID, err)
	}
	return path, nil
}

// imageRecord reads an image's record; nil if there is none.
func (c *Client) imageRecord(imageID string) (*structs.Image, error) {
	var resp structs.SingleImageResponse
	err := c.call("Image.Get", &structs.ImageSpecificRequest{ImageID: imageID}, &resp)
	switch {
	case structs.KindOf(err) == structs.KindNotFound:
		c.logger.Warn("the instance's image has no record; building without its data", "image_id", imageID)
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("image %s: %w", imageID, err)
	}
	if resp.Image.HashValue == "" {
		c.logger.Warn("the instance's image has no data; building without it", "image_id", imageID, "status", resp.Image.Status)
	}
	return resp.Image, nil
}

// rescueImage turns a rescue's image argument into what the driver
// takes: "" (the instance's own image) and local paths stay as they are;
// an image id becomes its cached file when the client has a cache.
func (c *Client) rescueImage(arg string) (string, error) {
	if arg == "" || filepath.IsAbs(arg) || c.cfg.ImageFiles == nil {
		return arg, nil
	}
	path, err := c.imagePath(arg)
	if err != nil || path == "" {
		return arg, err
	}
	return path, nil
}

// rescueSpec is what the driver boots for the pending rescue: the
// rescue image (ActionArg; "" for the instance's own) as the driver
// takes it, with the stable layout its hw_rescue_* properties ask for.
func (r *runner) rescueSpec() (virt.RescueSpec, error) {
	arg := r.alloc.ActionArg
	var props map[string]string
	switch {
	case arg == "" && r.inst != nil:
		props = r.inst.ImageProperties
	case arg != "" && !filepath.IsAbs(arg):
		img, err := r.c.imageRecord(arg)
		if err != nil {
			return virt.RescueSpec{}, err
		}
		if img != nil {
			props = img.Properties
		}
	}
	image, err := r.c.rescueImage(arg)
	if err != nil {
		return virt.RescueSpec{}, err
	}
	spec, err := virt.RescueSpecFor(image, props)
	if err != nil {
		return virt.RescueSpec{}, fmt.Errorf("rescue image %s: %w", arg, err)
	}
	return spec, nil
}

// imagesInUse returns the ids of the images of the instances this host
// runs, which the image cache must keep.
func (c *Client) imagesInUse() map[string]bool {
	out := map[string]bool{}
	for _, r := range c.runnerList() {
		r.mu.Lock()
		if r.live && r.imageID != "" {
			out[r.imageID] = true
		}
		r.mu.Unlock()
	}
	return out
}

// ImagesInUse is imagesInUse for the agent that wires the cache: the
// ids of the images the host's live instances were built from.
func (c *Client) ImagesInUse() map[string]bool { return c.imagesInUse() }
