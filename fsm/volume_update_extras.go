package fsm

import "github.com/stratus-cloud/stratus/structs"

// applyUploadAndType records the image an uploading volume is copied into, and
// forgets it once the volume leaves uploading (done, failed or reset),
// so the storage host never copies into an image twice. It also sets a
// retyped volume's type: a retype within the volume's backend changes
// nothing the storage host keeps.
func applyUploadAndType(c *structs.Volume, e *structs.VolumeUpdateEntry) error {
	if e.Upload != nil {
		if c.Status != structs.VolumeUploading {
			return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s is %s, not uploading.", c.ID, c.Status)
		}
		u := *e.Upload
		c.Upload = &u
	}
	if c.Status != structs.VolumeUploading {
		c.Upload = nil
	}
	if e.VolumeTypeID != nil {
		c.VolumeTypeID = *e.VolumeTypeID
	}
	return nil
}
