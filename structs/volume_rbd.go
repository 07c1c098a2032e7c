package structs

// VolumeBackendRBD keeps volumes as images in a Ceph RBD pool: any
// hypervisor host attaches them as network disks (libvirt's rbd
// protocol with a cephx secret), so their attachments need no export
// from the storage host. Volume.ProviderLocation is the image as
// "pool/image".
const VolumeBackendRBD = "rbd"

// HostAttrStorageBackend is the attribute in which a storage host says
// what keeps its volumes (VolumeBackendFile, VolumeBackendRBD); a host
// without it keeps files.
const HostAttrStorageBackend = "storage_backend"

// HostAttrStorageBackendName is the attribute in which a storage host
// gives its backend's name (Cinder's volume_backend_name): a volume type
// whose extra spec VolumeTypeBackendNameSpec names it is placed only on
// hosts of that name.
const HostAttrStorageBackendName = "storage_backend_name"

// VolumeTypeBackendNameSpec is the volume type extra spec that chooses
// the backend, as in Cinder.
const VolumeTypeBackendNameSpec = "volume_backend_name"
