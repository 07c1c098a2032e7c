package server

import (
	"strings"
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// Image is the endpoint for image records and members. Who may see or
// change which image is the API's policy (structs.Image.VisibleTo and
// ModifiableBy); the endpoint trusts its callers as the other endpoints
// do. Image data never passes here: it travels over the Blob streams
// (image_blobs.go).
type Image struct{ srv *Server }

// Create stores a new queued image, with the id the caller chose or a
// new one; visibility defaults to shared, as in Glance.
func (e *Image) Create(args *structs.ImageCreateRequest, reply *structs.SingleImageResponse) error {
	if done, err := e.srv.forward("Image.Create", args, args, reply); done {
		return err
	}
	if args.Image == nil {
		return structs.Errorf(structs.KindInvalid, "no image to create")
	}
	img := args.Image.Copy()
	if img.ID == "" {
		img.ID = uuid.NewString()
	}
	img.ID = strings.ToLower(img.ID)
	if img.Visibility == "" {
		img.Visibility = structs.ImageShared
	}
	now := time.Now().UnixNano()
	img.CreatedAt, img.UpdatedAt = now, now
	img.Status, img.Locations, img.Uploader = structs.ImageQueued, nil, ""
	img.Size, img.VirtualSize, img.Checksum, img.HashAlgo, img.HashValue = 0, 0, "", "", ""
	if err := img.Validate(); err != nil {
		return err
	}
	index, err := e.srv.apply(structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: img, Create: true})
	if err != nil {
		return err
	}
	return e.srv.readImage(img.ID, index, reply)
}

// Update changes an image's user-settable fields, refusing the change if
// the image changed since CASIndex.
func (e *Image) Update(args *structs.ImageUpdateRequest, reply *structs.SingleImageResponse) error {
	if done, err := e.srv.forward("Image.Update", args, args, reply); done {
		return err
	}
	if args.Image == nil || args.Image.ID == "" {
		return structs.Errorf(structs.KindInvalid, "no image to update")
	}
	img := args.Image.Copy()
	img.UpdatedAt = time.Now().UnixNano()
	index, err := e.srv.apply(structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: img, CASIndex: args.CASIndex})
	if err != nil {
		return err
	}
	return e.srv.readImage(img.ID, index, reply)
}

// readImage answers a write with the image as committed.
func (s *Server) readImage(id string, index uint64, reply *structs.SingleImageResponse) error {
	img, err := s.fsm.State().ImageByID(nil, id)
	if err != nil {
		return err
	}
	if img == nil {
		return fsm.ImageNotFound(id)
	}
	reply.Image, reply.Index = img, index
	return nil
}

// Get reads one image.
func (e *Image) Get(args *structs.ImageSpecificRequest, reply *structs.SingleImageResponse) error {
	if done, err := e.srv.forward("Image.Get", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		img, err := state.ImageByID(ws, strings.ToLower(args.ImageID))
		reply.Image = img
		return img, state.Index(fsm.TableImages), err
	})
	if err == nil && reply.Image == nil {
		return fsm.ImageNotFound(args.ImageID)
	}
	return err
}

// List reads every image, and the memberships of MemberProjectID.
func (e *Image) List(args *structs.ImageListRequest, reply *structs.ImageListResponse) error {
	if done, err := e.srv.forward("Image.List", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		images, err := state.Images(ws)
		if err != nil {
			return nil, 0, err
		}
		reply.Images, reply.Members = images, nil
		if args.MemberProjectID != "" {
			if reply.Members, err = state.ImageMembershipsOf(ws, args.MemberProjectID); err != nil {
				return nil, 0, err
			}
		}
		return images, imagesIndex(state), nil
	})
}

// Delete removes an image; the FSM refuses a protected one.
func (e *Image) Delete(args *structs.ImageDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Image.Delete", args, args, reply); done {
		return err
	}
	index, err := e.srv.apply(structs.ImageDeleteType, &structs.ImageDeleteEntry{ImageID: strings.ToLower(args.ImageID)})
	reply.Index = index
	if err == nil {
		e.srv.nudgeImageSync()
	}
	return err
}

// Data applies a status transition (upload start, finish, abort;
// deactivate, reactivate) and answers the image as it is after it.
func (e *Image) Data(args *structs.ImageDataRequest, reply *structs.SingleImageResponse) error {
	if done, err := e.srv.forward("Image.Data", args, args, reply); done {
		return err
	}
	if args.Entry == nil || args.Entry.ImageID == "" {
		return structs.Errorf(structs.KindInvalid, "no image data operation")
	}
	entry := *args.Entry
	entry.ImageID = strings.ToLower(entry.ImageID)
	entry.At = time.Now().UnixNano()
	index, err := e.srv.apply(structs.ImageDataType, &entry)
	if err != nil {
		return err
	}
	return e.srv.readImage(entry.ImageID, index, reply)
}

// Location records (or forgets) that a server holds a blob.
func (e *Image) Location(args *structs.ImageLocationRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("Image.Location", args, args, reply); done {
		return err
	}
	if args.Entry == nil {
		return structs.Errorf(structs.KindInvalid, "no image location")
	}
	entry := *args.Entry
	entry.At = time.Now().UnixNano()
	index, err := e.srv.apply(structs.ImageLocationType, &entry)
	reply.Index = index
	return err
}

// Member creates, updates (its status) or deletes an image member.
func (e *Image) Member(args *structs.ImageMemberRequest, reply *structs.SingleImageMemberResponse) error {
	if done, err := e.srv.forward("Image.Member", args, args, reply); done {
		return err
	}
	if args.Entry == nil || args.Entry.Member == nil {
		return structs.Errorf(structs.KindInvalid, "no image member")
	}
	entry := *args.Entry
	m := *entry.Member
	m.ImageID = strings.ToLower(m.ImageID)
	now := time.Now().UnixNano()
	m.CreatedAt, m.UpdatedAt = now, now
	if entry.Create {
		m.Status = structs.MemberPending
	}
	entry.Member = &m
	index, err := e.srv.apply(structs.ImageMemberType, &entry)
	if err != nil {
		return err
	}
	reply.Index = index
	if !entry.Delete {
		reply.Member, err = e.srv.fsm.State().ImageMemberByID(nil, m.ImageID, m.MemberID)
	}
	return err
}

// MemberList lists an image's members.
func (e *Image) MemberList(args *structs.ImageMemberListRequest, reply *structs.ImageMemberListResponse) error {
	if done, err := e.srv.forward("Image.MemberList", args, args, reply); done {
		return err
	}
	id := strings.ToLower(args.ImageID)
	found := false
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		img, err := state.ImageByID(ws, id)
		if err != nil {
			return nil, 0, err
		}
		found = img != nil
		members, err := state.ImageMembers(ws, id)
		reply.Members = members
		return members, imagesIndex(state), err
	})
	if err == nil && !found {
		return fsm.ImageNotFound(args.ImageID)
	}
	return err
}

// imagesIndex is the index a read of images and members reflects.
func imagesIndex(state *fsm.StateStore) uint64 {
	return max(state.Index(fsm.TableImages), state.Index(fsm.TableImageMembers))
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
