package server

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// S3 object data travels over streams of the RPC listener, as image data
// does (image_blobs.go), into the same content-addressed stores:
//
//	S3.Put       an agent sends an object's (or a part's) bytes; the
//	             server stores the blob, checks it against the declared
//	             digests, and records the object (or part) with itself
//	             as its location.
//	S3.Complete  an agent completes a multipart upload; the server
//	             concatenates the parts' blobs into the object's blob and
//	             records the object in the entry that ends the upload.
//
// The image sync replicates object and part blobs like image blobs,
// and sweeps them once no image, object or upload names them.

func (s *Server) registerS3Streams() error {
	if err := s.rpcServer.RegisterStream(structs.S3PutStream, func() any { return &structs.S3PutRequest{} }, s.serveS3Put); err != nil {
		return err
	}
	return s.rpcServer.RegisterStream(structs.S3CompleteStream, func() any { return &structs.S3CompleteRequest{} }, s.serveS3Complete)
}

// serveS3Put receives an object or a part.
func (s *Server) serveS3Put(conn net.Conn, args any) {
	req := *args.(*structs.S3PutRequest)
	if err := s.checkS3Put(&req); err != nil {
		_ = rpc.WriteFrame(conn, &structs.S3PutReady{Error: err.Error()})
		return
	}
	if err := rpc.WriteFrame(conn, &structs.S3PutReady{}); err != nil {
		return
	}
	res, err := s.receiveS3(conn, &req)
	if err != nil {
		_ = rpc.WriteFrame(conn, &structs.S3PutResult{Error: err.Error()})
		// Let the client read the answer before the close (see
		// serveBlobPut).
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, conn)
		return
	}
	_ = rpc.WriteFrame(conn, res)
	s.nudgeImageSync()
}

// checkS3Put checks a put against this server's state before any byte
// is read: the bucket exists and is the caller's, the upload exists.
func (s *Server) checkS3Put(req *structs.S3PutRequest) error {
	if _, err := s.bucketFor(req.Bucket, req.Caller); err != nil {
		return err
	}
	if err := structs.ValidateS3Key(req.Key); err != nil {
		return err
	}
	if req.Size > structs.S3MaxObjectSize {
		return s3TooLarge()
	}
	if req.UploadID == "" {
		return nil
	}
	if req.PartNumber < 1 || req.PartNumber > structs.S3MaxPartNumber {
		return structs.S3Errorf(structs.KindInvalid, structs.S3ErrInvalidArgument,
			"Part number must be an integer between 1 and %d, inclusive.", structs.S3MaxPartNumber)
	}
	u, err := s.fsm.State().S3ObjectByID(nil, structs.S3UploadRecordID(req.Bucket, req.UploadID))
	if err != nil {
		return err
	}
	if u == nil || u.Key != req.Key {
		return structs.S3Errorf(structs.KindNotFound, structs.S3ErrNoSuchUpload, "The specified multipart upload does not exist: %s", req.UploadID)
	}
	return nil
}

func s3TooLarge() error {
	return structs.S3Errorf(structs.KindTooLarge, structs.S3ErrEntityTooLarge,
		"Your proposed upload exceeds the maximum allowed size of %d bytes.", int64(structs.S3MaxObjectSize))
}

