package structs

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Image statuses, as Glance names them. An image is queued until data
// arrives, saving while a server receives it, then active; a failed
// upload returns it to queued. An admin may deactivate an active image
// (its data can then be read by admins only) and reactivate it.
const (
	ImageQueued      = "queued"
	ImageSaving      = "saving"
	ImageActive      = "active"
	ImageKilled      = "killed"
	ImageDeleted     = "deleted"
	ImageDeactivated = "deactivated"
)

// Image visibilities, as Glance's.
const (
	ImagePublic    = "public"
	ImagePrivate   = "private"
	ImageShared    = "shared"
	ImageCommunity = "community"
)

// ImageVisibilities lists the visibilities an image may have.
var ImageVisibilities = []string{ImageCommunity, ImagePublic, ImagePrivate, ImageShared}

// Image member statuses, as Glance's.
const (
	MemberPending  = "pending"
	MemberAccepted = "accepted"
	MemberRejected = "rejected"
)

// ImageDiskFormats and ImageContainerFormats are the formats Glance
// accepts by default.
var (
	ImageDiskFormats      = []string{"ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw", "qcow2", "vdi", "iso", "ploop"}
	ImageContainerFormats = []string{"ami", "ari", "aki", "bare", "ovf", "ova", "docker", "compressed"}
)

// ImageHashAlgo is the os_hash_algo of every image: the blobs are
// content-addressed by their SHA-512.
const ImageHashAlgo = "sha512"

// ImageSizeCap is the largest image accepted (Glance's image_size_cap
// default, 1 TiB).
const ImageSizeCap int64 = 1 << 40

// Limits on an image's metadata, Glance's default quotas.
const (
	MaxImageTags       = 128
	MaxImageProperties = 128
	MaxImageMembers    = 128
)

