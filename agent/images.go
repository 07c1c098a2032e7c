package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// imageData moves image data between the agent's HTTP APIs (Glance's and
// the native one) and the servers' image stores, over streams of the RPC
// listener. Nothing is held in memory beyond a copy buffer.
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

// Dev mode's image: an empty 112 MiB qcow2 disk named cirros, as
// devstack's, public and owned by the admin project.
const (
	devImageID          = "6a9b7e2c-5d1f-4c3b-9e8a-0f1d2c3b4a50"
	devImageName        = "cirros"
	devImageVirtualSize = 112 << 20
)

// seedDevImage registers dev mode's image once the server leads and the
// identity is seeded. It is written straight into the local store and
// recorded active in one entry (Server.RegisterImage).
func (a *Agent) seedDevImage() {
	defer a.bgWG.Done()
	for {
		err := a.registerDevImage()
		if err == nil {
			return
		}
		a.logger.Debug("dev mode: waiting to seed the image", "error", err)
		select {
		case <-a.shutdownCh:
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (a *Agent) registerDevImage() error {
	if a.server == nil {
		return nil
	}
	var projects structs.IdentityListResponse
	if err := a.self.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindProjects}, &projects); err != nil {
		return err
	}
	owner := ""
	for _, p := range projects.Projects {
		if p.Name == "admin" && p.DomainID == structs.DefaultDomainID {
			owner = p.ID
		}
	}
	if owner == "" {
		return fmt.Errorf("the admin project is not seeded yet")
	}
	if err := a.registerDevBootImage(owner); err != nil {
		return err
	}
	var existing structs.SingleImageResponse
	err := a.self.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: devImageID}, &existing)
	if err == nil {
		return nil
	}
	if structs.KindOf(err) != structs.KindNotFound {
		return err
	}
	img, err := a.server.RegisterImage(&structs.Image{ID: devImageID, Name: devImageName, DiskFormat: "qcow2", ContainerFormat: "bare",
		Visibility: structs.ImagePublic, Owner: owner, Properties: map[string]string{"os_distro": "cirros"}},
		bytes.NewReader(imagestore.EmptyQCOW2(devImageVirtualSize)))
	if err != nil {
		return err
	}
	a.logger.Info("dev mode: seeded image cirros", "id", img.ID, "bytes", img.Size)
	return nil
}

// Dev mode's bootable image, when scripts/build-dev-image.sh built one:
// Debian's cloud kernel and a busybox initramfs on a FAT disk that
// syslinux boots; it asks DHCP for its address and prints its progress
// on the serial console.
const (
	devBootImageID      = "6a9b7e2c-5d1f-4c3b-9e8a-0f1d2c3b4a51"
	devBootImageName    = "stratus-dev"
	devBootImageDefault = "build/dev-image/stratus-dev.img"
)

// registerDevBootImage registers the bootable dev image from path, if
// the file exists; owner is the admin project.
func (a *Agent) registerDevBootImage(owner string) error {
	path := a.config.DevImage
	if path == "" {
		path = devBootImageDefault
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && a.config.DevImage == "" {
		a.logger.Info("dev mode: no bootable dev image; scripts/build-dev-image.sh builds one", "path", path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("dev image: %w", err)
	}
	defer f.Close()
	var existing structs.SingleImageResponse
	if err := a.self.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: devBootImageID}, &existing); err == nil {
		return nil
	} else if structs.KindOf(err) != structs.KindNotFound {
		return err
	}
	img, err := a.server.RegisterImage(&structs.Image{ID: devBootImageID, Name: devBootImageName, DiskFormat: "raw", ContainerFormat: "bare",
		Visibility: structs.ImagePublic, Owner: owner, MinDisk: 1,
		Properties: map[string]string{"os_distro": "debian", "os_type": "linux", "hw_disk_bus": "virtio"}}, f)
	if err != nil {
		return fmt.Errorf("dev image %s: %w", path, err)
	}
	a.logger.Info("dev mode: seeded bootable image "+devBootImageName, "id", img.ID, "bytes", img.Size, "path", path)
	return nil
}
