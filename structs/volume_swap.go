package structs

// OpSwapVolume moves an instance's attached volume onto another volume
// while the guest runs (Nova's swap volume, PUT
// os-volume_attachments/{old}): the guest's device keeps its data, now
// on the new volume, and the old volume is detached.
const OpSwapVolume = "swap_volume"

// ActionArgReimageBootVolume is the ActionArg of a rebuild that rewrites
// the instance's boot volume from its (new) image before spawning it
// again (Nova 2.93's reimage_boot_volume).
const ActionArgReimageBootVolume = "reimage_boot_volume"

// ActionSwapVolume asks the instance's agent to copy the disk of
// VolumeActionArg.FromVolumeID onto VolumeActionArg.VolumeID and switch
// the guest to it.
const ActionSwapVolume = "swap_volume"
