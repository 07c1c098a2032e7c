package fsm

import (
	"fmt"
	"slices"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Table names, for Index and blocking queries.
const (
	TableImages       = "images"
	TableImageMembers = "image_members"
)

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableImages,
			Indexes: map[string]*memdb.IndexSchema{
				"id":    idIndex("ID"),
				"name":  {Name: "name", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Name"}},
				"hash":  {Name: "hash", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "HashValue"}},
				"owner": {Name: "owner", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "Owner"}},
			},
		}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableImageMembers,
			Indexes: map[string]*memdb.IndexSchema{
				"id": {Name: "id", Unique: true, Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "ImageID"},
					&memdb.StringFieldIndex{Field: "MemberID"},
				}}},
				"image":  {Name: "image", Indexer: &memdb.StringFieldIndex{Field: "ImageID"}},
				"member": {Name: "member", Indexer: &memdb.StringFieldIndex{Field: "MemberID"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.ImageSnapshot,
		table:      TableImages,
		newRecord:  func() any { return new(structs.Image) },
	})
	registerSnapshot(snapshotTable{
		recordType: structs.ImageMemberSnapshot,
		table:      TableImageMembers,
		newRecord:  func() any { return new(structs.ImageMember) },
	})
	registerApply(structs.ImageUpsertType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ImageUpsertEntry
		if err := decodeBody(structs.ImageUpsertType, body, &e); err != nil {
			return err
		}
		return s.UpsertImage(index, &e)
	})
	registerApply(structs.ImageDeleteType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ImageDeleteEntry
		if err := decodeBody(structs.ImageDeleteType, body, &e); err != nil {
			return err
		}
		return s.DeleteImage(index, e.ImageID)
	})
	registerApply(structs.ImageDataType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ImageDataEntry
		if err := decodeBody(structs.ImageDataType, body, &e); err != nil {
			return err
		}
		return s.ImageData(index, &e)
	})
	registerApply(structs.ImageLocationType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ImageLocationEntry
		if err := decodeBody(structs.ImageLocationType, body, &e); err != nil {
			return err
		}
		return s.ImageLocation(index, &e)
	})
	registerApply(structs.ImageMemberType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.ImageMemberEntry
		if err := decodeBody(structs.ImageMemberType, body, &e); err != nil {
			return err
		}
		return s.UpsertImageMember(index, &e)
	})
}

// ImageNotFound is Glance's not-found error for an image id.
func ImageNotFound(id string) error {
	return structs.Errorf(structs.KindNotFound, "No image found with ID %s", id)
}

// UpsertImage applies an ImageUpsertEntry: a create stores a queued image
// (or an active one that already carries its data and locations, which
// only servers propose); an update changes the user-settable fields.
func (s *StateStore) UpsertImage(index uint64, e *structs.ImageUpsertEntry) error {
	if e.Image == nil {
		return structs.Errorf(structs.KindInvalid, "image upsert without an image")
	}
	in := e.Image.Copy()
	txn := s.writeTxn()
	defer txn.Abort()
	existing, err := first[*structs.Image](txn, nil, TableImages, "id", in.ID)
	if err != nil {
		return err
	}
	var img *structs.Image
	if e.Create {
		if existing != nil {
			return structs.Errorf(structs.KindConflict, "Image with identifier %s already exists!", in.ID)
		}
		img = in
		if !(img.Status == structs.ImageActive && img.HasData() && len(img.Locations) > 0) {
			img.Status, img.Size, img.VirtualSize = structs.ImageQueued, 0, 0
			img.Checksum, img.HashAlgo, img.HashValue, img.Locations = "", "", "", nil
		}
		img.Uploader = ""
		img.CreateIndex = index
	} else {
		if existing == nil {
			return ImageNotFound(in.ID)
		}
		if e.CASIndex != 0 && existing.ModifyIndex != e.CASIndex {
			return structs.Errorf(structs.KindConflict, "image %s changed concurrently", in.ID)
		}
		img = existing.Copy()
		if (in.DiskFormat != img.DiskFormat || in.ContainerFormat != img.ContainerFormat) && img.Status != structs.ImageQueued {
			attr := "disk_format"
			if in.DiskFormat == img.DiskFormat {
				attr = "container_format"
			}
			return structs.Errorf(structs.KindPermission, "Attribute %s can be only replaced for a queued image.", attr)
		}
		img.Name, img.Visibility, img.Owner = in.Name, in.Visibility, in.Owner
		img.DiskFormat, img.ContainerFormat = in.DiskFormat, in.ContainerFormat
		img.MinDisk, img.MinRAM, img.Protected, img.Hidden = in.MinDisk, in.MinRAM, in.Protected, in.Hidden
		img.Tags, img.Properties = in.Tags, in.Properties
		img.UpdatedAt = in.UpdatedAt
	}
	img.Tags = uniqueTags(img.Tags)
	if img.Properties == nil {
		img.Properties = map[string]string{}
	}
	if err := img.Validate(); err != nil {
		return err
	}
	img.ModifyIndex = index
	if err := txn.Insert(TableImages, img); err != nil {
		return fmt.Errorf("insert image %s: %w", img.ID, err)
	}
	return commitAt(txn, index, TableImages)
}

