package server

import (
	"slices"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// UploadImage starts os-volume_upload_image: the volume goes to
// uploading with the queued image the caller created, which its storage
// host fills with the volume's data (client/storage) before it puts the
// volume back. As Cinder's, only an available volume qualifies, or an
// in-use one with Force; the image must be a queued image of the
// volume's project (an admin's may be its own), so nobody has a
// volume's data written into another project's image.
func (e *Volume) UploadImage(args *structs.VolumeUploadImageRequest, reply *structs.SingleVolumeResponse) error {
	if done, err := e.srv.forward("Volume.UploadImage", args, args, reply); done {
		return err
	}
	if !slices.Contains(structs.VolumeUploadDiskFormats, args.DiskFormat) {
		return structs.Errorf(structs.KindInvalid, "Invalid input received: disk_format %q is not one of %v", args.DiskFormat, structs.VolumeUploadDiskFormats)
	}
	v, err := e.ownVolume(args.VolumeID, args.ProjectID)
	if err != nil {
		return err
	}
	from, statuses := []string{structs.VolumeAvailable}, "available"
	if args.Force {
		from, statuses = append(from, structs.VolumeInUse), "available or in-use"
	}
	if !slices.Contains(from, v.Status) {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: Volume %s status must be %s", v.ID, statuses)
	}
	img, err := e.srv.fsm.State().ImageByID(nil, args.ImageID)
	if err != nil {
		return err
	}
	if img == nil || img.Status != structs.ImageQueued || (args.ProjectID != "" && img.Owner != args.ProjectID) {
		return structs.Errorf(structs.KindInvalid, "Invalid image: image %s is not a queued image of project %s", args.ImageID, v.ProjectID)
	}
	gone, err := e.hostGone(v.Host)
	if err != nil {
		return err
	}
	if gone {
		return structs.Errorf(structs.KindInvalid, "Invalid volume: the storage host of volume %s is gone", v.ID)
	}
	index, err := e.srv.apply(structs.VolumeUpdateType, &structs.VolumeUpdateEntry{ID: v.ID, FromStatus: from,
		Status: structs.VolumeUploading, Upload: &structs.VolumeUpload{ImageID: img.ID, DiskFormat: args.DiskFormat},
		UpdatedAt: time.Now().UnixNano()})
	if err != nil {
		return err
	}
	updated, err := e.srv.fsm.State().Volume(nil, v.ID)
	if err != nil {
		return err
	}
	reply.Volume, reply.Index = updated, index
	return nil
}

// nodeUploadsTo reports whether a volume on one of a storage agent's
// hosts is uploading into image imageID: that agent may send the
// image's data and delete the image when the upload fails.
func nodeUploadsTo(s *Server, hosts map[string]bool, imageID string) (bool, error) {
	for h := range hosts {
		vols, err := s.fsm.State().VolumesByHost(nil, h)
		if err != nil {
			return false, err
		}
		for _, v := range vols {
			if v.Status == structs.VolumeUploading && v.Upload != nil && v.Upload.ImageID == imageID {
				return true, nil
			}
		}
	}
	return false, nil
}
