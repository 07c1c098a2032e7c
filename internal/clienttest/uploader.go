// Package clienttest gives tests that run client.Client against
// in-process servers what the agent daemon gives a client: an image
// uploader over the servers' blob stream, for snapshots and shelves, and
// a fetcher over it for the image cache (unshelves restore through it).
// It must never be imported by non-test code.
package clienttest

import (
	"context"
	"errors"
	"io"

	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// Uploader streams an image's data to the server Server returns, as the
// agent daemon's uploader does through its servers.
type Uploader struct {
	Server func() *server.Server
}

// Upload implements client.ImageUploader.
func (u Uploader) Upload(_ context.Context, imageID string, size int64, body io.Reader) error {
	s := u.Server()
	if s == nil {
		return errors.New("no server to upload to")
	}
	conn, err := s.DialStream(s.RPCAddr(), structs.BlobPutStream)
	if err != nil {
		return err
	}
	defer conn.Close()
	var ready structs.BlobPutReady
	if err := rpc.WriteFrame(conn, &structs.BlobPutRequest{ImageID: imageID, Size: size}); err != nil {
		return err
	}
	if err := rpc.ReadFrame(conn, &ready); err != nil {
		return err
	}
	if ready.Error != "" {
		return errors.New(ready.Error)
	}
	w := rpc.NewChunkWriter(conn)
	if _, err := io.Copy(w, body); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	var res structs.BlobPutResult
	if err := rpc.ReadFrame(conn, &res); err != nil {
		return err
	}
	if res.Error != "" {
		return errors.New(res.Error)
	}
	return nil
}
