package clienttest

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// Fetcher reads an image's data from the server Server returns over the
// Blob.Get stream, as the agent daemon's image cache does through its
// servers (an imagecache.Fetcher).
type Fetcher struct {
	Server func() *server.Server
}

// Fetch implements imagecache.Fetcher.
func (f Fetcher) Fetch(_ context.Context, img imagecache.Image) (io.ReadCloser, error) {
	s := f.Server()
	if s == nil {
		return nil, errors.New("no server to fetch from")
	}
	conn, err := s.DialStream(s.RPCAddr(), structs.BlobGetStream)
	if err != nil {
		return nil, err
	}
	var resp structs.BlobGetResponse
	err = rpc.WriteFrame(conn, &structs.BlobGetRequest{HashValue: img.HashValue, Length: -1})
	if err == nil {
		err = rpc.ReadFrame(conn, &resp)
	}
	if err == nil && resp.Error != "" {
		err = errors.New(resp.Error)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return blob{Reader: io.LimitReader(conn, resp.Length), conn: conn}, nil
}

type blob struct {
	io.Reader
	conn net.Conn
}

func (b blob) Close() error { return b.conn.Close() }
