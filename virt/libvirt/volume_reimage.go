package libvirt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/stratus-cloud/stratus/virt"
)

// ReimageVolume rewrites the volume's file from imagePath (a rebuild
// that reimages the boot volume, Nova 2.93): the image's data converted
// to the file's own format, grown to the file's size when the image is
// smaller (never shrunk), and renamed over the file, so a failure leaves
// the old data whole. No guest may use the file: the rebuild destroyed
// its domain first. A network volume has no file here and is refused.
func (d *Driver) ReimageVolume(ctx context.Context, vol *virt.Volume, imagePath string) error {
	if vol == nil || vol.Path == "" {
		return errors.New("libvirt ReimageVolume: only a volume file on this host can be reimaged")
	}
	if imagePath == "" {
		return fmt.Errorf("libvirt ReimageVolume %s: the image has no file on this host", vol.ID)
	}
	cur, err := inspectImage(vol.Path)
	if err != nil {
		return fmt.Errorf("volume %s: %w", vol.ID, err)
	}
	img, err := inspectImage(imagePath)
	if err != nil {
		return fmt.Errorf("image for volume %s: %w", vol.ID, err)
	}
	tmp := vol.Path + ".reimage"
	_ = os.Remove(tmp) // a leftover of an interrupted reimage
	if err := qemuImg("convert", "-q", "-f", img.format, "-O", cur.format, imagePath, tmp); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("reimage volume %s: %w", vol.ID, err)
	}
	if img.virtualSize < cur.virtualSize {
		if err := qemuImg("resize", "-q", "-f", cur.format, tmp, strconv.FormatUint(cur.virtualSize, 10)); err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("reimage volume %s: %w", vol.ID, err)
		}
	}
	if err := ctx.Err(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, vol.Path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("reimage volume %s: %w", vol.ID, err)
	}
	return nil
}
