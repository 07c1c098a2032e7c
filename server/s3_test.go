package server

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// s3Put sends an object or part through addr's S3.Put stream, as an
// agent does.
func s3Put(t testing.TB, pool *rpc.ConnPool, addr string, req *structs.S3PutRequest, data []byte) (*structs.S3PutResult, error) {
	t.Helper()
	conn, err := pool.Stream(addr, structs.S3PutStream)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := rpc.WriteFrame(conn, req); err != nil {
		return nil, err
	}
	var ready structs.S3PutReady
	if err := rpc.ReadFrame(conn, &ready); err != nil {
		return nil, err
	}
	if ready.Error != "" {
		return nil, fmt.Errorf("%s", ready.Error)
	}
	w := rpc.NewChunkWriter(conn)
	if _, err := w.Write(data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	var res structs.S3PutResult
	if err := rpc.ReadFrame(conn, &res); err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, fmt.Errorf("%s", res.Error)
	}
	return &res, nil
}

// s3Complete completes an upload through addr's S3.Complete stream.
func s3Complete(t testing.TB, pool *rpc.ConnPool, addr string, req *structs.S3CompleteRequest) (*structs.S3Object, error) {
	t.Helper()
	conn, err := pool.Stream(addr, structs.S3CompleteStream)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := rpc.WriteFrame(conn, req); err != nil {
		return nil, err
	}
	var res structs.S3PutResult
	if err := rpc.ReadFrame(conn, &res); err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, fmt.Errorf("%s", res.Error)
	}
	return res.Object, nil
}

func objectHolders(s *Server, bucket, key string) []string {
	o, err := s.fsm.State().S3ObjectByID(nil, structs.S3ObjectID(bucket, key))
	if err != nil || o == nil {
		return nil
	}
	var out []string
	for _, l := range o.Locations {
		out = append(out, l.NodeID)
	}
	return out
}

