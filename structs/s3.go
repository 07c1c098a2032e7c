package structs

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"unicode/utf8"
)

// The S3 object store (nova-objectstore's role). Buckets, objects and
// multipart uploads are replicated state; an object's bytes are a
// content-addressed blob in the servers' image stores, named by its
// SHA-512 like an image's data, and replicated the same way.

// S3 error codes, as Amazon S3 names them. They travel as an Error's
// Type, so the S3 edge answers the right <Code>.
const (
	S3ErrAccessDenied            = "AccessDenied"
	S3ErrBucketAlreadyExists     = "BucketAlreadyExists"
	S3ErrBucketAlreadyOwnedByYou = "BucketAlreadyOwnedByYou"
	S3ErrBucketNotEmpty          = "BucketNotEmpty"
	S3ErrEntityTooSmall          = "EntityTooSmall"
	S3ErrEntityTooLarge          = "EntityTooLarge"
	S3ErrInvalidArgument         = "InvalidArgument"
	S3ErrInvalidBucketName       = "InvalidBucketName"
	S3ErrInvalidPart             = "InvalidPart"
	S3ErrInvalidPartOrder        = "InvalidPartOrder"
	S3ErrKeyTooLong              = "KeyTooLongError"
	S3ErrNoSuchBucket            = "NoSuchBucket"
	S3ErrNoSuchKey               = "NoSuchKey"
	S3ErrNoSuchUpload            = "NoSuchUpload"
	S3ErrInvalidAccessKeyID      = "InvalidAccessKeyId"
	S3ErrBadDigest               = "BadDigest"
	S3ErrXAmzContentSHA256       = "XAmzContentSHA256Mismatch"
	S3ErrIncompleteBody          = "IncompleteBody"
)

func init() {
	for _, t := range []string{S3ErrAccessDenied, S3ErrBucketAlreadyExists, S3ErrBucketAlreadyOwnedByYou,
		S3ErrBucketNotEmpty, S3ErrEntityTooSmall, S3ErrEntityTooLarge, S3ErrInvalidArgument, S3ErrInvalidBucketName,
		S3ErrInvalidPart, S3ErrInvalidPartOrder, S3ErrKeyTooLong, S3ErrNoSuchBucket, S3ErrNoSuchKey,
		S3ErrNoSuchUpload, S3ErrInvalidAccessKeyID, S3ErrBadDigest, S3ErrXAmzContentSHA256, S3ErrIncompleteBody} {
		errorTypes[t] = true
	}
}

// S3Errorf builds an error of a kind with an S3 error code.
func S3Errorf(kind ErrorKind, code, format string, args ...any) error {
	return &Error{Kind: kind, Type: code, Msg: fmt.Sprintf(format, args...)}
}

// Limits of the S3 API, Amazon's.
const (
	S3MaxKeyLength = 1024
	// S3MinPartSize is the smallest part but the last of a multipart
	// upload.
	S3MinPartSize = 5 << 20
	// S3MaxPartNumber is the highest part number.
	S3MaxPartNumber = 10000
	// S3MaxObjectSize bounds a single PUT (Amazon's 5 GiB).
	S3MaxObjectSize = 5 << 30
	// S3MaxMetadataSize bounds the user metadata of an object.
	S3MaxMetadataSize = 2 << 10
)

