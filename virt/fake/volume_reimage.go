package fake

import (
	"context"
	"fmt"

	"github.com/stratus-cloud/stratus/virt"
)

// ReimageVolume can be failed with FailNext and FailAlways.
func init() { ops["ReimageVolume"] = true }

// ReimageVolume records that the volume's file was rewritten from
// imagePath (Reimaged reads it back; a host without an image cache
// gives ""); the fake writes no file.
func (d *Driver) ReimageVolume(ctx context.Context, vol *virt.Volume, imagePath string) error {
	if vol == nil || vol.Path == "" {
		return fmt.Errorf("fake ReimageVolume: a volume file is needed")
	}
	if err := d.begin(ctx, "ReimageVolume", 0); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reimaged == nil {
		d.reimaged = map[string]string{}
	}
	d.reimaged[vol.ID] = imagePath
	return nil
}

// Reimaged returns the image path the volume was last reimaged from,
// and whether it ever was.
func (d *Driver) Reimaged(volumeID string) (imagePath string, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	imagePath, ok = d.reimaged[volumeID]
	return imagePath, ok
}
