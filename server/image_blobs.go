package server

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"time"

	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// Image data travels over streams of the RPC listener (rpc.TypeStream),
// never through Raft:
//
//	Blob.Put  an agent uploads an image's data to a server, which stores
//	          it, records the image active with itself as a location, and
//	          lets the image sync (image_sync.go) copy it to other servers.
//	Blob.Get  an agent or a server reads a blob; a server that does not
//	          hold it fetches it from one that does, unless asked not to.
//
// Each stream's request carries the caller's credential (AuthToken),
// which the RPC server's hook checks against the stream's rule
// (server/rpc_policy.go) before the handler runs, as for every RPC.

// copyBufferSize is the buffer of every blob copy.
const copyBufferSize = 1 << 20

func (s *Server) registerStreams() error {
	if err := s.rpcServer.RegisterStream(structs.BlobGetStream, func() any { return &structs.BlobGetRequest{} }, s.serveBlobGet); err != nil {
		return err
	}
	if err := s.rpcServer.RegisterStream(structs.BlobPutStream, func() any { return &structs.BlobPutRequest{} }, s.serveBlobPut); err != nil {
		return err
	}
	return s.registerS3Streams()
}

// ImageStore is the server's blob store.
func (s *Server) ImageStore() *imagestore.Store { return s.blobs }

// DialStream opens a stream to a server's stream handler with the
// server's TLS settings; the caller closes it.
func (s *Server) DialStream(addr, method string) (net.Conn, error) {
	return s.connPool.Stream(addr, method)
}

// serveBlobPut receives an image's data: start the upload (queued →
// saving, through the leader), store the chunks, then record the data
// and this server as its location (saving → active). Any failure after
// the start returns the image to queued, as Glance does.
func (s *Server) serveBlobPut(conn net.Conn, args any) {
	req := *args.(*structs.BlobPutRequest)
	ready := func(err error) { _ = rpc.WriteFrame(conn, &structs.BlobPutReady{Error: err.Error()}) }
	if req.Size > s.config.ImageSizeCap {
		ready(s.tooLarge())
		return
	}
	s.imageSync.startUpload(req.ImageID)
	defer s.imageSync.endUpload(req.ImageID)
	var started structs.SingleImageResponse
	if err := s.RPC("Image.Data", &structs.ImageDataRequest{Entry: &structs.ImageDataEntry{
		ImageID: req.ImageID, Op: structs.ImageDataStart, NodeID: s.config.NodeID}}, &started); err != nil {
		ready(err)
		return
	}
	if err := rpc.WriteFrame(conn, &structs.BlobPutReady{}); err != nil {
		s.abortUpload(req.ImageID, err)
		return
	}
	img, err := s.receiveBlob(conn, &req, started.Image)
	if err != nil {
		s.abortUpload(req.ImageID, err)
		_ = rpc.WriteFrame(conn, &structs.BlobPutResult{Error: err.Error()})
		// The client may still be sending: read on for a moment, so that
		// closing with unread data (a TCP reset) does not destroy the
		// answer before the client reads it.
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, conn)
		return
	}
	_ = rpc.WriteFrame(conn, &structs.BlobPutResult{Image: img})
	s.nudgeImageSync()
}

func (s *Server) tooLarge() error {
	return structs.Errorf(structs.KindTooLarge, "The incoming image is too large: it exceeds the limit of %d bytes", s.config.ImageSizeCap)
}

