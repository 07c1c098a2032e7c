package client

import (
	"errors"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// reimageBootVolume rewrites the boot volume's file (or, reached over
// the network, its export or RBD image) from the rebuild's image when
// the rebuild asks for it (Nova 2.93), between destroying the old guest
// and spawning the new one, so nothing uses the volume. Doing it
// again after a restart is harmless: the guest data is being replaced
// anyway, and the new guest is not spawned until it is done.
func (r *runner) reimageBootVolume(spec *virt.InstanceSpec) error {
	if r.alloc.ActionArg != structs.ActionArgReimageBootVolume || spec.RootVolume == nil {
		return nil
	}
	if spec.RootVolume.Network != nil {
		r.logger.Info("rebuild: reimaging the boot volume over the network", "volume_id", spec.RootVolume.ID,
			"protocol", spec.RootVolume.Network.Protocol, "image_id", spec.ImageID)
		return r.reimageNetwork(r.c.ctx, spec.RootVolume, spec.ImagePath) // volume_reimage_net.go
	}
	if spec.RootVolume.Path == "" {
		return errors.New("the boot volume is not a file on this host: it cannot be reimaged")
	}
	d := r.c.driver
	vr, err := optional[virt.VolumeReimager](d, d.Capabilities().AttachVolume, "reimage_boot_volume")
	if err != nil {
		return err
	}
	r.logger.Info("rebuild: reimaging the boot volume", "volume_id", spec.RootVolume.ID, "image_id", spec.ImageID)
	return vr.ReimageVolume(r.c.ctx, spec.RootVolume, spec.ImagePath)
}