// TestS3ObjectsReplicateLikeImages stores objects through the streams of
// a three-server cluster: each object's blob gets a second copy recorded
// in every server's state, a server without one relays it, a multipart
// upload completes on a server that holds none of its parts, the
// parts' blobs are swept once the object replaced them, and losing the
// server that received an object keeps it readable.
func TestS3ObjectsReplicateLikeImages(t *testing.T) {
	servers := testCluster(t, 3, fastImages)
	waitForLeader(t, servers...)
	pool := testPool(t)
	caller := structs.S3Caller{ProjectID: "p1", UserID: "u1"}
	var b structs.S3BucketResponse
	if err := servers[0].RPC("S3.BucketCreate", &structs.S3BucketRequest{Name: "bkt", Caller: caller}, &b); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the bucket everywhere", 60*time.Second, func() error {
		for _, s := range servers {
			if bk, _ := s.fsm.State().S3BucketByName(nil, "bkt"); bk == nil {
				return fmt.Errorf("%s has no bucket", s.config.NodeName)
			}
		}
		return nil
	})

	// A wrong Content-MD5 stores nothing; another project is refused.
	data := randomData(300_000)
	sum := md5.Sum(data)
	bad := &structs.S3PutRequest{Bucket: "bkt", Key: "obj", Size: int64(len(data)), ContentMD5: strings.Repeat("0", 32), Caller: caller}
	if _, err := s3Put(t, pool, servers[1].RPCAddr(), bad, data); structs.ErrorType(err) != structs.S3ErrBadDigest {
		t.Fatalf("bad digest: %v", err)
	}
	other := &structs.S3PutRequest{Bucket: "bkt", Key: "obj", Size: int64(len(data)), Caller: structs.S3Caller{ProjectID: "p2"}}
	if _, err := s3Put(t, pool, servers[1].RPCAddr(), other, data); structs.ErrorType(err) != structs.S3ErrAccessDenied {
		t.Fatalf("other project: %v", err)
	}
	req := &structs.S3PutRequest{Bucket: "bkt", Key: "obj", Size: int64(len(data)), ContentMD5: hex.EncodeToString(sum[:]), Caller: caller}
	res, err := s3Put(t, pool, servers[1].RPCAddr(), req, data)
	if err != nil {
		t.Fatal(err)
	}
	hash := res.Object.HashValue
	if hash != sha512Hex(data) || res.Object.ETag != hex.EncodeToString(sum[:]) {
		t.Fatalf("stored %+v", res.Object)
	}
	waitFor(t, "a second copy of the object", 60*time.Second, func() error {
		n := 0
		for _, s := range servers {
			if s.blobs.Has(hash) {
				n++
			}
			if h := objectHolders(s, "bkt", "obj"); len(h) != 2 {
				return fmt.Errorf("%s records holders %v", s.config.NodeName, h)
			}
		}
		if n != 2 {
			return fmt.Errorf("%d copies", n)
		}
		return nil
	})
	for _, s := range servers {
		if !s.blobs.Has(hash) {
			got, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: hash, Offset: 10, Length: 100})
			if err != nil || !bytes.Equal(got, data[10:110]) {
				t.Fatalf("relayed range: %v", err)
			}
		}
	}

	// Multipart: parts to two servers, completed on the third.
	var up structs.S3ObjectResponse
	if err := servers[2].RPC("S3.UploadCreate", &structs.S3UploadCreateRequest{Upload: &structs.S3Object{Bucket: "bkt", Key: "big"}, Caller: caller}, &up); err != nil {
		t.Fatal(err)
	}
	id := up.Object.UploadID
	part1, part2 := randomData(structs.S3MinPartSize), []byte("the last part may be small")
	var parts []structs.S3CompletePart
	var partHashes []string
	for i, p := range [][]byte{part1, part2} {
		res, err := s3Put(t, pool, servers[i].RPCAddr(), &structs.S3PutRequest{Bucket: "bkt", Key: "big", UploadID: id, PartNumber: i + 1,
			Size: int64(len(p)), Caller: caller}, p)
		if err != nil {
			t.Fatalf("part %d: %v", i+1, err)
		}
		parts = append(parts, structs.S3CompletePart{Number: i + 1, ETag: res.Part.ETag})
		partHashes = append(partHashes, res.Part.HashValue)
	}
	done := &structs.S3CompleteRequest{Bucket: "bkt", Key: "big", UploadID: id, Parts: []structs.S3CompletePart{parts[1], parts[0]}, Caller: caller}
	if _, err := s3Complete(t, pool, servers[2].RPCAddr(), done); structs.ErrorType(err) != structs.S3ErrInvalidPartOrder {
		t.Fatalf("parts out of order: %v", err)
	}
	done.Parts = parts
	obj, err := s3Complete(t, pool, servers[2].RPCAddr(), done)
	if err != nil {
		t.Fatal(err)
	}
	whole := append(append([]byte{}, part1...), part2...)
	if obj.HashValue != sha512Hex(whole) || !strings.HasSuffix(obj.ETag, "-2") || obj.Size != int64(len(whole)) {
		t.Fatalf("completed %+v", obj)
	}
	// Another server learns who holds the object's data once it has
	// applied the completion: until then it answers unavailable.
	waitFor(t, "the completed object's data from another server", 30*time.Second, func() error {
		got, _, err := getBlob(t, pool, servers[0].RPCAddr(), &structs.BlobGetRequest{HashValue: obj.HashValue, Length: -1})
		if err != nil {
			return err
		}
		if !bytes.Equal(got, whole) {
			t.Fatalf("completed object's data differs: %d bytes, want %d", len(got), len(whole))
		}
		return nil
	})
	waitFor(t, "the parts' blobs swept", 60*time.Second, func() error {
		for _, s := range servers {
			for _, h := range partHashes {
				if s.blobs.Has(h) {
					return fmt.Errorf("%s still holds a part", s.config.NodeName)
				}
			}
		}
		return nil
	})

	// Losing the server that received the first object loses no byte
	// of it.
	_ = servers[1].Shutdown()
	for _, s := range []*Server{servers[0], servers[2]} {
		got, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: hash, Length: -1})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("object from %s after its uploader left: %v", s.config.NodeName, err)
		}
	}
}