// receiveBlob stores the chunks and records the data.
func (s *Server) receiveBlob(conn net.Conn, req *structs.BlobPutRequest, img *structs.Image) (*structs.Image, error) {
	w, err := s.blobs.NewWriter(s.config.ImageSizeCap)
	if err != nil {
		return nil, err
	}
	n, err := io.CopyBuffer(w, rpc.NewChunkReader(conn), make([]byte, copyBufferSize))
	if err == nil && req.Size >= 0 && n != req.Size {
		err = structs.Errorf(structs.KindInvalid, "Size of the uploaded data (%d bytes) does not match the declared size (%d bytes)", n, req.Size)
	}
	if errors.Is(err, imagestore.ErrTooLarge) {
		err = s.tooLarge()
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	blob, err := w.Commit("")
	if err != nil {
		return nil, err
	}
	// Until the image names the blob, no sweep may remove it.
	s.imageSync.pin(blob.Hash)
	defer s.imageSync.unpin(blob.Hash)
	var done structs.SingleImageResponse
	err = s.RPC("Image.Data", &structs.ImageDataRequest{Entry: &structs.ImageDataEntry{
		ImageID: req.ImageID, Op: structs.ImageDataFinish, NodeID: s.config.NodeID,
		Size: blob.Size, VirtualSize: imagestore.VirtualSize(img.DiskFormat, blob.Header, blob.Size),
		Checksum: blob.MD5, HashValue: blob.Hash}}, &done)
	if structs.KindOf(err) == structs.KindNotFound {
		return nil, structs.Errorf(structs.KindNotFound, "Image %s could not be found after upload. The image may have been deleted during the upload, cleaning up the chunks uploaded.", req.ImageID)
	}
	if err != nil {
		return nil, err
	}
	s.logger.Info("image data stored", "image", req.ImageID, "bytes", blob.Size, "sha512", blob.Hash[:16])
	return done.Image, nil
}

// abortUpload returns an image this server was saving to queued.
func (s *Server) abortUpload(id string, cause error) {
	s.logger.Warn("image upload failed", "image", id, "error", cause)
	var resp structs.SingleImageResponse
	err := s.RPC("Image.Data", &structs.ImageDataRequest{Entry: &structs.ImageDataEntry{
		ImageID: id, Op: structs.ImageDataAbort, NodeID: s.config.NodeID}}, &resp)
	if err != nil && structs.KindOf(err) != structs.KindNotFound {
		s.logger.Warn("could not return a failed upload's image to queued", "image", id, "error", err)
	}
}

// serveBlobGet sends a blob, or the requested range of it.
func (s *Server) serveBlobGet(conn net.Conn, args any) {
	req := *args.(*structs.BlobGetRequest)
	fail := func(err error) { _ = rpc.WriteFrame(conn, &structs.BlobGetResponse{Error: err.Error()}) }
	if !imagestore.ValidHash(req.HashValue) {
		fail(structs.Errorf(structs.KindInvalid, "%q is not a SHA-512", req.HashValue))
		return
	}
	f, size, err := s.blobs.Open(req.HashValue)
	if errors.Is(err, imagestore.ErrNotFound) {
		if req.Local {
			fail(structs.Errorf(structs.KindNotFound, "image data %s is not stored on %s", req.HashValue[:16], s.config.NodeName))
			return
		}
		if err := s.relayBlob(conn, &req); err != nil {
			fail(err)
		}
		return
	}
	if err != nil {
		fail(err)
		return
	}
	defer f.Close()
	length, err := blobRange(req.Offset, req.Length, size)
	if err != nil {
		fail(err)
		return
	}
	if _, err := f.Seek(req.Offset, io.SeekStart); err != nil {
		fail(err)
		return
	}
	if err := rpc.WriteFrame(conn, &structs.BlobGetResponse{Size: size, Length: length}); err != nil {
		return
	}
	// A LimitedReader of a file lets the kernel send it (sendfile).
	_, _ = io.Copy(conn, &io.LimitedReader{R: f, N: length})
}

// blobRange checks a requested range against a blob's size and returns
// how many bytes to send.
func blobRange(offset, length, size int64) (int64, error) {
	if offset < 0 || offset > size || (offset == size && size > 0) {
		return 0, structs.Errorf(structs.KindInvalid, "requested range starts at %d, outside the %d bytes of data", offset, size)
	}
	if length < 0 || offset+length > size {
		length = size - offset
	}
	return length, nil
}

// relayBlob fetches a blob this server does not hold from a server that
// does, and passes it on.
func (s *Server) relayBlob(conn net.Conn, req *structs.BlobGetRequest) error {
	addrs := s.blobHolders(req.HashValue)
	if len(addrs) == 0 {
		return structs.Errorf(structs.KindUnavailable, "no reachable server holds image data %s", req.HashValue[:16])
	}
	var lastErr error
	for _, addr := range addrs {
		remote, resp, err := s.openBlob(addr, &structs.BlobGetRequest{HashValue: req.HashValue, Offset: req.Offset, Length: req.Length, Local: true})
		if err != nil {
			lastErr = err
			continue
		}
		defer remote.Close()
		if err := rpc.WriteFrame(conn, resp); err != nil {
			return nil
		}
		_, _ = io.CopyBuffer(conn, io.LimitReader(remote, resp.Length), make([]byte, copyBufferSize))
		return nil
	}
	return structs.Errorf(structs.KindUnavailable, "no server could send image data %s: %v", req.HashValue[:16], lastErr)
}

// openBlob opens a Blob.Get stream to addr and reads its answer; the
// bytes follow on the returned connection.
func (s *Server) openBlob(addr string, req *structs.BlobGetRequest) (net.Conn, *structs.BlobGetResponse, error) {
	if s.aclEnabled() {
		req.AuthToken = s.serverCredential()
	}
	conn, err := s.connPool.Stream(addr, structs.BlobGetStream)
	if err != nil {
		return nil, nil, err
	}
	var resp structs.BlobGetResponse
	if err := rpc.WriteFrame(conn, req); err == nil {
		err = rpc.ReadFrame(conn, &resp)
		if err == nil && resp.Error != "" {
			err = errors.New(resp.Error)
		}
		if err == nil {
			return conn, &resp, nil
		}
		conn.Close()
		return nil, nil, err
	}
	conn.Close()
	return nil, nil, err
}

// blobHolders are the RPC addresses of the alive servers (other than
// this one) that the state says hold a blob, in random order.
func (s *Server) blobHolders(hash string) []string {
	images, err := s.fsm.State().ImagesByHash(nil, hash)
	if err != nil {
		return nil
	}
	alive := s.aliveServers()
	seen := map[string]bool{}
	var out []string
	for _, img := range images {
		for _, l := range img.Locations {
			if addr := alive[l.NodeID]; addr != "" && l.NodeID != s.config.NodeID && !seen[l.NodeID] {
				seen[l.NodeID] = true
				out = append(out, addr)
			}
		}
	}
	// S3 objects' blobs are in the same stores (s3_blobs_endpoint.go).
	for _, l := range s.s3BlobLocations(hash) {
		if addr := alive[l.NodeID]; addr != "" && l.NodeID != s.config.NodeID && !seen[l.NodeID] {
			seen[l.NodeID] = true
			out = append(out, addr)
		}
	}
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// aliveServers maps the node ids of the region's servers that gossip
// sees alive (this one included) to their RPC addresses.
func (s *Server) aliveServers() map[string]string {
	out := map[string]string{s.config.NodeID: s.RPCAddr()}
	if s.gossip == nil {
		return out
	}
	for _, m := range s.gossip.Servers(s.config.Region) {
		if m.Meta.ID != "" && m.Meta.RPCAddr != "" {
			out[m.Meta.ID] = m.Meta.RPCAddr
		}
	}
	return out
}

// RegisterImage stores data in this server's image store and creates an
// active image with it in one entry, so the image never shows queued.
// Dev mode seeds its image this way; it must run on the leader.
func (s *Server) RegisterImage(img *structs.Image, data io.Reader) (*structs.Image, error) {
	if !s.IsLeader() {
		return nil, structs.ErrNoLeader
	}
	w, err := s.blobs.NewWriter(structs.ImageSizeCap)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(w, data); err != nil {
		w.Abort()
		return nil, err
	}
	blob, err := w.Commit("")
	if err != nil {
		return nil, err
	}
	s.imageSync.pin(blob.Hash)
	defer s.imageSync.unpin(blob.Hash)
	c := img.Copy()
	now := time.Now().UnixNano()
	c.ID = strings.ToLower(c.ID)
	c.Status, c.CreatedAt, c.UpdatedAt = structs.ImageActive, now, now
	c.Size, c.Checksum, c.HashAlgo, c.HashValue = blob.Size, blob.MD5, structs.ImageHashAlgo, blob.Hash
	c.VirtualSize = imagestore.VirtualSize(c.DiskFormat, blob.Header, blob.Size)
	c.Locations = []*structs.ImageLocation{{NodeID: s.config.NodeID, AddedAt: now}}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	index, err := s.apply(structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: c, Create: true})
	if err != nil {
		return nil, err
	}
	var reply structs.SingleImageResponse
	if err := s.readImage(c.ID, index, &reply); err != nil {
		return nil, fmt.Errorf("read registered image: %w", err)
	}
	return reply.Image, nil
}
