package server

import (
	"crypto/rand"
	"encoding/hex"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/structs"
)

// S3 is the endpoint for the S3 object store's records: buckets, object
// and multipart records, listings, and turning an object into an image.
// The caller's project (S3Caller, from the request's verified signature)
// decides access: a bucket and its objects belong to one project. Object
// data never passes here: it travels over the S3.Put and S3.Complete
// streams (s3_blobs_endpoint.go).
type S3 struct{ srv *Server }

// accessDenied is S3's answer for another project's bucket.
func accessDenied() error {
	return structs.S3Errorf(structs.KindPermission, structs.S3ErrAccessDenied, "Access Denied")
}

// BucketCreate creates a bucket owned by the caller's project.
func (e *S3) BucketCreate(args *structs.S3BucketRequest, reply *structs.S3BucketResponse) error {
	if done, err := e.srv.forward("S3.BucketCreate", args, args, reply); done {
		return err
	}
	if args.Caller.ProjectID == "" {
		return accessDenied()
	}
	b := &structs.S3Bucket{Name: args.Name, ProjectID: args.Caller.ProjectID, UserID: args.Caller.UserID, CreatedAt: time.Now().UnixNano()}
	index, err := e.srv.apply(structs.S3BucketType, &structs.S3BucketEntry{Op: structs.S3OpCreate, Bucket: b})
	if err != nil {
		return err
	}
	reply.Bucket, err = e.srv.fsm.State().S3BucketByName(nil, b.Name)
	reply.Index = index
	return err
}

// BucketDelete deletes an empty bucket of the caller's project.
func (e *S3) BucketDelete(args *structs.S3BucketRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("S3.BucketDelete", args, args, reply); done {
		return err
	}
	index, err := e.srv.apply(structs.S3BucketType, &structs.S3BucketEntry{Op: structs.S3OpDelete, Name: args.Name,
		ProjectID: args.Caller.ProjectID, Admin: args.Caller.Admin})
	reply.Index = index
	return err
}

// BucketGet reads a bucket.
func (e *S3) BucketGet(args *structs.S3BucketGetRequest, reply *structs.S3BucketResponse) error {
	if done, err := e.srv.forward("S3.BucketGet", args, args, reply); done {
		return err
	}
	err := e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		b, err := state.S3BucketByName(ws, args.Name)
		reply.Bucket = b
		return b, state.Index(fsm.TableS3Buckets), err
	})
	if err == nil && reply.Bucket == nil {
		return fsm.S3NoSuchBucket(args.Name)
	}
	return err
}

// BucketList lists a project's buckets (every bucket when ProjectID is
// empty).
func (e *S3) BucketList(args *structs.S3BucketListRequest, reply *structs.S3BucketListResponse) error {
	if done, err := e.srv.forward("S3.BucketList", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		out, err := state.S3Buckets(ws, args.ProjectID)
		reply.Buckets = out
		return out, state.Index(fsm.TableS3Buckets), err
	})
}

// ObjectGet reads an object's record (or, with UploadID, an upload's)
// with its bucket.
func (e *S3) ObjectGet(args *structs.S3ObjectGetRequest, reply *structs.S3ObjectResponse) error {
	if done, err := e.srv.forward("S3.ObjectGet", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		index := max(state.Index(fsm.TableS3Buckets), state.Index(fsm.TableS3Objects))
		b, err := state.S3BucketByName(ws, args.Bucket)
		if err != nil {
			return nil, 0, err
		}
		if b == nil {
			return nil, index, fsm.S3NoSuchBucket(args.Bucket)
		}
		id := structs.S3ObjectID(args.Bucket, args.Key)
		if args.UploadID != "" {
			id = structs.S3UploadRecordID(args.Bucket, args.UploadID)
		}
		o, err := state.S3ObjectByID(ws, id)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case o == nil && args.UploadID != "", o != nil && args.UploadID != "" && o.Key != args.Key:
			return nil, index, fsm.S3NoSuchUpload(args.UploadID)
		case o == nil:
			return nil, index, fsm.S3NoSuchKey(args.Key)
		}
		reply.Bucket, reply.Object = b, o
		return o, index, nil
	})
}

// bucketFor reads a bucket the caller may use, from this server's state.
func (s *Server) bucketFor(name string, caller structs.S3Caller) (*structs.S3Bucket, error) {
	b, err := s.fsm.State().S3BucketByName(nil, name)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, fsm.S3NoSuchBucket(name)
	}
	if !caller.CanAccess(b.ProjectID) {
		return nil, accessDenied()
	}
	return b, nil
}

// ObjectDelete deletes an object, or with UploadID aborts an upload.
func (e *S3) ObjectDelete(args *structs.S3ObjectDeleteRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("S3.ObjectDelete", args, args, reply); done {
		return err
	}
	if _, err := e.srv.bucketFor(args.Bucket, args.Caller); err != nil {
		return err
	}
	var index uint64
	var err error
	if args.UploadID != "" {
		index, err = e.srv.apply(structs.S3MultipartType, &structs.S3MultipartEntry{Op: structs.S3OpAbort,
			Bucket: args.Bucket, UploadID: args.UploadID, At: time.Now().UnixNano()})
	} else {
		index, err = e.srv.apply(structs.S3ObjectType, &structs.S3ObjectEntry{Op: structs.S3OpDelete,
			Bucket: args.Bucket, Key: args.Key, At: time.Now().UnixNano()})
	}
	reply.Index = index
	if err == nil {
		e.srv.nudgeImageSync()
	}
	return err
}