// S3Bucket is a bucket. Names are global, as in S3: one bucket of a name
// in the region, owned by a project.
type S3Bucket struct {
	Name string
	// ProjectID owns the bucket; UserID created it.
	ProjectID string
	UserID    string
	// CreatedAt is unix nanoseconds, chosen before proposal.
	CreatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// S3Object is an object, or, when UploadID is set, a multipart upload in
// progress for that key (its Parts so far). Both live in one table, keyed
// by ID, so that an object listing is an ordered walk of a key prefix.
type S3Object struct {
	// ID is S3ObjectID(Bucket, Key), or S3UploadRecordID(Bucket,
	// UploadID) for an upload.
	ID       string
	Bucket   string
	Key      string
	UploadID string
	// Size is the object's size in bytes.
	Size int64
	// ETag is the hex MD5 of the data, or for a multipart object the
	// hex MD5 of its parts' binary MD5s followed by "-<parts>" (S3's);
	// unquoted.
	ETag string
	// MD5 is the hex MD5 of the whole data (the ETag of a simple
	// object, not of a multipart one).
	MD5 string
	// HashValue is the hex SHA-512 naming the blob (none for an upload).
	HashValue   string
	ContentType string
	// Metadata is the user metadata (x-amz-meta-*), names lowercased.
	Metadata map[string]string
	// ProjectID and UserID are who wrote the object or started the
	// upload.
	ProjectID string
	UserID    string
	// Parts are an upload's parts, by number.
	Parts []*S3Part
	// Hashes are HashValue and every part's hash: the blobs the record
	// keeps alive, indexed.
	Hashes []string
	// Locations are the servers holding the blob (an object's).
	Locations []*ImageLocation
	// CreatedAt and UpdatedAt are unix nanoseconds chosen before proposal.
	CreatedAt int64
	UpdatedAt int64

	CreateIndex uint64
	ModifyIndex uint64
}

// S3Part is one uploaded part of a multipart upload: a blob of its own
// until the upload completes into one object blob.
type S3Part struct {
	Number    int
	Size      int64
	ETag      string
	HashValue string
	// Locations are the servers holding the part's blob.
	Locations []*ImageLocation
	At        int64
}

// S3ObjectID is the record id of an object: bucket names hold no '/', so
// the id is unique, and ids of one bucket sort as S3 lists keys (by
// their UTF-8 bytes).
func S3ObjectID(bucket, key string) string { return "o:" + bucket + "/" + key }

// S3ObjectPrefix is the id prefix of a bucket's objects whose keys start
// with prefix.
func S3ObjectPrefix(bucket, prefix string) string { return "o:" + bucket + "/" + prefix }

// S3UploadRecordID is the record id of a multipart upload.
func S3UploadRecordID(bucket, uploadID string) string { return "u:" + bucket + "/" + uploadID }

// S3UploadPrefix is the id prefix of a bucket's uploads.
func S3UploadPrefix(bucket string) string { return "u:" + bucket + "/" }

// IsUpload reports whether the record is a multipart upload in progress.
func (o *S3Object) IsUpload() bool { return o.UploadID != "" }

// Copy returns a deep copy, so state-store objects are never mutated in
// place.
func (o *S3Object) Copy() *S3Object {
	if o == nil {
		return nil
	}
	c := *o
	c.Metadata = copyStringMap(o.Metadata)
	c.Hashes = slices.Clone(o.Hashes)
	c.Locations = copyLocations(o.Locations)
	if o.Parts != nil {
		c.Parts = make([]*S3Part, len(o.Parts))
		for i, p := range o.Parts {
			pc := *p
			pc.Locations = copyLocations(p.Locations)
			c.Parts[i] = &pc
		}
	}
	return &c
}

func copyLocations(in []*ImageLocation) []*ImageLocation {
	if in == nil {
		return nil
	}
	out := make([]*ImageLocation, len(in))
	for i, l := range in {
		lc := *l
		out[i] = &lc
	}
	return out
}

// SetHashes recomputes Hashes from HashValue and the parts.
func (o *S3Object) SetHashes() {
	o.Hashes = nil
	if o.HashValue != "" {
		o.Hashes = append(o.Hashes, o.HashValue)
	}
	for _, p := range o.Parts {
		if p.HashValue != "" && !slices.Contains(o.Hashes, p.HashValue) {
			o.Hashes = append(o.Hashes, p.HashValue)
		}
	}
}

// HeldBy reports whether the server holds the object's blob.
func (o *S3Object) HeldBy(nodeID string) bool { return locationsHold(o.Locations, nodeID) }

// HeldBy reports whether the server holds the part's blob.
func (p *S3Part) HeldBy(nodeID string) bool { return locationsHold(p.Locations, nodeID) }

func locationsHold(ls []*ImageLocation, nodeID string) bool {
	return slices.ContainsFunc(ls, func(l *ImageLocation) bool { return l.NodeID == nodeID })
}

// ValidateS3BucketName checks a bucket name as S3 does: 3-63 characters
// of lowercase letters, digits, dots and hyphens, starting and ending
// with a letter or digit, no two adjacent dots, and not an IP address.
func ValidateS3BucketName(name string) error {
	bad := func(why string) error {
		return S3Errorf(KindInvalid, S3ErrInvalidBucketName, "The specified bucket is not valid: %q %s.", name, why)
	}
	if len(name) < 3 || len(name) > 63 {
		return bad("must be 3 to 63 characters long")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return bad("may hold only lowercase letters, digits, dots and hyphens")
		}
	}
	isAlnum := func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return bad("must start and end with a letter or a digit")
	}
	if strings.Contains(name, "..") {
		return bad("must not hold two adjacent dots")
	}
	if net.ParseIP(name) != nil {
		return bad("must not be an IP address")
	}
	return nil
}

// ValidateS3Key checks an object key: 1 to 1024 bytes of UTF-8.
func ValidateS3Key(key string) error {
	if key == "" {
		return S3Errorf(KindInvalid, S3ErrInvalidArgument, "An object key must not be empty.")
	}
	if len(key) > S3MaxKeyLength {
		return S3Errorf(KindInvalid, S3ErrKeyTooLong, "Your key is too long: %d bytes, at most %d.", len(key), S3MaxKeyLength)
	}
	if !utf8.ValidString(key) {
		return S3Errorf(KindInvalid, S3ErrInvalidArgument, "An object key must be UTF-8.")
	}
	return nil
}

// S3 entry operations.
const (
	S3OpCreate   = "create"
	S3OpDelete   = "delete"
	S3OpPut      = "put"
	S3OpPart     = "part"
	S3OpComplete = "complete"
	S3OpAbort    = "abort"
)

// S3BucketEntry creates or deletes a bucket (S3BucketType). A delete
// carries ProjectID, the caller's project, and is refused for a bucket
// of another project or one that holds objects or uploads.
type S3BucketEntry struct {
	Op     string
	Bucket *S3Bucket
	// Name and ProjectID name the bucket to delete and who asks.
	Name      string
	ProjectID string
	Admin     bool
}

// S3ObjectEntry stores an object (replacing the key's object) or
// deletes one (S3ObjectType). Deleting a missing key is no error, as in
// S3.
type S3ObjectEntry struct {
	Op     string
	Object *S3Object
	Bucket string
	Key    string
	At     int64
}

// S3MultipartEntry changes a multipart upload (S3MultipartType):
// create stores Upload; part records Part (replacing a part of the same
// number); complete replaces the upload by Object, the assembled object;
// abort deletes the upload.
type S3MultipartEntry struct {
	Op       string
	Bucket   string
	UploadID string
	Upload   *S3Object
	Part     *S3Part
	Object   *S3Object
	At       int64
}
