package fsm

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// Table names of the S3 object store.
const (
	TableS3Buckets = "s3_buckets"
	// TableS3Objects holds objects and multipart uploads in progress,
	// keyed so that a bucket's objects are one ordered id prefix.
	TableS3Objects = "s3_objects"
)

func init() {
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableS3Buckets,
			Indexes: map[string]*memdb.IndexSchema{
				"id":      idIndex("Name"),
				"project": {Name: "project", AllowMissing: true, Indexer: &memdb.StringFieldIndex{Field: "ProjectID"}},
			},
		}
	})
	registerSchema(func() *memdb.TableSchema {
		return &memdb.TableSchema{
			Name: TableS3Objects,
			Indexes: map[string]*memdb.IndexSchema{
				"id":   idIndex("ID"),
				"hash": {Name: "hash", AllowMissing: true, Indexer: &memdb.StringSliceFieldIndex{Field: "Hashes"}},
			},
		}
	})
	registerSnapshot(snapshotTable{
		recordType: structs.S3BucketSnapshot,
		table:      TableS3Buckets,
		newRecord:  func() any { return new(structs.S3Bucket) },
	})
	registerSnapshot(snapshotTable{
		recordType: structs.S3ObjectSnapshot,
		table:      TableS3Objects,
		newRecord:  func() any { return new(structs.S3Object) },
	})
	registerApply(structs.S3BucketType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.S3BucketEntry
		if err := decodeBody(structs.S3BucketType, body, &e); err != nil {
			return err
		}
		return s.S3Bucket(index, &e)
	})
	registerApply(structs.S3ObjectType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.S3ObjectEntry
		if err := decodeBody(structs.S3ObjectType, body, &e); err != nil {
			return err
		}
		return s.S3Object(index, &e)
	})
	registerApply(structs.S3MultipartType, func(s *StateStore, index uint64, _ uint8, body []byte) any {
		var e structs.S3MultipartEntry
		if err := decodeBody(structs.S3MultipartType, body, &e); err != nil {
			return err
		}
		return s.S3Multipart(index, &e)
	})
}

// S3NoSuchBucket is S3's error for a missing bucket.
func S3NoSuchBucket(name string) error {
	return structs.S3Errorf(structs.KindNotFound, structs.S3ErrNoSuchBucket, "The specified bucket does not exist: %s", name)
}

// S3NoSuchKey is S3's error for a missing object.
func S3NoSuchKey(key string) error {
	return structs.S3Errorf(structs.KindNotFound, structs.S3ErrNoSuchKey, "The specified key does not exist: %s", key)
}

// S3NoSuchUpload is S3's error for a missing multipart upload.
func S3NoSuchUpload(id string) error {
	return structs.S3Errorf(structs.KindNotFound, structs.S3ErrNoSuchUpload,
		"The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed: %s", id)
}

// S3Bucket applies an S3BucketEntry.
func (s *StateStore) S3Bucket(index uint64, e *structs.S3BucketEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	switch e.Op {
	case structs.S3OpCreate:
		if e.Bucket == nil {
			return structs.Errorf(structs.KindInvalid, "bucket create without a bucket")
		}
		b := *e.Bucket
		if err := structs.ValidateS3BucketName(b.Name); err != nil {
			return err
		}
		existing, err := first[*structs.S3Bucket](txn, nil, TableS3Buckets, "id", b.Name)
		if err != nil {
			return err
		}
		if existing != nil {
			if existing.ProjectID == b.ProjectID {
				return structs.S3Errorf(structs.KindConflict, structs.S3ErrBucketAlreadyOwnedByYou,
					"Your previous request to create the named bucket succeeded and you already own it.")
			}
			return structs.S3Errorf(structs.KindConflict, structs.S3ErrBucketAlreadyExists,
				"The requested bucket name is not available. The bucket namespace is shared by all users of the system.")
		}
		b.CreateIndex, b.ModifyIndex = index, index
		if err := txn.Insert(TableS3Buckets, &b); err != nil {
			return fmt.Errorf("insert bucket %s: %w", b.Name, err)
		}
	case structs.S3OpDelete:
		b, err := first[*structs.S3Bucket](txn, nil, TableS3Buckets, "id", e.Name)
		if err != nil {
			return err
		}
		if b == nil {
			return S3NoSuchBucket(e.Name)
		}
		if !e.Admin && b.ProjectID != e.ProjectID {
			return structs.S3Errorf(structs.KindPermission, structs.S3ErrAccessDenied, "Access Denied")
		}
		for _, prefix := range []string{structs.S3ObjectPrefix(e.Name, ""), structs.S3UploadPrefix(e.Name)} {
			it, err := txn.Get(TableS3Objects, "id_prefix", prefix)
			if err != nil {
				return fmt.Errorf("list objects of bucket %s: %w", e.Name, err)
			}
			if it.Next() != nil {
				return structs.S3Errorf(structs.KindConflict, structs.S3ErrBucketNotEmpty, "The bucket you tried to delete is not empty.")
			}
		}
		if err := txn.Delete(TableS3Buckets, b); err != nil {
			return fmt.Errorf("delete bucket %s: %w", e.Name, err)
		}
	default:
		return structs.Errorf(structs.KindInvalid, "unknown bucket operation %q", e.Op)
	}
	return commitAt(txn, index, TableS3Buckets)
}

