package structs

// VolumeUpload is an os-volume_upload_image at work: the queued image
// the volume's storage host copies the volume into, in DiskFormat.
type VolumeUpload struct {
	ImageID    string
	DiskFormat string
}

// VolumeUploadDiskFormats are the disk formats Cinder uploads a volume
// as (its API schema's enum).
var VolumeUploadDiskFormats = []string{"raw", "vmdk", "vdi", "qcow2", "vhd", "vhdx", "ploop"}

// VolumeUploadImageRequest starts copying a volume of ProjectID ("" for
// admins: any) into a queued image the caller created; Force allows an
// in-use volume.
type VolumeUploadImageRequest struct {
	VolumeID   string
	ProjectID  string
	ImageID    string
	DiskFormat string
	Force      bool
	WriteRequest
}
