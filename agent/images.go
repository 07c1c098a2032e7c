package agent

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"

	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// imageData moves image data between the agent and the servers' image
// stores, over streams of the RPC listener: for the HTTP APIs (Glance's
// and the native one, with the caller's token), the hosts' image caches
// and snapshot uploads, and S3 objects (s3Data). It is the daemon's
// because it rides the daemon's transports (its own server, else the
// connection pool, and gossip to find servers); the APIs get it as an
// interface. Nothing is held in memory beyond a copy buffer.
type imageData struct {
	a *Agent
}

// dial opens a stream to a server with the agent's TLS settings.
func (d *imageData) dial(addr, method string) (net.Conn, error) {
	if d.a.server != nil {
		return d.a.server.DialStream(addr, method)
	}
	return d.a.connPool.Stream(addr, method)
}

// servers lists the RPC addresses of the region's alive servers, this
// agent's own server first, the others in random order; byID maps their
// node ids to the same addresses.
func (d *imageData) servers() (order []string, byID map[string]string) {
	byID = map[string]string{}
	var others []string
	own := ""
	if d.a.server != nil {
		own = d.a.server.RPCAddr()
	}
	for _, m := range d.a.gossip.Servers(d.a.config.Region) {
		if m.Meta.RPCAddr == "" {
			continue
		}
		byID[m.Meta.ID] = m.Meta.RPCAddr
		if m.Meta.RPCAddr != own {
			others = append(others, m.Meta.RPCAddr)
		}
	}
	rand.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	if own != "" {
		order = append(order, own)
		byID[d.a.nodeID] = own
	}
	return append(order, others...), byID
}

// Upload streams body to a server, which stores it and records the
// image active, with the caller's credential (token), which the
// servers' stream hook checks. The agent's own server takes it when
// there is one; otherwise the first server that answers.
func (d *imageData) Upload(token, imageID string, size int64, body io.Reader) (*structs.Image, error) {
	order, _ := d.servers()
	if len(order) == 0 {
		return nil, structs.Errorf(structs.KindUnavailable, "no servers known in region %q", d.a.config.Region)
	}
	var conn net.Conn
	var err error
	for _, addr := range order {
		if conn, err = d.dial(addr, structs.BlobPutStream); err == nil || !rpc.IsConnError(err) {
			break
		}
	}
	if err != nil {
		return nil, structs.Errorf(structs.KindUnavailable, "no server reachable for the upload: %v", err)
	}
	defer conn.Close()
	if err := rpc.WriteFrame(conn, &structs.BlobPutRequest{ImageID: imageID, Size: size, AuthToken: token}); err != nil {
		return nil, err
	}
	var ready structs.BlobPutReady
	if err := rpc.ReadFrame(conn, &ready); err != nil {
		return nil, err
	}
	if ready.Error != "" {
		return nil, errors.New(ready.Error)
	}
	// The server may give up early (data over the cap, a full disk): its
	// answer then arrives while the body is still being sent, and the
	// copy stops.
	result := make(chan structs.BlobPutResult, 1)
	answered := make(chan struct{})
	go func() {
		var res structs.BlobPutResult
		if err := rpc.ReadFrame(conn, &res); err != nil {
			res.Error = structs.Errorf(structs.KindUnavailable, "image upload interrupted: %v", err).Error()
		}
		close(answered)
		result <- res
	}()
	w := rpc.NewChunkWriter(conn)
	copyErr := copyUntil(w, body, answered)
	if copyErr == nil {
		copyErr = w.Close()
	} else {
		// Cut the stream without its end marker: the server discards
		// what it received and returns the image to queued.
		conn.Close()
	}
	res := <-result
	if res.Error != "" {
		return nil, errors.New(res.Error)
	}
	if copyErr != nil {
		return nil, copyErr
	}
	return res.Image, nil
}

// Download opens a range of an image's data, with the caller's
// credential (token): from a server that holds it when one is alive
// (this agent's own first), else from any server, which relays it.
func (d *imageData) Download(token string, img *structs.Image, offset, length int64) (io.ReadCloser, error) {
	order, byID := d.servers()
	var holders, rest []string
	seen := map[string]bool{}
	for _, l := range img.Locations {
		if addr := byID[l.NodeID]; addr != "" && !seen[addr] {
			seen[addr] = true
			holders = append(holders, addr)
		}
	}
	for _, addr := range order {
		if !seen[addr] {
			rest = append(rest, addr)
		}
	}
	if len(order) > 0 && seen[order[0]] {
		// This agent's own server holds it: no network at all.
		holders = append([]string{order[0]}, removeAddr(holders, order[0])...)
	}
	req := &structs.BlobGetRequest{HashValue: img.HashValue, Offset: offset, Length: length, AuthToken: token}
	var lastErr error = structs.Errorf(structs.KindUnavailable, "no servers known in region %q", d.a.config.Region)
	for i, addr := range append(holders, rest...) {
		req.Local = i < len(holders)
		rc, err := d.open(addr, req)
		if err == nil {
			return rc, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

// errAnswered stops an upload the server already answered.
var errAnswered = errors.New("the server answered before the end of the data")

// copyUntil copies src to dst until EOF, an error, or stop is closed.
func copyUntil(dst io.Writer, src io.Reader, stop <-chan struct{}) error {
	buf := make([]byte, 1<<20)
	for {
		select {
		case <-stop:
			return errAnswered
		default:
		}
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func removeAddr(list []string, addr string) []string {
	out := list[:0:0]
	for _, a := range list {
		if a != addr {
			out = append(out, a)
		}
	}
	return out
}

// open starts a Blob.Get stream and returns its bytes.
func (d *imageData) open(addr string, req *structs.BlobGetRequest) (io.ReadCloser, error) {
	conn, err := d.dial(addr, structs.BlobGetStream)
	if err != nil {
		return nil, err
	}
	var resp structs.BlobGetResponse
	err = rpc.WriteFrame(conn, req)
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
	return &blobReader{Reader: io.LimitReader(conn, resp.Length), conn: conn, want: resp.Length}, nil
}

// blobReader reads a stream's bytes and reports a stream cut short.
type blobReader struct {
	io.Reader
	conn net.Conn
	want int64
	got  int64
}

func (b *blobReader) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	b.got += int64(n)
	if err == io.EOF && b.got < b.want {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func (b *blobReader) Close() error { return b.conn.Close() }
