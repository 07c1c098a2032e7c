package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

// reimageBootVolume records, for a rebuild that reimages the boot
// volume (Nova 2.93), that the volume is now made from the instance's
// new image, as Cinder's reimage records it; the instance's agent
// rewrites the volume before it spawns the instance again: its file on
// the instance's host, or, reached over the network, through its storage
// host's NBD export or Ceph. A rebuild of an instance booted from an
// image has no volume to reimage.
func (t *taskTxn) reimageBootVolume(inst *structs.Instance, e *structs.InstanceTaskEntry) error {
	root := inst.RootVolume()
	if !e.ReimageBootVolume || root == nil {
		return nil
	}
	v, err := first[*structs.Volume](t.txn, nil, TableVolumes, "id", root.VolumeID)
	if err != nil {
		return err
	}
	if v == nil {
		return structs.Errorf(structs.KindNotFound, "Volume %s could not be found.", root.VolumeID)
	}
	// The agent rewrites what it reaches: a file on its own host, an
	// export, an RBD image; refusing anything else here keeps the
	// server as it is rather than in ERROR.
	file := root.Path != "" && v.Host == inst.HostID && (v.Backend == "" || v.Backend == structs.VolumeBackendFile)
	if !file && root.NBD == nil && (root.RBD == "" || v.Backend != structs.VolumeBackendRBD) {
		return structs.Errorf(structs.KindConflict, "Cannot reimage volume %s: the instance reaches it neither as a file on its host nor over the network (NBD export, RBD)", v.ID)
	}
	c := v.Copy()
	// The old image's hash and size no longer describe the volume.
	c.ImageID, c.ImageHash, c.ImageSize = inst.ImageID, "", 0
	return t.putVolume(c)
}
