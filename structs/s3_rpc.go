package structs

// S3 stream methods of the RPC listener: object data never goes through
// Raft or RPC messages.
const (
	// S3PutStream stores an object or a part: S3PutRequest, S3PutReady,
	// chunks (rpc.ChunkWriter) of data, then S3PutResult.
	S3PutStream = "S3.Put"
	// S3CompleteStream assembles a multipart upload's parts into one
	// object blob: S3CompleteRequest, then S3PutResult.
	S3CompleteStream = "S3.Complete"
)

// S3Caller is who asks: the project and user of the credential that
// signed the request, and whether the user is an admin.
type S3Caller struct {
	ProjectID string
	UserID    string
	Admin     bool
}

// CanAccess reports whether the caller may use a bucket of project.
func (c S3Caller) CanAccess(project string) bool { return c.Admin || c.ProjectID == project }

// S3PutRequest opens an object (or, with UploadID, a part) upload. Size
// is the declared size (-1 when unknown). ContentMD5 (hex) and
// ContentSHA256 (hex), when set, must match the data.
type S3PutRequest struct {
	Bucket        string
	Key           string
	UploadID      string
	PartNumber    int
	ContentType   string
	Metadata      map[string]string
	Size          int64
	ContentMD5    string
	ContentSHA256 string
	Caller        S3Caller
	// AuthToken is the caller's credential: the token S3.Verify issued
	// for the request's signature.
	AuthToken string
}

// S3PutReady answers an S3PutRequest: data may follow unless Error.
type S3PutReady struct {
	Error string
}

// S3PutResult ends a put or a complete: the object or part as recorded,
// or the error.
type S3PutResult struct {
	Object *S3Object
	Part   *S3Part
	Error  string
}

// S3CompletePart names one part of a complete request.
type S3CompletePart struct {
	Number int
	ETag   string
}

// S3CompleteRequest completes a multipart upload with the parts listed.
type S3CompleteRequest struct {
	Bucket   string
	Key      string
	UploadID string
	Parts    []S3CompletePart
	Caller   S3Caller
	// AuthToken is the caller's credential (see S3PutRequest).
	AuthToken string
}

// S3BucketRequest creates or deletes a bucket.
type S3BucketRequest struct {
	Bucket *S3Bucket
	Name   string
	Caller S3Caller
	WriteRequest
}

// S3BucketResponse answers a bucket create or read.
type S3BucketResponse struct {
	Bucket *S3Bucket
	QueryMeta
}

// S3BucketGetRequest reads a bucket by name.
type S3BucketGetRequest struct {
	Name string
	QueryOptions
}

// S3BucketListRequest lists the buckets of ProjectID (all with Admin).
type S3BucketListRequest struct {
	ProjectID string
	QueryOptions
}

// S3BucketListResponse carries buckets by name.
type S3BucketListResponse struct {
	Buckets []*S3Bucket
	QueryMeta
}

// S3ObjectGetRequest reads an object's record, or with UploadID an
// upload's.
type S3ObjectGetRequest struct {
	Bucket   string
	Key      string
	UploadID string
	QueryOptions
}

// S3ObjectResponse answers an object read with its bucket.
type S3ObjectResponse struct {
	Bucket *S3Bucket
	Object *S3Object
	QueryMeta
}

// S3ObjectDeleteRequest deletes an object, or aborts an upload.
type S3ObjectDeleteRequest struct {
	Bucket   string
	Key      string
	UploadID string
	Caller   S3Caller
	WriteRequest
}

// S3UploadCreateRequest starts a multipart upload; the server chooses its
// id.
type S3UploadCreateRequest struct {
	Upload *S3Object
	Caller S3Caller
	WriteRequest
}

// S3ObjectListRequest lists a bucket's keys as ListObjectsV2 does:
// those starting with Prefix, after StartAfter, at most MaxKeys, keys
// holding Delimiter after the prefix rolled up into common prefixes.
type S3ObjectListRequest struct {
	Bucket     string
	Prefix     string
	Delimiter  string
	StartAfter string
	MaxKeys    int
	Caller     S3Caller
	QueryOptions
}

// S3ObjectListResponse is one page of a listing. NextStartAfter, set
// when Truncated, is where the next page starts (exclusive).
type S3ObjectListResponse struct {
	Objects        []*S3Object
	CommonPrefixes []string
	Truncated      bool
	NextStartAfter string
	QueryMeta
}

// S3ImageImportRequest creates an active image whose data is an
// object's blob, with no copy.
type S3ImageImportRequest struct {
	Bucket string
	Key    string
	Image  *Image
	Caller S3Caller
	WriteRequest
}

// S3ObjectPutRequest commits an object entry (a server that stored the
// blob proposes it).
type S3ObjectPutRequest struct {
	Entry *S3ObjectEntry
	WriteRequest
}

// S3MultipartRequest commits a multipart entry.
type S3MultipartRequest struct {
	Entry *S3MultipartEntry
	WriteRequest
}
