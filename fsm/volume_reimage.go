package fsm

import (
	"github.com/stratus-cloud/stratus/structs"
)

// reimageBootVolume records, for a rebuild that reimages the boot
// volume (Nova 2.93), that the volume is now made from the instance's
// new image, as Cinder's reimage records it; the instance's agent
// rewrites the volume's file before it spawns the instance again. A
// rebuild of an instance booted from an image has no volume to reimage.
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
	// Only a file on the instance's own host is rewritten by its agent;
	// refusing here keeps the server as it is rather than in ERROR.
	if (v.Backend != "" && v.Backend != structs.VolumeBackendFile) || root.Path == "" || v.Host != inst.HostID {
		return structs.Errorf(structs.KindConflict, "Cannot reimage volume %s: only a volume kept as a file on the instance's host can be reimaged", v.ID)
	}
	c := v.Copy()
	// The old image's hash and size no longer describe the volume.
	c.ImageID, c.ImageHash, c.ImageSize = inst.ImageID, "", 0
	return t.putVolume(c)
}