// requireBucket returns the named bucket or NoSuchBucket.
func requireBucket(txn *memdb.Txn, name string) (*structs.S3Bucket, error) {
	b, err := first[*structs.S3Bucket](txn, nil, TableS3Buckets, "id", name)
	if err == nil && b == nil {
		err = S3NoSuchBucket(name)
	}
	return b, err
}

// S3Object applies an S3ObjectEntry: put replaces the key's object,
// delete removes it (a missing key is no error, as in S3).
func (s *StateStore) S3Object(index uint64, e *structs.S3ObjectEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	switch e.Op {
	case structs.S3OpPut:
		if e.Object == nil {
			return structs.Errorf(structs.KindInvalid, "object put without an object")
		}
		if err := insertObject(txn, index, e.Object); err != nil {
			return err
		}
	case structs.S3OpDelete:
		if _, err := requireBucket(txn, e.Bucket); err != nil {
			return err
		}
		existing, err := first[*structs.S3Object](txn, nil, TableS3Objects, "id", structs.S3ObjectID(e.Bucket, e.Key))
		if err != nil {
			return err
		}
		if existing == nil {
			return nil
		}
		if err := txn.Delete(TableS3Objects, existing); err != nil {
			return fmt.Errorf("delete object %s/%s: %w", e.Bucket, e.Key, err)
		}
	default:
		return structs.Errorf(structs.KindInvalid, "unknown object operation %q", e.Op)
	}
	return commitAt(txn, index, TableS3Objects)
}

// insertObject stores a complete object under its key.
func insertObject(txn *memdb.Txn, index uint64, in *structs.S3Object) error {
	if _, err := requireBucket(txn, in.Bucket); err != nil {
		return err
	}
	if err := structs.ValidateS3Key(in.Key); err != nil {
		return err
	}
	if in.HashValue == "" || len(in.Locations) == 0 {
		return structs.Errorf(structs.KindInvalid, "object %s/%s without its data's hash or location", in.Bucket, in.Key)
	}
	o := in.Copy()
	o.ID, o.UploadID, o.Parts = structs.S3ObjectID(o.Bucket, o.Key), "", nil
	o.SetHashes()
	o.CreateIndex, o.ModifyIndex = index, index
	if err := txn.Insert(TableS3Objects, o); err != nil {
		return fmt.Errorf("insert object %s/%s: %w", o.Bucket, o.Key, err)
	}
	return nil
}

