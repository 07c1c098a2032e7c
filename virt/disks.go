package virt

import (
	"context"
	"io"
)

// Roles of the disks a DiskMover carries from host to host. Swap and
// the config drive are not among them: a cold move reboots the guest,
// and nothing in swap outlives a boot; the config drive is built again
// from the instance's data.
const (
	DiskRoleRoot      = "root"
	DiskRoleEphemeral = "ephemeral"
)

// DiskMover can hand a powered-off instance's disks to another host and
// build an instance on disks handed to it, so that a resize or a cold
// migration keeps what the guest wrote (Nova's migrate_disk_and_power_off
// and finish_migration).
type DiskMover interface {
	// ExportDisks lists the disks of instance id, which must be powered
	// off (ErrInvalidState otherwise) so that they do not change while
	// they are read. The caller opens each as it sends it.
	ExportDisks(ctx context.Context, id string) ([]ExportedDisk, error)
}

// ExportedDisk is one disk of an instance as its host hands it out.
type ExportedDisk struct {
	// Role is a DiskRole* constant.
	Role string
	// Format is the file's format: "qcow2" or "raw".
	Format string
	// BackingImageID is the image whose data the disk is an overlay on
	// (only the overlay is sent: the destination gets the image from its
	// own image cache), "" for a standalone disk.
	BackingImageID string
	// File is the disk's file name in the host's pool when that pool is
	// storage other hosts may share (SharedPool), "" otherwise: a
	// destination sharing it copies the file there instead of fetching
	// its bytes.
	File string
	// Open opens the disk's data for reading from any offset.
	Open func() (io.ReadSeekCloser, error)
}

// ImportedDisk is a disk fetched from another host for a new instance
// (InstanceSpec.Disks): a local file the driver takes over, an overlay
// on the image BackingImageID when that is set, whose cached file is
// InstanceSpec.ImagePath.
type ImportedDisk struct {
	Role           string
	Format         string
	BackingImageID string
	Path           string
	// Shared says Path is another host's disk on storage both hosts
	// share (SharedDiskFinder): the driver copies it and never moves,
	// links or changes it, since that host may come back to it.
	Shared bool
}

// SharedDiskFinder finds the disks another host built for an instance
// on storage this host shares (Nova's instance_on_disk), so that an
// evacuation rebuilds the instance on them instead of on its image.
type SharedDiskFinder interface {
	// SharedDisks returns instance id's root disk (and ephemeral disk,
	// where it has one) that another host left on the storage this host
	// shares, with Shared set, or none when the instance's disks are
	// not there (no shared storage, or never built on it). imageID is
	// the instance's image, the one a root overlay is backed by.
	SharedDisks(ctx context.Context, id, imageID string) ([]ImportedDisk, error)
}

// ImportedDisk returns the spec's fetched disk of a role, or nil.
func (s *InstanceSpec) ImportedDisk(role string) *ImportedDisk {
	for i := range s.Disks {
		if s.Disks[i].Role == role {
			return &s.Disks[i]
		}
	}
	return nil
}

// SharedPool is a DiskMover whose pool other hosts may share: a move's
// destination that finds the source's disk files in its own pool copies
// them there (a clone where the file system can) instead of fetching
// their bytes from the source's agent.
type SharedPool interface {
	// SharedFile returns the path of the regular file called name in
	// this host's shared pool. ok is false when the host has no shared
	// storage, name is not a bare file name or no such file is there:
	// a name never leads outside the pool's directory.
	SharedFile(name string) (path string, ok bool)
}
