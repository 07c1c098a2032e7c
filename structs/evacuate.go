package structs

// How an evacuation's destination gets the instance's disk (Nova's
// on_shared_storage): a caller before microversion 2.14 says whether the
// disk is on shared storage, and the destination fails the evacuation if
// it finds otherwise; from 2.14 the destination finds out. A disk found
// on shared storage is rebuilt on (keeping what the guest wrote), else
// the instance is rebuilt from its image.
const (
	// EvacuateDiskDetect: take the disk from shared storage if the
	// destination finds it there, else build from the image.
	EvacuateDiskDetect = "detect"
	// EvacuateDiskShared: the caller says the disk is on shared storage;
	// the evacuation fails if the destination does not find it there.
	EvacuateDiskShared = "shared"
	// EvacuateDiskImage: the caller says the disk is not on shared
	// storage; the evacuation fails if the destination finds it there,
	// else builds from the image.
	EvacuateDiskImage = "image"
)

// InvalidSharedStorageMessage is Nova's fault when the destination finds
// the disk where the caller's on_shared_storage said it was not, or the
// other way round (InvalidSharedStorage).
const InvalidSharedStorageMessage = "Invalid state of instance files on shared storage"
