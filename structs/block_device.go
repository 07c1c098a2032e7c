package structs

// BlockDevice is a volume an instance was created with: Nova's block
// device mapping with destination volume, resolved to the volume the
// API found or made for it.
type BlockDevice struct {
	VolumeID string
	// AttachmentID is the volume attachment the create records, chosen
	// by the servers before proposal (the FSM draws nothing).
	AttachmentID string `json:",omitempty"`
	// BootIndex is the device's place in the boot order, -1 for none;
	// the device of boot index 0 is the instance's root disk.
	BootIndex int
	// Path is the volume's file (Volume.ProviderLocation) on the
	// storage host, which is the instance's host. A volume reached over
	// the network has none, but NBD (its storage host's export of the
	// attachment) or RBD (the image as "pool/image") instead.
	Path string        `json:",omitempty"`
	NBD  *VolumeExport `json:",omitempty"`
	RBD  string        `json:",omitempty"`
	// Device is the guest device the attachment records (/dev/vda for
	// the root volume), filled in by the FSM.
	Device string `json:",omitempty"`
	// Tag is the device tag the user gave, DeleteOnTermination whether
	// deleting the instance deletes the volume.
	Tag                 string `json:",omitempty"`
	DeleteOnTermination bool   `json:",omitempty"`
	// Source, when set (BlockSourceImage, BlockSourceSnapshot,
	// BlockSourceBlank), asks the create to make the volume: of SizeGB,
	// of VolumeType ("" for the default), from SourceID (the image or
	// snapshot). The servers choose its VolumeID and storage host before
	// proposal (boot_volume_build.go).
	Source     string `json:",omitempty"`
	SourceID   string `json:",omitempty"`
	SizeGB     int    `json:",omitempty"`
	VolumeType string `json:",omitempty"`
}

// RootVolumeDevice is the guest device of a root volume.
const RootVolumeDevice = "/dev/vda"

// RootVolume returns the instance's root volume (the block device of
// boot index 0), or nil when it boots from an image.
func (i *Instance) RootVolume() *BlockDevice {
	for _, bd := range i.BlockDevices {
		if bd.BootIndex == 0 {
			return bd
		}
	}
	return nil
}

func copyBlockDevices(list []*BlockDevice) []*BlockDevice {
	if list == nil {
		return nil
	}
	out := make([]*BlockDevice, len(list))
	for k, bd := range list {
		c := *bd
		if bd.NBD != nil {
			e := *bd.NBD
			c.NBD = &e
		}
		out[k] = &c
	}
	return out
}