// Image is a Glance image record. Its bytes never go through Raft: they
// are a content-addressed blob (named by HashValue, the SHA-512) in the
// image stores of the servers listed in Locations.
type Image struct {
	// ID is a UUID, chosen by the client or by the server before
	// proposal.
	ID     string
	Name   string
	Status string
	// Visibility is public, private, shared or community.
	Visibility string
	// Owner is the id of the owning project; "" for none (only admins
	// may change such an image).
	Owner           string
	DiskFormat      string
	ContainerFormat string
	// Size is the data's size in bytes; meaningful once HashValue is set.
	Size int64
	// VirtualSize is the disk's size when the format says it (qcow2,
	// raw, iso); 0 when unknown.
	VirtualSize int64
	// Checksum is the hex MD5 of the data, HashAlgo/HashValue its hex
	// SHA-512 (Glance's os_hash_algo, os_hash_value). HashValue names
	// the blob.
	Checksum  string
	HashAlgo  string
	HashValue string
	// MinDisk (GiB) and MinRAM (MiB) are what a flavor must offer to boot
	// the image.
	MinDisk int
	MinRAM  int
	// Protected images cannot be deleted.
	Protected bool
	// Hidden is Glance's os_hidden: left out of default listings.
	Hidden bool
	Tags   []string
	// Properties are the free-form string properties (architecture,
	// hypervisor_type, os_distro, hw_*, …), copied into an instance's
	// ImageProperties when it is created from the image.
	Properties map[string]string
	// Locations are the servers whose image store holds the data.
	Locations []*ImageLocation
	// Uploader is the node id of the server receiving the data while
	// Status is saving.
	Uploader string

	// CreatedAt and UpdatedAt are unix nanoseconds chosen before proposal.
	CreatedAt int64
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// ImageLocation records that a server's image store holds an image's
// data.
type ImageLocation struct {
	// NodeID is the server's node id (its Raft server id).
	NodeID string
	// AddedAt is when the copy was recorded (unix nanoseconds).
	AddedAt int64
}

// Copy returns a deep copy, so state-store objects are never mutated in
// place.
func (i *Image) Copy() *Image {
	if i == nil {
		return nil
	}
	c := *i
	c.Tags = slices.Clone(i.Tags)
	c.Properties = copyStringMap(i.Properties)
	if i.Locations != nil {
		c.Locations = make([]*ImageLocation, len(i.Locations))
		for n, l := range i.Locations {
			lc := *l
			c.Locations[n] = &lc
		}
	}
	return &c
}

// HasData reports whether the image's data was uploaded.
func (i *Image) HasData() bool { return i.HashValue != "" }

// HeldBy reports whether the server with that node id holds the data.
func (i *Image) HeldBy(nodeID string) bool {
	for _, l := range i.Locations {
		if l.NodeID == nodeID {
			return true
		}
	}
	return false
}

// HasTag reports whether the image carries the tag.
func (i *Image) HasTag(tag string) bool { return slices.Contains(i.Tags, tag) }

// ImageAccess describes who asks about an image, for Glance's default
// policy.
type ImageAccess struct {
	// ProjectID is the caller's project; "" with Admin for operators.
	ProjectID string
	Admin     bool
}

// VisibleTo reports whether the caller may see the image (show it, boot
// it): admins see every image; others see public and community images,
// their own project's, and shared images they are a member of, whatever
// the membership's status (so that they can accept it). member is the
// caller's membership of the image, or nil.
func (i *Image) VisibleTo(a ImageAccess, member *ImageMember) bool {
	switch {
	case a.Admin:
		return true
	case i.Visibility == ImagePublic || i.Visibility == ImageCommunity:
		return true
	case i.Owner != "" && i.Owner == a.ProjectID:
		return true
	case i.Visibility == ImageShared:
		return member != nil && member.MemberID == a.ProjectID
	}
	return false
}

// ModifiableBy reports whether the caller may change or delete the image:
// its owner's project, or an admin.
func (i *Image) ModifiableBy(a ImageAccess) bool {
	return a.Admin || (i.Owner != "" && i.Owner == a.ProjectID)
}

var imageUUIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// IsImageID reports whether s has the shape of an image id (a UUID).
func IsImageID(s string) bool { return imageUUIDPattern.MatchString(s) }

// Validate checks the fields a user sets, as Glance's schema does.
func (i *Image) Validate() error {
	var errs []string
	if !IsImageID(i.ID) {
		errs = append(errs, fmt.Sprintf("id %q is not a UUID", i.ID))
	}
	if len(i.Name) > 255 {
		errs = append(errs, "name is longer than 255 characters")
	}
	if !slices.Contains(ImageVisibilities, i.Visibility) {
		errs = append(errs, fmt.Sprintf("visibility %q is not one of %s", i.Visibility, strings.Join(ImageVisibilities, ", ")))
	}
	if len(i.Owner) > 255 {
		errs = append(errs, "owner is longer than 255 characters")
	}
	if i.DiskFormat != "" && !slices.Contains(ImageDiskFormats, i.DiskFormat) {
		errs = append(errs, fmt.Sprintf("disk_format %q is not one of %s", i.DiskFormat, strings.Join(ImageDiskFormats, ", ")))
	}
	if i.ContainerFormat != "" && !slices.Contains(ImageContainerFormats, i.ContainerFormat) {
		errs = append(errs, fmt.Sprintf("container_format %q is not one of %s", i.ContainerFormat, strings.Join(ImageContainerFormats, ", ")))
	}
	if i.MinDisk < 0 || i.MinDisk > 1<<31-1 {
		errs = append(errs, "min_disk must be between 0 and 2147483647")
	}
	if i.MinRAM < 0 || i.MinRAM > 1<<31-1 {
		errs = append(errs, "min_ram must be between 0 and 2147483647")
	}
	if len(i.Tags) > MaxImageTags {
		errs = append(errs, fmt.Sprintf("more than %d tags", MaxImageTags))
	}
	for _, t := range i.Tags {
		if t == "" || len(t) > 255 {
			errs = append(errs, fmt.Sprintf("tag %q must be 1-255 characters", t))
		}
	}
	if len(i.Properties) > MaxImageProperties {
		errs = append(errs, fmt.Sprintf("more than %d properties", MaxImageProperties))
	}
	for k, v := range i.Properties {
		if k == "" || len(k) > 255 {
			errs = append(errs, fmt.Sprintf("property %q: names must be 1-255 characters", k))
		}
		if len(v) > 65535 {
			errs = append(errs, fmt.Sprintf("property %q: values must be at most 65535 characters", k))
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return Errorf(KindInvalid, "image: %s", strings.Join(errs, "; "))
	}
	return nil
}

// ImageMember shares an image with another project (Glance's image
// members): the image's owner adds the project, which then accepts or
// rejects it.
type ImageMember struct {
	ImageID string
	// MemberID is the project the image is shared with.
	MemberID string
	// Status is pending, accepted or rejected.
	Status    string
	CreatedAt int64
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// ImageUpsertEntry is the Raft entry that creates an image (Create) or
// changes what users may change of it: name, visibility, owner, formats
// (while queued), min_disk, min_ram, protected, hidden, tags and
// properties. Status, data and locations are kept from the stored
// image. CASIndex, when not zero, must be the stored image's ModifyIndex,
// so a read-modify-write never loses a concurrent change.
type ImageUpsertEntry struct {
	Image    *Image
	Create   bool
	CASIndex uint64
}

// ImageDeleteEntry is the Raft entry that deletes an image and its
// members. A protected image is refused.
type ImageDeleteEntry struct {
	ImageID string
}

// Image data operations, the ops of ImageDataEntry.
const (
	// ImageDataStart moves a queued image to saving, received by NodeID.
	ImageDataStart = "start"
	// ImageDataFinish records the data NodeID stored and makes the
	// image active.
	ImageDataFinish = "finish"
	// ImageDataAbort returns an image NodeID was saving to queued.
	ImageDataAbort = "abort"
	// ImageDeactivate and ImageReactivate are the admin actions.
	ImageDeactivate = "deactivate"
	ImageReactivate = "reactivate"
)

// ImageDataEntry is the Raft entry for an image's status transitions.
type ImageDataEntry struct {
	ImageID string
	Op      string
	// NodeID is the server receiving (start, abort) or holding (finish)
	// the data. An abort without one aborts whoever is saving.
	NodeID      string
	Size        int64
	VirtualSize int64
	Checksum    string
	HashValue   string
	// At is when the transition happened (unix nanoseconds).
	At int64
}

// ImageLocationEntry is the Raft entry that records (or, with Remove,
// forgets) that a server holds the blob named HashValue, on every image
// with that data.
type ImageLocationEntry struct {
	HashValue string
	NodeID    string
	Remove    bool
	At        int64
}

// ImageMemberEntry is the Raft entry that adds (Create), updates or
// (Delete) removes an image member.
type ImageMemberEntry struct {
	Member *ImageMember
	Create bool
	Delete bool
}

// ImageCreateRequest creates an image; the server chooses the id unless
// the image has one, and its status is queued.
type ImageCreateRequest struct {
	Image *Image
	WriteRequest
}

// ImageUpdateRequest changes an image's user-settable fields (see
// ImageUpsertEntry), with CASIndex as the stored image's ModifyIndex the
// change was computed from (0 for none).
type ImageUpdateRequest struct {
	Image    *Image
	CASIndex uint64
	WriteRequest
}

// ImageSpecificRequest reads one image.
type ImageSpecificRequest struct {
	ImageID string
	QueryOptions
}

// ImageDeleteRequest deletes one image.
type ImageDeleteRequest struct {
	ImageID string
	WriteRequest
}

// ImageListRequest lists every image; with MemberProjectID, the answer
// also carries that project's memberships, for visibility checks at the
// edge.
type ImageListRequest struct {
	MemberProjectID string
	QueryOptions
}

// SingleImageResponse answers a read or a write of one image.
type SingleImageResponse struct {
	Image *Image
	QueryMeta
}

// ImageListResponse answers ImageListRequest, images by creation.
type ImageListResponse struct {
	Images []*Image
	// Members are MemberProjectID's memberships.
	Members []*ImageMember
	QueryMeta
}

// ImageDataRequest applies an ImageDataEntry; the server fills At.
type ImageDataRequest struct {
	Entry *ImageDataEntry
	WriteRequest
}

// ImageLocationRequest applies an ImageLocationEntry; the server fills
// At.
type ImageLocationRequest struct {
	Entry *ImageLocationEntry
	WriteRequest
}

// ImageMemberRequest creates, updates or deletes one image member.
type ImageMemberRequest struct {
	Entry *ImageMemberEntry
	WriteRequest
}

// ImageMemberListRequest lists an image's members.
type ImageMemberListRequest struct {
	ImageID string
	QueryOptions
}

// ImageMemberListResponse answers ImageMemberListRequest.
type ImageMemberListResponse struct {
	Members []*ImageMember
	QueryMeta
}

// SingleImageMemberResponse answers a member write.
type SingleImageMemberResponse struct {
	Member *ImageMember
	WriteMeta
}

// Image blob streams. Image data travels between agents and servers, and
// between servers, over streams of the RPC listener (rpc.TypeStream), not
// through Raft: a header frame, then raw bytes.
const (
	// BlobGetStream reads a blob: BlobGetRequest, then BlobGetResponse
	// and Length bytes.
	BlobGetStream = "Blob.Get"
	// BlobPutStream uploads an image's data: BlobPutRequest,
	// BlobPutReady, chunks (rpc.ChunkWriter) of data, then BlobPutResult.
	BlobPutStream = "Blob.Put"
)

// BlobGetRequest asks for Length bytes (all the rest when negative) from
// Offset of the blob named HashValue. Local asks the server to answer from
// its own store only, not to fetch from another server that holds the blob.
// AuthToken is the caller's credential, checked by the stream hook as an
// RPC's (a user's token, a node secret, a server's credential).
type BlobGetRequest struct {
	HashValue string
	Offset    int64
	Length    int64
	Local     bool
	AuthToken string
}

// BlobGetResponse precedes the bytes: Size is the whole blob's size,
// Length how many bytes follow. Error, when set, is the error text (with
// its kind) and no bytes follow.
type BlobGetResponse struct {
	Size   int64
	Length int64
	Error  string
}

// BlobPutRequest opens an upload of an image's data; Size is the declared
// size, or -1 when unknown. AuthToken is the caller's credential.
type BlobPutRequest struct {
	ImageID   string
	Size      int64
	AuthToken string
}

// BlobPutReady answers a BlobPutRequest: the image is saving and the data
// may follow, unless Error says why not.
type BlobPutReady struct {
	Error string
}

// BlobPutResult ends an upload: the active image, or the error.
type BlobPutResult struct {
	Image *Image
	Error string
}
