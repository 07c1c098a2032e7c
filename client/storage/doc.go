// Package storage is the storage agent: the part of an agent that keeps
// a volume pool (client config storage { pool_dir = … }). It watches
// the volumes and volume snapshots the servers assigned to its host
// with a blocking query, as the hypervisor agent watches allocations,
// drives each to the state its status asks for through a Backend
// (create, extend, snapshot, delete, and upload to an image through a
// VolumeImageWriter and the agent's image uploader), and reports the
// outcome to the servers, which record it through Raft. An in-use
// volume's extend (Cinder 3.42) ends in-use; the extend of a file an
// instance on this host opens directly is left to that host's compute
// agent, which grows it through the guest's disk (QEMU holds the file).
//
// The embedded backend, FilePool, keeps volumes as qcow2 files in the
// pool directory, made and changed with qemu-img. It records every file
// it creates before creating it, so that a restarted agent finishes or
// repeats its work without harm, and it never deletes a file it did not
// create.
//
// The Ceph backend, RBD (storage { backend = "rbd" } with the client's
// ceph block), keeps volumes as RBD images in a pool, made and changed
// with the rbd CLI and qemu-img's rbd driver; it marks every image it
// makes (image-meta stratus.owned) and deletes no other. Any hypervisor
// host attaches its volumes itself, as libvirt network disks with a
// cephx secret, so they need no export from the storage host.
//
// Volumes attached to instances on other hosts are served by the
// NBDExporter (storage { nbd_address }): one qemu-storage-daemon with an
// NBD server over TLS (the agent's certificate; clients must present a
// certificate of the same CA whose subject names one of the hosts the
// attachments name, QEMU's tls-authz with an authz-list kept in step
// with the exports) and one export per attachment, named structs.VolumeExportName, from the moment
// the servers record the attachment until it is gone. The wanted exports
// are recorded in the exporter's state directory and the daemon is
// checked and repaired every few seconds; it outlives an agent restart
// (the next agent adopts it) and stops when no export is wanted.
//
// The storage agent must not decide placement (the leader chooses the
// storage host) and must not touch server state except through its
// reports (Volume.Report) and, for an upload, the data and the deletion
// of the image its volume is uploading into.
package storage
