package fsm

import (
	"bytes"
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// populateS3 fills the S3 tables for the snapshot tests (after
// populateIdentity, whose user and project the credential names).
func populateS3(t *testing.T, s *StateStore) {
	t.Helper()
	loc := []*structs.ImageLocation{{NodeID: "s1", AddedAt: 1}}
	for _, err := range []error{
		s.S3Bucket(5, &structs.S3BucketEntry{Op: structs.S3OpCreate, Bucket: &structs.S3Bucket{Name: "bkt", ProjectID: "p1", UserID: "u1", CreatedAt: 1}}),
		s.S3Object(6, &structs.S3ObjectEntry{Op: structs.S3OpPut, Object: &structs.S3Object{Bucket: "bkt", Key: "a/b", Size: 3, ETag: "e",
			MD5: "e", HashValue: "h1", Metadata: map[string]string{"m": "v"}, Locations: loc}}),
		s.S3Multipart(6, &structs.S3MultipartEntry{Op: structs.S3OpCreate, Upload: &structs.S3Object{Bucket: "bkt", Key: "big", UploadID: "up1"}}),
		s.S3Multipart(6, &structs.S3MultipartEntry{Op: structs.S3OpPart, Bucket: "bkt", UploadID: "up1",
			Part: &structs.S3Part{Number: 1, Size: 5, ETag: "pe", HashValue: "h2", Locations: loc}}),
		s.EC2Credential(6, &structs.EC2CredentialEntry{Op: structs.S3OpCreate, Credential: &structs.EC2Credential{
			Access: "ak", Secret: "sk", UserID: "u1", ProjectID: "p1", CreatedAt: 1}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func wantS3Code(t *testing.T, resp any, code string) {
	t.Helper()
	err, _ := resp.(error)
	if structs.ErrorType(err) != code {
		t.Fatalf("want an error %s, got %v", code, resp)
	}
}

func TestS3BucketsAndObjectsInTheFSM(t *testing.T) {
	f := testFSM(t)
	bucket := func(name, project string) *structs.S3BucketEntry {
		return &structs.S3BucketEntry{Op: structs.S3OpCreate, Bucket: &structs.S3Bucket{Name: name, ProjectID: project}}
	}
	mustApply(t, f, 1, structs.S3BucketType, bucket("bkt", "p1"))
	wantS3Code(t, apply(t, f, 2, structs.S3BucketType, bucket("bkt", "p1")), structs.S3ErrBucketAlreadyOwnedByYou)
	wantS3Code(t, apply(t, f, 2, structs.S3BucketType, bucket("bkt", "p2")), structs.S3ErrBucketAlreadyExists)
	wantS3Code(t, apply(t, f, 2, structs.S3BucketType, bucket("No_Good", "p1")), structs.S3ErrInvalidBucketName)

	loc := []*structs.ImageLocation{{NodeID: "s1"}}
	put := func(index uint64, key, hash string) {
		mustApply(t, f, index, structs.S3ObjectType, &structs.S3ObjectEntry{Op: structs.S3OpPut,
			Object: &structs.S3Object{Bucket: "bkt", Key: key, HashValue: hash, Locations: loc}})
	}
	wantS3Code(t, apply(t, f, 3, structs.S3ObjectType, &structs.S3ObjectEntry{Op: structs.S3OpPut,
		Object: &structs.S3Object{Bucket: "none", Key: "k", HashValue: "h", Locations: loc}}), structs.S3ErrNoSuchBucket)
	keys := []string{"2024/a", "2024/b", "2024/sub/c", "2025/d", "top", "2024/sub/e"}
	for i, k := range keys {
		put(uint64(10+i), k, "h-"+k)
	}
	put(20, "top", "h-top2") // replaces
	if o, _ := f.State().S3ObjectByID(nil, structs.S3ObjectID("bkt", "top")); o.HashValue != "h-top2" || o.CreateIndex != 20 {
		t.Fatalf("replaced object %+v", o)
	}

	list := func(prefix, delim, after string, max int) ([]string, bool, string) {
		t.Helper()
		res, err := f.State().S3ListObjects(nil, "bkt", prefix, delim, after, max)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range res.Objects {
			out = append(out, o.Key)
		}
		for _, p := range res.CommonPrefixes {
			out = append(out, p+"*")
		}
		return out, res.Truncated, res.Next
	}
	if got, trunc, _ := list("", "", "", 1000); trunc || !slices.Equal(got, []string{"2024/a", "2024/b", "2024/sub/c", "2024/sub/e", "2025/d", "top"}) {
		t.Fatalf("all keys %v %v", got, trunc)
	}
	got, trunc, next := list("", "/", "", 2)
	if !trunc || next != "2025/" || !slices.Equal(got, []string{"2024/*", "2025/*"}) {
		t.Fatalf("first delimited page %v %v %q", got, trunc, next)
	}
	if got, trunc, _ := list("", "/", next, 2); trunc || !slices.Equal(got, []string{"top"}) {
		t.Fatalf("second delimited page %v %v", got, trunc)
	}
	got, trunc, next = list("2024/", "/", "", 2)
	if !trunc || !slices.Equal(got, []string{"2024/a", "2024/b"}) {
		t.Fatalf("prefix page %v %v", got, trunc)
	}
	if got, trunc, _ := list("2024/", "/", next, 2); trunc || !slices.Equal(got, []string{"2024/sub/*"}) {
		t.Fatalf("prefix second page %v %v", got, trunc)
	}
	if got, _, _ := list("2024/sub/", "", "2024/sub/c", 10); !slices.Equal(got, []string{"2024/sub/e"}) {
		t.Fatalf("start-after %v", got)
	}

	// A bucket with objects is not deleted, nor by another project.
	del := &structs.S3BucketEntry{Op: structs.S3OpDelete, Name: "bkt", ProjectID: "p2"}
	wantS3Code(t, apply(t, f, 30, structs.S3BucketType, del), structs.S3ErrAccessDenied)
	del.ProjectID = "p1"
	wantS3Code(t, apply(t, f, 30, structs.S3BucketType, del), structs.S3ErrBucketNotEmpty)
	for i, k := range keys {
		mustApply(t, f, uint64(31+i), structs.S3ObjectType, &structs.S3ObjectEntry{Op: structs.S3OpDelete, Bucket: "bkt", Key: k})
	}
	// Deleting a missing key is no error, as in S3.
	mustApply(t, f, 40, structs.S3ObjectType, &structs.S3ObjectEntry{Op: structs.S3OpDelete, Bucket: "bkt", Key: "top"})
	mustApply(t, f, 41, structs.S3BucketType, del)
	if b, _ := f.State().S3BucketByName(nil, "bkt"); b != nil {
		t.Fatalf("bucket left: %+v", b)
	}
}

func TestS3MultipartAndLocationsInTheFSM(t *testing.T) {
	f := testFSM(t)
	mustApply(t, f, 1, structs.S3BucketType, &structs.S3BucketEntry{Op: structs.S3OpCreate, Bucket: &structs.S3Bucket{Name: "bkt", ProjectID: "p1"}})
	mustApply(t, f, 2, structs.S3MultipartType, &structs.S3MultipartEntry{Op: structs.S3OpCreate,
		Upload: &structs.S3Object{Bucket: "bkt", Key: "big", UploadID: "u1", HashValue: "smuggled"}})
	loc := func(n string) []*structs.ImageLocation { return []*structs.ImageLocation{{NodeID: n}} }
	part := func(index uint64, n int, hash string) any {
		return apply(t, f, index, structs.S3MultipartType, &structs.S3MultipartEntry{Op: structs.S3OpPart, Bucket: "bkt", UploadID: "u1",
			Part: &structs.S3Part{Number: n, Size: 5, ETag: "e" + hash, HashValue: hash, Locations: loc("s1")}})
	}
	for i, p := range []struct {
		n    int
		hash string
	}{{2, "h2"}, {1, "h1"}, {2, "h2b"}} {
		if resp := part(uint64(3+i), p.n, p.hash); resp != nil {
			t.Fatal(resp)
		}
	}
	wantS3Code(t, part(9, 0, "h0"), structs.S3ErrInvalidArgument)
	wantS3Code(t, apply(t, f, 9, structs.S3MultipartType, &structs.S3MultipartEntry{Op: structs.S3OpPart, Bucket: "bkt", UploadID: "nope",
		Part: &structs.S3Part{Number: 1, HashValue: "h"}}), structs.S3ErrNoSuchUpload)
	u, _ := f.State().S3ObjectByID(nil, structs.S3UploadRecordID("bkt", "u1"))
	if !u.IsUpload() || u.HashValue != "" || len(u.Parts) != 2 || u.Parts[0].Number != 1 || u.Parts[1].HashValue != "h2b" ||
		!slices.Equal(u.Hashes, []string{"h1", "h2b"}) {
		t.Fatalf("upload %+v", u)
	}
	// An upload is not an object: listings skip it, but it keeps the
	// bucket from being deleted.
	if res, _ := f.State().S3ListObjects(nil, "bkt", "", "", "", 10); len(res.Objects) != 0 {
		t.Fatalf("listing shows an upload: %+v", res.Objects)
	}
	wantS3Code(t, apply(t, f, 10, structs.S3BucketType, &structs.S3BucketEntry{Op: structs.S3OpDelete, Name: "bkt", ProjectID: "p1"}),
		structs.S3ErrBucketNotEmpty)

	// Locations follow blobs into parts and objects alike.
	mustApply(t, f, 11, structs.ImageLocationType, &structs.ImageLocationEntry{HashValue: "h1", NodeID: "s2", At: 5})
	u, _ = f.State().S3ObjectByID(nil, u.ID)
	if !u.Parts[0].HeldBy("s2") || u.Parts[1].HeldBy("s2") {
		t.Fatalf("part locations %+v %+v", u.Parts[0].Locations, u.Parts[1].Locations)
	}

	mustApply(t, f, 12, structs.S3MultipartType, &structs.S3MultipartEntry{Op: structs.S3OpComplete, Bucket: "bkt", UploadID: "u1",
		Object: &structs.S3Object{Bucket: "bkt", Key: "big", Size: 10, ETag: "x-2", HashValue: "hall", Locations: loc("s1")}})
	if u, _ := f.State().S3ObjectByID(nil, structs.S3UploadRecordID("bkt", "u1")); u != nil {
		t.Fatalf("upload left after complete: %+v", u)
	}
	o, _ := f.State().S3ObjectByID(nil, structs.S3ObjectID("bkt", "big"))
	if o == nil || o.HashValue != "hall" || o.IsUpload() || !slices.Equal(o.Hashes, []string{"hall"}) {
		t.Fatalf("completed object %+v", o)
	}
	mustApply(t, f, 13, structs.ImageLocationType, &structs.ImageLocationEntry{HashValue: "hall", NodeID: "s1", Remove: true})
	if byHash, _ := f.State().S3ObjectsByHash(nil, "hall"); len(byHash) != 1 || len(byHash[0].Locations) != 0 {
		t.Fatalf("after forgetting a location %+v", byHash)
	}
	wantS3Code(t, apply(t, f, 14, structs.S3MultipartType, &structs.S3MultipartEntry{Op: structs.S3OpAbort, Bucket: "bkt", UploadID: "u1"}),
		structs.S3ErrNoSuchUpload)
}

func TestEC2CredentialsInTheFSM(t *testing.T) {
	f := testFSM(t)
	populateIdentity(t, f.State())
	cred := func(access, user, project string) *structs.EC2CredentialEntry {
		return &structs.EC2CredentialEntry{Op: structs.S3OpCreate, Credential: &structs.EC2Credential{Access: access, Secret: "s", UserID: user, ProjectID: project}}
	}
	mustApply(t, f, 10, structs.EC2CredentialType, cred("ak1", "u1", "p1"))
	wantImageErr(t, apply(t, f, 11, structs.EC2CredentialType, cred("ak1", "u1", "p1")), structs.KindConflict)
	wantImageErr(t, apply(t, f, 11, structs.EC2CredentialType, cred("ak2", "nobody", "p1")), structs.KindNotFound)
	wantImageErr(t, apply(t, f, 11, structs.EC2CredentialType, cred("ak2", "u1", "nowhere")), structs.KindNotFound)
	mustApply(t, f, 12, structs.EC2CredentialType, cred("ak2", "u1", "p1"))
	if cs, _ := f.State().EC2CredentialsOfUser(nil, "u1"); len(cs) != 2 || cs[0].Access != "ak1" || cs[1].Access != "ak2" {
		t.Fatalf("credentials %+v", cs)
	}
	mustApply(t, f, 13, structs.EC2CredentialType, &structs.EC2CredentialEntry{Op: structs.S3OpDelete, Access: "ak1"})
	wantImageErr(t, apply(t, f, 14, structs.EC2CredentialType, &structs.EC2CredentialEntry{Op: structs.S3OpDelete, Access: "ak1"}), structs.KindNotFound)
	if c, _ := f.State().EC2CredentialByAccess(nil, "ak1"); c != nil {
		t.Fatalf("deleted credential %+v", c)
	}
}

func TestS3SnapshotRestore(t *testing.T) {
	f := testFSM(t)
	populateIdentity(t, f.State())
	populateS3(t, f.State())
	var buf bytes.Buffer
	if err := f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	g := testFSM(t)
	if err := g.Restore(io.NopCloser(&buf)); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{TableS3Buckets, TableS3Objects, TableEC2Credentials} {
		want, got := dump(t, f.State())[table], dump(t, g.State())[table]
		if len(want) == 0 || !reflect.DeepEqual(want, got) {
			t.Fatalf("%s restored as %#v, want %#v", table, got, want)
		}
	}
	// The restored indexes answer the same queries.
	if objs, _ := g.State().S3ObjectsByHash(nil, "h2"); len(objs) != 1 || objs[0].UploadID != "up1" {
		t.Fatalf("by hash after restore %+v", objs)
	}
	if bs, _ := g.State().S3Buckets(nil, "p1"); len(bs) != 1 {
		t.Fatalf("buckets of p1 after restore %+v", bs)
	}
}