// receiveS3 stores the bytes, checks them, and records the object or
// part.
func (s *Server) receiveS3(conn net.Conn, req *structs.S3PutRequest) (*structs.S3PutResult, error) {
	w, err := s.blobs.NewWriter(structs.S3MaxObjectSize)
	if err != nil {
		return nil, err
	}
	sum := sha256.New()
	n, err := io.CopyBuffer(io.MultiWriter(w, sum), rpc.NewChunkReader(conn), make([]byte, copyBufferSize))
	switch {
	case errors.Is(err, imagestore.ErrTooLarge):
		err = s3TooLarge()
	case err != nil:
		err = structs.S3Errorf(structs.KindInvalid, structs.S3ErrIncompleteBody, "The request body ended early: %v", err)
	case req.Size >= 0 && n != req.Size:
		err = structs.S3Errorf(structs.KindInvalid, structs.S3ErrIncompleteBody,
			"You did not provide the number of bytes specified by the Content-Length HTTP header (%d of %d).", n, req.Size)
	case req.ContentSHA256 != "" && hex.EncodeToString(sum.Sum(nil)) != req.ContentSHA256:
		err = structs.S3Errorf(structs.KindInvalid, structs.S3ErrXAmzContentSHA256, "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	blob, err := w.Commit("")
	if err != nil {
		return nil, err
	}
	if req.ContentMD5 != "" && blob.MD5 != req.ContentMD5 {
		return nil, structs.S3Errorf(structs.KindInvalid, structs.S3ErrBadDigest, "The Content-MD5 you specified did not match what we received.")
	}
	// Until a record names the blob, no sweep may remove it.
	s.imageSync.pin(blob.Hash)
	defer s.imageSync.unpin(blob.Hash)
	now := time.Now().UnixNano()
	loc := []*structs.ImageLocation{{NodeID: s.config.NodeID, AddedAt: now}}
	var resp structs.GenericResponse
	if req.UploadID != "" {
		part := &structs.S3Part{Number: req.PartNumber, Size: blob.Size, ETag: blob.MD5, HashValue: blob.Hash, Locations: loc, At: now}
		err := s.RPC("S3.Multipart", &structs.S3MultipartRequest{Entry: &structs.S3MultipartEntry{Op: structs.S3OpPart,
			Bucket: req.Bucket, UploadID: req.UploadID, Part: part}}, &resp)
		if err != nil {
			return nil, err
		}
		return &structs.S3PutResult{Part: part}, nil
	}
	obj := &structs.S3Object{Bucket: req.Bucket, Key: req.Key, Size: blob.Size, ETag: blob.MD5, MD5: blob.MD5,
		HashValue: blob.Hash, ContentType: req.ContentType, Metadata: req.Metadata, ProjectID: req.Caller.ProjectID,
		UserID: req.Caller.UserID, Locations: loc, CreatedAt: now, UpdatedAt: now}
	err = s.RPC("S3.ObjectPut", &structs.S3ObjectPutRequest{Entry: &structs.S3ObjectEntry{Op: structs.S3OpPut, Object: obj}}, &resp)
	if err != nil {
		return nil, err
	}
	s.logger.Debug("s3 object stored", "bucket", req.Bucket, "key", req.Key, "bytes", blob.Size)
	return &structs.S3PutResult{Object: obj}, nil
}

// serveS3Complete assembles a multipart upload.
func (s *Server) serveS3Complete(conn net.Conn, args any) {
	req := *args.(*structs.S3CompleteRequest)
	obj, err := s.completeUpload(&req)
	if err != nil {
		_ = rpc.WriteFrame(conn, &structs.S3PutResult{Error: err.Error()})
		return
	}
	_ = rpc.WriteFrame(conn, &structs.S3PutResult{Object: obj})
	s.nudgeImageSync()
}

// completeUpload checks the parts listed against the upload, writes
// their concatenation as one blob and records the object.
func (s *Server) completeUpload(req *structs.S3CompleteRequest) (*structs.S3Object, error) {
	var cur structs.S3ObjectResponse
	if err := s.RPC("S3.ObjectGet", &structs.S3ObjectGetRequest{Bucket: req.Bucket, Key: req.Key, UploadID: req.UploadID}, &cur); err != nil {
		return nil, err
	}
	if !req.Caller.CanAccess(cur.Bucket.ProjectID) {
		return nil, accessDenied()
	}
	parts, etag, err := chooseParts(cur.Object, req.Parts)
	if err != nil {
		return nil, err
	}
	w, err := s.blobs.NewWriter(0)
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		if err := s.copyBlob(w, p.HashValue, p.Locations); err != nil {
			w.Abort()
			return nil, fmt.Errorf("assemble part %d: %w", p.Number, err)
		}
	}
	blob, err := w.Commit("")
	if err != nil {
		return nil, err
	}
	s.imageSync.pin(blob.Hash)
	defer s.imageSync.unpin(blob.Hash)
	now := time.Now().UnixNano()
	u := cur.Object
	obj := &structs.S3Object{Bucket: req.Bucket, Key: req.Key, Size: blob.Size, ETag: etag, MD5: blob.MD5,
		HashValue: blob.Hash, ContentType: u.ContentType, Metadata: u.Metadata, ProjectID: req.Caller.ProjectID,
		UserID: req.Caller.UserID, Locations: []*structs.ImageLocation{{NodeID: s.config.NodeID, AddedAt: now}},
		CreatedAt: now, UpdatedAt: now}
	var resp structs.GenericResponse
	err = s.RPC("S3.Multipart", &structs.S3MultipartRequest{Entry: &structs.S3MultipartEntry{Op: structs.S3OpComplete,
		Bucket: req.Bucket, UploadID: req.UploadID, Object: obj}}, &resp)
	if err != nil {
		return nil, err
	}
	s.logger.Info("s3 multipart upload completed", "bucket", req.Bucket, "key", req.Key, "parts", len(parts), "bytes", blob.Size)
	return obj, nil
}

// chooseParts checks a complete request's part list against the upload:
// ascending numbers, each uploaded with the ETag given, every part but
// the last at least S3MinPartSize. It answers the parts and the
// object's ETag (the MD5 of the parts' MD5s, then "-<count>").
func chooseParts(u *structs.S3Object, list []structs.S3CompletePart) ([]*structs.S3Part, string, error) {
	if len(list) == 0 {
		return nil, "", structs.S3Errorf(structs.KindInvalid, structs.S3ErrInvalidPart, "You must specify at least one part.")
	}
	byNumber := map[int]*structs.S3Part{}
	for _, p := range u.Parts {
		byNumber[p.Number] = p
	}
	for i := 1; i < len(list); i++ {
		if list[i].Number <= list[i-1].Number {
			return nil, "", structs.S3Errorf(structs.KindInvalid, structs.S3ErrInvalidPartOrder,
				"The list of parts was not in ascending order. The parts list must be specified in order by part number.")
		}
	}
	sums := md5.New()
	var out []*structs.S3Part
	for i, want := range list {
		p := byNumber[want.Number]
		if p == nil || (want.ETag != "" && want.ETag != p.ETag) {
			return nil, "", structs.S3Errorf(structs.KindInvalid, structs.S3ErrInvalidPart,
				"One or more of the specified parts could not be found. The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
		}
		if i < len(list)-1 && p.Size < structs.S3MinPartSize {
			return nil, "", structs.S3Errorf(structs.KindInvalid, structs.S3ErrEntityTooSmall,
				"Your proposed upload is smaller than the minimum allowed object size: part %d is %d bytes.", p.Number, p.Size)
		}
		raw, err := hex.DecodeString(p.ETag)
		if err != nil {
			return nil, "", fmt.Errorf("part %d has a malformed ETag: %w", p.Number, err)
		}
		sums.Write(raw)
		out = append(out, p)
	}
	return out, fmt.Sprintf("%s-%d", hex.EncodeToString(sums.Sum(nil)), len(out)), nil
}

// copyBlob appends a blob to w: from this server's store, else from an
// alive server the locations name.
func (s *Server) copyBlob(w io.Writer, hash string, locs []*structs.ImageLocation) error {
	if f, _, err := s.blobs.Open(hash); err == nil {
		defer f.Close()
		_, err := io.CopyBuffer(w, f, make([]byte, copyBufferSize))
		return err
	}
	alive := s.aliveServers()
	lastErr := structs.Errorf(structs.KindUnavailable, "no reachable server holds data %s", hash[:16])
	for _, l := range locs {
		addr := alive[l.NodeID]
		if addr == "" || l.NodeID == s.config.NodeID {
			continue
		}
		conn, resp, err := s.openBlob(addr, &structs.BlobGetRequest{HashValue: hash, Length: -1, Local: true})
		if err != nil {
			lastErr = err
			continue
		}
		n, err := io.CopyBuffer(w, io.LimitReader(conn, resp.Length), make([]byte, copyBufferSize))
		conn.Close()
		if err == nil && n != resp.Length {
			err = io.ErrUnexpectedEOF
		}
		// A partial copy cannot be undone in w: give up.
		return err
	}
	return lastErr
}

// addS3Blobs adds the blobs of objects and uploads, and the servers
// recorded as holding them, to the image sync's view, so that they are
// replicated and kept like image data.
func (s *Server) addS3Blobs(blobs map[string]*blobState) {
	objs, err := s.fsm.State().S3AllObjects(nil)
	if err != nil {
		s.logger.Warn("image sync: read s3 objects", "error", err)
		return
	}
	add := func(hash string, locs []*structs.ImageLocation) {
		if hash == "" {
			return
		}
		b := blobs[hash]
		if b == nil {
			b = &blobState{holders: map[string]bool{}}
			blobs[hash] = b
		}
		for _, l := range locs {
			b.holders[l.NodeID] = true
		}
	}
	for _, o := range objs {
		add(o.HashValue, o.Locations)
		for _, p := range o.Parts {
			add(p.HashValue, p.Locations)
		}
	}
}

// s3BlobLocations are the servers the state says hold a blob of an
// object or a part.
func (s *Server) s3BlobLocations(hash string) []*structs.ImageLocation {
	objs, err := s.fsm.State().S3ObjectsByHash(nil, hash)
	if err != nil {
		return nil
	}
	var out []*structs.ImageLocation
	for _, o := range objs {
		if o.HashValue == hash {
			out = append(out, o.Locations...)
		}
		for _, p := range o.Parts {
			if p.HashValue == hash {
				out = append(out, p.Locations...)
			}
		}
	}
	return out
}