// UploadCreate starts a multipart upload with a new id.
func (e *S3) UploadCreate(args *structs.S3UploadCreateRequest, reply *structs.S3ObjectResponse) error {
	if done, err := e.srv.forward("S3.UploadCreate", args, args, reply); done {
		return err
	}
	if args.Upload == nil {
		return structs.Errorf(structs.KindInvalid, "no upload to create")
	}
	b, err := e.srv.bucketFor(args.Upload.Bucket, args.Caller)
	if err != nil {
		return err
	}
	u := args.Upload.Copy()
	u.UploadID = newUploadID()
	u.ProjectID, u.UserID = args.Caller.ProjectID, args.Caller.UserID
	now := time.Now().UnixNano()
	u.CreatedAt, u.UpdatedAt = now, now
	index, err := e.srv.apply(structs.S3MultipartType, &structs.S3MultipartEntry{Op: structs.S3OpCreate, Upload: u, At: now})
	if err != nil {
		return err
	}
	reply.Bucket, reply.Index = b, index
	reply.Object, err = e.srv.fsm.State().S3ObjectByID(nil, structs.S3UploadRecordID(u.Bucket, u.UploadID))
	return err
}

// newUploadID is a random, URL-safe upload id.
func newUploadID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ObjectPut commits an object entry; the S3.Put and S3.Complete streams
// propose it once the blob is stored.
func (e *S3) ObjectPut(args *structs.S3ObjectPutRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("S3.ObjectPut", args, args, reply); done {
		return err
	}
	if args.Entry == nil {
		return structs.Errorf(structs.KindInvalid, "no object entry")
	}
	entry := *args.Entry
	entry.At = time.Now().UnixNano()
	index, err := e.srv.apply(structs.S3ObjectType, &entry)
	reply.Index = index
	return err
}

// Multipart commits a multipart entry (a part, a complete).
func (e *S3) Multipart(args *structs.S3MultipartRequest, reply *structs.GenericResponse) error {
	if done, err := e.srv.forward("S3.Multipart", args, args, reply); done {
		return err
	}
	if args.Entry == nil {
		return structs.Errorf(structs.KindInvalid, "no multipart entry")
	}
	entry := *args.Entry
	entry.At = time.Now().UnixNano()
	index, err := e.srv.apply(structs.S3MultipartType, &entry)
	reply.Index = index
	return err
}

// ObjectList lists a bucket's keys (ListObjectsV2).
func (e *S3) ObjectList(args *structs.S3ObjectListRequest, reply *structs.S3ObjectListResponse) error {
	if done, err := e.srv.forward("S3.ObjectList", args, args, reply); done {
		return err
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, state *fsm.StateStore) (any, uint64, error) {
		index := max(state.Index(fsm.TableS3Buckets), state.Index(fsm.TableS3Objects))
		b, err := state.S3BucketByName(ws, args.Bucket)
		if err != nil {
			return nil, 0, err
		}
		if b == nil {
			return nil, index, fsm.S3NoSuchBucket(args.Bucket)
		}
		if !args.Caller.CanAccess(b.ProjectID) {
			return nil, index, accessDenied()
		}
		res, err := state.S3ListObjects(ws, args.Bucket, args.Prefix, args.Delimiter, args.StartAfter, args.MaxKeys)
		if err != nil {
			return nil, 0, err
		}
		reply.Objects, reply.CommonPrefixes, reply.Truncated = res.Objects, res.CommonPrefixes, res.Truncated
		reply.NextStartAfter = ""
		if res.Truncated {
			reply.NextStartAfter = res.Next
		}
		return res, index, nil
	})
}

// ImageImport creates an active image whose data is an object's blob:
// the image names the same SHA-512 and the same locations, so no byte
// is copied, and the blob stays while either names it.
func (e *S3) ImageImport(args *structs.S3ImageImportRequest, reply *structs.SingleImageResponse) error {
	if done, err := e.srv.forward("S3.ImageImport", args, args, reply); done {
		return err
	}
	if args.Image == nil {
		return structs.Errorf(structs.KindInvalid, "no image to create")
	}
	if _, err := e.srv.bucketFor(args.Bucket, args.Caller); err != nil {
		return err
	}
	o, err := e.srv.fsm.State().S3ObjectByID(nil, structs.S3ObjectID(args.Bucket, args.Key))
	if err != nil {
		return err
	}
	if o == nil {
		return fsm.S3NoSuchKey(args.Key)
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
	img.CreatedAt, img.UpdatedAt, img.Uploader = now, now, ""
	img.Status, img.Size, img.Checksum = structs.ImageActive, o.Size, o.MD5
	img.HashAlgo, img.HashValue = structs.ImageHashAlgo, o.HashValue
	img.VirtualSize = e.srv.blobVirtualSize(img.DiskFormat, o.HashValue, o.Size)
	img.Locations = nil
	for _, l := range o.Locations {
		img.Locations = append(img.Locations, &structs.ImageLocation{NodeID: l.NodeID, AddedAt: now})
	}
	if err := img.Validate(); err != nil {
		return err
	}
	index, err := e.srv.apply(structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: img, Create: true})
	if err != nil {
		return err
	}
	e.srv.nudgeImageSync()
	return e.srv.readImage(img.ID, index, reply)
}

// blobVirtualSize inspects a locally held blob's first bytes for a
// disk's virtual size; 0 when the blob is not here or says nothing.
func (s *Server) blobVirtualSize(diskFormat, hash string, size int64) int64 {
	f, _, err := s.blobs.Open(hash)
	if err != nil {
		return 0
	}
	defer f.Close()
	header := make([]byte, imagestore.HeaderSize)
	n, _ := io.ReadFull(f, header)
	return imagestore.VirtualSize(diskFormat, header[:n], size)
}