// S3Multipart applies an S3MultipartEntry.
func (s *StateStore) S3Multipart(index uint64, e *structs.S3MultipartEntry) error {
	txn := s.writeTxn()
	defer txn.Abort()
	if e.Op == structs.S3OpCreate {
		if e.Upload == nil || e.Upload.UploadID == "" {
			return structs.Errorf(structs.KindInvalid, "multipart create without an upload id")
		}
		if _, err := requireBucket(txn, e.Upload.Bucket); err != nil {
			return err
		}
		if err := structs.ValidateS3Key(e.Upload.Key); err != nil {
			return err
		}
		u := e.Upload.Copy()
		u.ID = structs.S3UploadRecordID(u.Bucket, u.UploadID)
		u.HashValue, u.Parts, u.Locations, u.Size = "", nil, nil, 0
		u.SetHashes()
		u.CreateIndex, u.ModifyIndex = index, index
		if existing, err := first[*structs.S3Object](txn, nil, TableS3Objects, "id", u.ID); err != nil || existing != nil {
			return firstError(err, structs.Errorf(structs.KindConflict, "upload %s already exists", u.UploadID))
		}
		if err := txn.Insert(TableS3Objects, u); err != nil {
			return fmt.Errorf("insert upload %s: %w", u.UploadID, err)
		}
		return commitAt(txn, index, TableS3Objects)
	}
	if _, err := requireBucket(txn, e.Bucket); err != nil {
		return err
	}
	existing, err := first[*structs.S3Object](txn, nil, TableS3Objects, "id", structs.S3UploadRecordID(e.Bucket, e.UploadID))
	if err != nil {
		return err
	}
	if existing == nil {
		return S3NoSuchUpload(e.UploadID)
	}
	switch e.Op {
	case structs.S3OpPart:
		if e.Part == nil || e.Part.Number < 1 || e.Part.Number > structs.S3MaxPartNumber || e.Part.HashValue == "" {
			return structs.S3Errorf(structs.KindInvalid, structs.S3ErrInvalidArgument, "Part number must be an integer between 1 and %d, inclusive.", structs.S3MaxPartNumber)
		}
		u := existing.Copy()
		p := *e.Part
		u.Parts = slices.DeleteFunc(u.Parts, func(o *structs.S3Part) bool { return o.Number == p.Number })
		u.Parts = append(u.Parts, &p)
		sort.Slice(u.Parts, func(i, j int) bool { return u.Parts[i].Number < u.Parts[j].Number })
		u.SetHashes()
		u.UpdatedAt, u.ModifyIndex = e.At, index
		if err := txn.Insert(TableS3Objects, u); err != nil {
			return fmt.Errorf("update upload %s: %w", u.UploadID, err)
		}
	case structs.S3OpComplete:
		if e.Object == nil {
			return structs.Errorf(structs.KindInvalid, "multipart complete without its object")
		}
		if err := txn.Delete(TableS3Objects, existing); err != nil {
			return fmt.Errorf("delete upload %s: %w", e.UploadID, err)
		}
		if err := insertObject(txn, index, e.Object); err != nil {
			return err
		}
	case structs.S3OpAbort:
		if err := txn.Delete(TableS3Objects, existing); err != nil {
			return fmt.Errorf("delete upload %s: %w", e.UploadID, err)
		}
	default:
		return structs.Errorf(structs.KindInvalid, "unknown multipart operation %q", e.Op)
	}
	return commitAt(txn, index, TableS3Objects)
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// s3BlobLocation records (or forgets) that a server holds a blob, on
// every object and part whose data it is. ImageLocation calls it in the
// same transaction, so one entry serves images and objects alike.
func s3BlobLocation(txn *memdb.Txn, e *structs.ImageLocationEntry) (bool, error) {
	objs, err := list[*structs.S3Object](txn, nil, TableS3Objects, "hash", e.HashValue)
	if err != nil {
		return false, err
	}
	update := func(ls []*structs.ImageLocation) ([]*structs.ImageLocation, bool) {
		held := slices.ContainsFunc(ls, func(l *structs.ImageLocation) bool { return l.NodeID == e.NodeID })
		switch {
		case e.Remove && held:
			return slices.DeleteFunc(slices.Clone(ls), func(l *structs.ImageLocation) bool { return l.NodeID == e.NodeID }), true
		case !e.Remove && !held:
			return append(slices.Clone(ls), &structs.ImageLocation{NodeID: e.NodeID, AddedAt: e.At}), true
		}
		return ls, false
	}
	changed := false
	for _, existing := range objs {
		o := existing.Copy()
		one := false
		if o.HashValue == e.HashValue {
			var c bool
			o.Locations, c = update(o.Locations)
			one = one || c
		}
		for _, p := range o.Parts {
			if p.HashValue == e.HashValue {
				var c bool
				p.Locations, c = update(p.Locations)
				one = one || c
			}
		}
		if !one {
			continue
		}
		if err := txn.Insert(TableS3Objects, o); err != nil {
			return false, fmt.Errorf("update object %s: %w", o.ID, err)
		}
		changed = true
	}
	return changed, nil
}

// S3BucketByName returns a bucket or nil.
func (s *StateStore) S3BucketByName(ws memdb.WatchSet, name string) (*structs.S3Bucket, error) {
	return first[*structs.S3Bucket](s.ReadTxn(), ws, TableS3Buckets, "id", name)
}

// S3Buckets lists every bucket by name, or the buckets of a project.
func (s *StateStore) S3Buckets(ws memdb.WatchSet, projectID string) ([]*structs.S3Bucket, error) {
	if projectID == "" {
		return list[*structs.S3Bucket](s.ReadTxn(), ws, TableS3Buckets)
	}
	out, err := list[*structs.S3Bucket](s.ReadTxn(), ws, TableS3Buckets, "project", projectID)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// S3ObjectByID returns an object or upload record by its id, or nil.
func (s *StateStore) S3ObjectByID(ws memdb.WatchSet, id string) (*structs.S3Object, error) {
	return first[*structs.S3Object](s.ReadTxn(), ws, TableS3Objects, "id", id)
}

// S3ObjectsByHash lists the objects and uploads that keep a blob alive.
func (s *StateStore) S3ObjectsByHash(ws memdb.WatchSet, hash string) ([]*structs.S3Object, error) {
	return list[*structs.S3Object](s.ReadTxn(), ws, TableS3Objects, "hash", hash)
}

// S3AllObjects lists every object and upload, for the blob sync.
func (s *StateStore) S3AllObjects(ws memdb.WatchSet) ([]*structs.S3Object, error) {
	return list[*structs.S3Object](s.ReadTxn(), ws, TableS3Objects)
}

// S3ListResult is one page of an object listing.
type S3ListResult struct {
	Objects        []*structs.S3Object
	CommonPrefixes []string
	Truncated      bool
	// Next is the last key or common prefix of the page, where the next
	// page starts (exclusive) when Truncated.
	Next string
}

// S3ListObjects lists a bucket's keys as ListObjectsV2 does: keys that
// start with prefix, after startAfter, in UTF-8 byte order; with a
// delimiter, keys that hold it after the prefix are rolled up into one
// common prefix each (counted once against maxKeys).
func (s *StateStore) S3ListObjects(ws memdb.WatchSet, bucket, prefix, delimiter, startAfter string, maxKeys int) (*S3ListResult, error) {
	txn := s.ReadTxn()
	idPrefix := structs.S3ObjectPrefix(bucket, "")
	from := structs.S3ObjectPrefix(bucket, prefix)
	if startAfter > prefix {
		from = structs.S3ObjectPrefix(bucket, startAfter)
	}
	it, err := txn.LowerBound(TableS3Objects, "id", from)
	if err != nil {
		return nil, fmt.Errorf("list objects of %s: %w", bucket, err)
	}
	if ws != nil {
		ws.Add(it.WatchCh())
	}
	res := &S3ListResult{}
	count, lastPrefix := 0, ""
	for raw := it.Next(); raw != nil; raw = it.Next() {
		o := raw.(*structs.S3Object)
		if !strings.HasPrefix(o.ID, idPrefix) || !strings.HasPrefix(o.Key, prefix) {
			break
		}
		if o.Key <= startAfter {
			continue
		}
		cp := ""
		if delimiter != "" {
			if i := strings.Index(o.Key[len(prefix):], delimiter); i >= 0 {
				cp = o.Key[:len(prefix)+i+len(delimiter)]
			}
		}
		if cp != "" && (cp == lastPrefix || cp == startAfter) {
			continue
		}
		if count == maxKeys {
			res.Truncated = true
			break
		}
		count++
		if cp != "" {
			res.CommonPrefixes = append(res.CommonPrefixes, cp)
			lastPrefix, res.Next = cp, cp
			continue
		}
		res.Objects = append(res.Objects, o)
		res.Next = o.Key
	}
	return res, nil
}

// S3ObjectsWatch returns a channel closed on the next change of the
// objects table, for the blob sync to wake on new objects and parts.
func (s *StateStore) S3ObjectsWatch() <-chan struct{} {
	it, err := s.ReadTxn().Get(TableS3Objects, "id")
	if err != nil {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return it.WatchCh()
}