// uniqueTags drops repeated tags, keeping the first of each.
func uniqueTags(tags []string) []string {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// DeleteImage removes an image and its members. A protected image is
// refused. The data stays in the servers' stores until their next sweep
// finds no image naming it.
func (s *StateStore) DeleteImage(index uint64, id string) error {
	txn := s.writeTxn()
	defer txn.Abort()
	img, err := first[*structs.Image](txn, nil, TableImages, "id", id)
	if err != nil {
		return err
	}
	if img == nil {
		return ImageNotFound(id)
	}
	if img.Protected {
		return structs.Errorf(structs.KindPermission, "Image %s is protected and cannot be deleted.", id)
	}
	if err := txn.Delete(TableImages, img); err != nil {
		return fmt.Errorf("delete image %s: %w", id, err)
	}
	if _, err := txn.DeleteAll(TableImageMembers, "image", id); err != nil {
		return fmt.Errorf("delete members of image %s: %w", id, err)
	}
	return commitAt(txn, index, TableImages, TableImageMembers)
}

// ImageData applies a status transition: upload start, finish and abort,
// deactivate and reactivate.
func (s *StateStore) ImageData(index uint64, e *structs.ImageDataEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	existing, err := first[*structs.Image](txn, nil, TableImages, "id", e.ImageID)
	if err != nil {
		return err
	}
	if existing == nil {
		return ImageNotFound(e.ImageID)
	}
	img := existing.Copy()
	transition := func(to string) error {
		return structs.Errorf(structs.KindConflict, "Image status transition from %s to %s is not allowed", img.Status, to)
	}
	switch e.Op {
	case structs.ImageDataStart:
		if img.Status != structs.ImageQueued {
			return transition(structs.ImageSaving)
		}
		if e.NodeID == "" {
			return structs.Errorf(structs.KindInvalid, "image upload start without a server")
		}
		img.Status, img.Uploader = structs.ImageSaving, e.NodeID
	case structs.ImageDataFinish:
		if img.Status != structs.ImageSaving || img.Uploader != e.NodeID {
			return transition(structs.ImageActive)
		}
		if e.HashValue == "" || e.Size < 0 {
			return structs.Errorf(structs.KindInvalid, "image upload finish without its data's hash")
		}
		img.Status, img.Uploader = structs.ImageActive, ""
		img.Size, img.VirtualSize, img.Checksum = e.Size, e.VirtualSize, e.Checksum
		img.HashAlgo, img.HashValue = structs.ImageHashAlgo, e.HashValue
		// The uploader holds the data, and so does every server that
		// holds another image with the same bytes.
		img.Locations = []*structs.ImageLocation{{NodeID: e.NodeID, AddedAt: e.At}}
		same, err := list[*structs.Image](txn, nil, TableImages, "hash", e.HashValue)
		if err != nil {
			return err
		}
		for _, o := range same {
			for _, l := range o.Locations {
				if !img.HeldBy(l.NodeID) {
					img.Locations = append(img.Locations, &structs.ImageLocation{NodeID: l.NodeID, AddedAt: e.At})
				}
			}
		}
	case structs.ImageDataAbort:
		if img.Status != structs.ImageSaving || (e.NodeID != "" && img.Uploader != e.NodeID) {
			return transition(structs.ImageQueued)
		}
		img.Status, img.Uploader = structs.ImageQueued, ""
	case structs.ImageDeactivate:
		switch img.Status {
		case structs.ImageDeactivated:
			return nil
		case structs.ImageActive:
			img.Status = structs.ImageDeactivated
		default:
			return structs.Errorf(structs.KindPermission, "Not allowed to deactivate image in status '%s'", img.Status)
		}
	case structs.ImageReactivate:
		switch img.Status {
		case structs.ImageActive:
			return nil
		case structs.ImageDeactivated:
			img.Status = structs.ImageActive
		default:
			return structs.Errorf(structs.KindPermission, "Not allowed to reactivate image in status '%s'", img.Status)
		}
	default:
		return structs.Errorf(structs.KindInvalid, "unknown image data operation %q", e.Op)
	}
	img.UpdatedAt, img.ModifyIndex = e.At, index
	if err := txn.Insert(TableImages, img); err != nil {
		return fmt.Errorf("update image %s: %w", img.ID, err)
	}
	return commitAt(txn, index, TableImages)
}

// ImageLocation records (or forgets) that a server holds a blob, on every
// image whose data it is.
func (s *StateStore) ImageLocation(index uint64, e *structs.ImageLocationEntry) error {
	if e.HashValue == "" || e.NodeID == "" {
		return structs.Errorf(structs.KindInvalid, "image location without a hash or a server")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	images, err := list[*structs.Image](txn, nil, TableImages, "hash", e.HashValue)
	if err != nil {
		return err
	}
	changed := false
	for _, existing := range images {
		if existing.HeldBy(e.NodeID) != e.Remove {
			continue
		}
		img := existing.Copy()
		if e.Remove {
			img.Locations = slices.DeleteFunc(img.Locations, func(l *structs.ImageLocation) bool { return l.NodeID == e.NodeID })
		} else {
			img.Locations = append(img.Locations, &structs.ImageLocation{NodeID: e.NodeID, AddedAt: e.At})
		}
		img.ModifyIndex = index
		if err := txn.Insert(TableImages, img); err != nil {
			return fmt.Errorf("update image %s: %w", img.ID, err)
		}
		changed = true
	}
	// S3 objects' blobs are in the same stores (fsm/s3.go).
	s3Changed, err := s3BlobLocation(txn, e)
	if err != nil {
		return err
	}
	var tables []string
	if changed {
		tables = append(tables, TableImages)
	}
	if s3Changed {
		tables = append(tables, TableS3Objects)
	}
	if len(tables) == 0 {
		return nil
	}
	return commitAt(txn, index, tables...)
}

// UpsertImageMember creates, updates or deletes an image member.
func (s *StateStore) UpsertImageMember(index uint64, e *structs.ImageMemberEntry) error {
	m := e.Member
	if m == nil || m.ImageID == "" || m.MemberID == "" {
		return structs.Errorf(structs.KindInvalid, "image member entry without an image or a member")
	}
	txn := s.writeTxn()
	defer txn.Abort()
	img, err := first[*structs.Image](txn, nil, TableImages, "id", m.ImageID)
	if err != nil {
		return err
	}
	if img == nil {
		return ImageNotFound(m.ImageID)
	}
	existing, err := first[*structs.ImageMember](txn, nil, TableImageMembers, "id", m.ImageID, m.MemberID)
	if err != nil {
		return err
	}
	notFound := func() error {
		return structs.Errorf(structs.KindNotFound, "%s is not a member of image %s", m.MemberID, m.ImageID)
	}
	switch {
	case e.Delete:
		if existing == nil {
			return notFound()
		}
		if err := txn.Delete(TableImageMembers, existing); err != nil {
			return fmt.Errorf("delete image member: %w", err)
		}
		return commitAt(txn, index, TableImageMembers)
	case e.Create:
		if img.Visibility != structs.ImageShared {
			return structs.Errorf(structs.KindPermission, "Only shared images have members.")
		}
		if existing != nil {
			return structs.Errorf(structs.KindConflict, "Member %s is duplicated for image %s", m.MemberID, m.ImageID)
		}
		members, err := list[*structs.ImageMember](txn, nil, TableImageMembers, "image", m.ImageID)
		if err != nil {
			return err
		}
		if len(members) >= structs.MaxImageMembers {
			return structs.Errorf(structs.KindQuotaReached, "The limit has been exceeded on the number of allowed image members for this image. Attempted: %d, Maximum: %d",
				len(members)+1, structs.MaxImageMembers)
		}
	default:
		if existing == nil {
			return notFound()
		}
	}
	switch m.Status {
	case structs.MemberPending, structs.MemberAccepted, structs.MemberRejected:
	default:
		return structs.Errorf(structs.KindInvalid, "Invalid status: %s", m.Status)
	}
	c := *m
	c.CreateIndex, c.ModifyIndex = index, index
	if existing != nil {
		c.CreateIndex, c.CreatedAt = existing.CreateIndex, existing.CreatedAt
	}
	if err := txn.Insert(TableImageMembers, &c); err != nil {
		return fmt.Errorf("insert image member: %w", err)
	}
	return commitAt(txn, index, TableImageMembers)
}

// ImageByID returns an image or nil.
func (s *StateStore) ImageByID(ws memdb.WatchSet, id string) (*structs.Image, error) {
	return first[*structs.Image](s.ReadTxn(), ws, TableImages, "id", id)
}

// Images lists every image by creation.
func (s *StateStore) Images(ws memdb.WatchSet) ([]*structs.Image, error) {
	out, err := list[*structs.Image](s.ReadTxn(), ws, TableImages)
	sortImages(out)
	return out, err
}

// ImagesByName lists the images of that name by creation.
func (s *StateStore) ImagesByName(ws memdb.WatchSet, name string) ([]*structs.Image, error) {
	out, err := list[*structs.Image](s.ReadTxn(), ws, TableImages, "name", name)
	sortImages(out)
	return out, err
}

// ImagesByHash lists the images whose data is the blob named hash.
func (s *StateStore) ImagesByHash(ws memdb.WatchSet, hash string) ([]*structs.Image, error) {
	out, err := list[*structs.Image](s.ReadTxn(), ws, TableImages, "hash", hash)
	sortImages(out)
	return out, err
}

// HasImages reports whether any image exists.
func (s *StateStore) HasImages(ws memdb.WatchSet) (bool, error) {
	img, err := first[*structs.Image](s.ReadTxn(), ws, TableImages, "id")
	return img != nil, err
}

func sortImages(out []*structs.Image) {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].CreateIndex != out[j].CreateIndex {
			return out[i].CreateIndex < out[j].CreateIndex
		}
		return out[i].ID < out[j].ID
	})
}

// ImageMembers lists an image's members by creation.
func (s *StateStore) ImageMembers(ws memdb.WatchSet, imageID string) ([]*structs.ImageMember, error) {
	out, err := list[*structs.ImageMember](s.ReadTxn(), ws, TableImageMembers, "image", imageID)
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreateIndex < out[j].CreateIndex })
	return out, err
}

// ImageMemberByID returns one membership or nil.
func (s *StateStore) ImageMemberByID(ws memdb.WatchSet, imageID, memberID string) (*structs.ImageMember, error) {
	return first[*structs.ImageMember](s.ReadTxn(), ws, TableImageMembers, "id", imageID, memberID)
}

// ImageMembershipsOf lists the memberships of a project.
func (s *StateStore) ImageMembershipsOf(ws memdb.WatchSet, projectID string) ([]*structs.ImageMember, error) {
	return list[*structs.ImageMember](s.ReadTxn(), ws, TableImageMembers, "member", projectID)
}
