package server

import (
	"bytes"
	"crypto/md5"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// fastImages tunes a server's image sync for tests.
func fastImages(c *Config) {
	c.ImageSyncInterval = 100 * time.Millisecond
	c.ImageGCGrace = time.Second
	c.ImageUploaderTimeout = 500 * time.Millisecond
}

func createImage(t testing.TB, s *Server, img *structs.Image) *structs.Image {
	t.Helper()
	var resp structs.SingleImageResponse
	if err := s.RPC("Image.Create", &structs.ImageCreateRequest{Image: img}, &resp); err != nil {
		t.Fatalf("create image: %v", err)
	}
	return resp.Image
}

func testPool(t testing.TB) *rpc.ConnPool {
	p := rpc.NewConnPool(rpc.PoolConfig{})
	t.Cleanup(func() { _ = p.Shutdown() })
	return p
}

// putBlob uploads data for an image through addr's Blob.Put stream, as
// an agent does.
func putBlob(t testing.TB, pool *rpc.ConnPool, addr, id string, data io.Reader, size int64) (*structs.Image, error) {
	t.Helper()
	conn, err := pool.Stream(addr, structs.BlobPutStream)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := rpc.WriteFrame(conn, &structs.BlobPutRequest{ImageID: id, Size: size}); err != nil {
		return nil, err
	}
	var ready structs.BlobPutReady
	if err := rpc.ReadFrame(conn, &ready); err != nil {
		return nil, err
	}
	if ready.Error != "" {
		return nil, fmt.Errorf("%s", ready.Error)
	}
	w := rpc.NewChunkWriter(conn)
	if _, err := io.Copy(w, data); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	var res structs.BlobPutResult
	if err := rpc.ReadFrame(conn, &res); err != nil {
		return nil, err
	}
	if res.Error != "" {
		return nil, fmt.Errorf("%s", res.Error)
	}
	return res.Image, nil
}

// getBlob reads a blob (or a range) through addr's Blob.Get stream.
func getBlob(t testing.TB, pool *rpc.ConnPool, addr string, req *structs.BlobGetRequest) ([]byte, *structs.BlobGetResponse, error) {
	t.Helper()
	conn, err := pool.Stream(addr, structs.BlobGetStream)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	if err := rpc.WriteFrame(conn, req); err != nil {
		return nil, nil, err
	}
	var resp structs.BlobGetResponse
	if err := rpc.ReadFrame(conn, &resp); err != nil {
		return nil, nil, err
	}
	if resp.Error != "" {
		return nil, &resp, fmt.Errorf("%s", resp.Error)
	}
	data, err := io.ReadAll(io.LimitReader(conn, resp.Length))
	return data, &resp, err
}

func sha512Hex(b []byte) string {
	s := sha512.Sum512(b)
	return hex.EncodeToString(s[:])
}

func randomData(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	return b
}

func holders(t testing.TB, s *Server, id string) []string {
	t.Helper()
	img, err := s.fsm.State().ImageByID(nil, id)
	if err != nil || img == nil {
		t.Fatalf("image %s: %v", id, err)
	}
	var out []string
	for _, l := range img.Locations {
		out = append(out, l.NodeID)
	}
	return out
}

func TestImageEndpointRecords(t *testing.T) {
	s := testServer(t, fastImages)
	waitForLeader(t, s)
	img := createImage(t, s, &structs.Image{Name: "cirros", DiskFormat: "qcow2", ContainerFormat: "bare", Owner: "p1"})
	if !structs.IsImageID(img.ID) || img.Visibility != structs.ImageShared || img.Status != structs.ImageQueued || img.CreatedAt == 0 {
		t.Fatalf("created %+v", img)
	}
	fixed := createImage(t, s, &structs.Image{ID: "AAAAAAAA-0000-0000-0000-000000000001", Visibility: structs.ImagePublic})
	if fixed.ID != "aaaaaaaa-0000-0000-0000-000000000001" {
		t.Fatalf("client-chosen id %q", fixed.ID)
	}
	var resp structs.SingleImageResponse
	err := s.RPC("Image.Create", &structs.ImageCreateRequest{Image: &structs.Image{ID: fixed.ID}}, &resp)
	if structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("duplicate id: %v", err)
	}
	err = s.RPC("Image.Create", &structs.ImageCreateRequest{Image: &structs.Image{ID: "not-a-uuid"}}, &resp)
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("bad id: %v", err)
	}

	upd := img.Copy()
	upd.Name, upd.MinRAM = "cirros-2", 64
	if err := s.RPC("Image.Update", &structs.ImageUpdateRequest{Image: upd, CASIndex: img.ModifyIndex}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Image.Name != "cirros-2" || resp.Image.MinRAM != 64 {
		t.Fatalf("updated %+v", resp.Image)
	}
	if err := s.RPC("Image.Update", &structs.ImageUpdateRequest{Image: upd, CASIndex: img.ModifyIndex}, &resp); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("stale update: %v", err)
	}

	var list structs.ImageListResponse
	if err := s.RPC("Image.List", &structs.ImageListRequest{MemberProjectID: "p2"}, &list); err != nil || len(list.Images) != 2 {
		t.Fatalf("list %d %v", len(list.Images), err)
	}
	var mresp structs.SingleImageMemberResponse
	if err := s.RPC("Image.Member", &structs.ImageMemberRequest{Entry: &structs.ImageMemberEntry{Create: true,
		Member: &structs.ImageMember{ImageID: img.ID, MemberID: "p2", Status: structs.MemberAccepted}}}, &mresp); err != nil {
		t.Fatal(err)
	}
	if mresp.Member.Status != structs.MemberPending {
		t.Fatalf("a new member is pending, got %+v", mresp.Member)
	}
	if err := s.RPC("Image.List", &structs.ImageListRequest{MemberProjectID: "p2"}, &list); err != nil || len(list.Members) != 1 {
		t.Fatalf("memberships %+v %v", list.Members, err)
	}
	var members structs.ImageMemberListResponse
	if err := s.RPC("Image.MemberList", &structs.ImageMemberListRequest{ImageID: img.ID}, &members); err != nil || len(members.Members) != 1 {
		t.Fatalf("members %+v %v", members.Members, err)
	}
	if err := s.RPC("Image.MemberList", &structs.ImageMemberListRequest{ImageID: "00000000-0000-0000-0000-000000000000"}, &members); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("members of a missing image: %v", err)
	}
	var del structs.GenericResponse
	if err := s.RPC("Image.Delete", &structs.ImageDeleteRequest{ImageID: img.ID}, &del); err != nil {
		t.Fatal(err)
	}
	err = s.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: img.ID}, &resp)
	if structs.KindOf(err) != structs.KindNotFound || structs.Message(err) != "No image found with ID "+img.ID {
		t.Fatalf("get deleted: %v", err)
	}
}

func TestImageUploadDownloadRangeAndFailures(t *testing.T) {
	s := testServer(t, fastImages)
	waitForLeader(t, s)
	pool := testPool(t)
	img := createImage(t, s, &structs.Image{Name: "disk", DiskFormat: "raw", ContainerFormat: "bare", Visibility: structs.ImagePublic})
	data := randomData(3<<20 + 17)

	// A declared size that does not match returns the image to queued.
	if _, err := putBlob(t, pool, s.RPCAddr(), img.ID, bytes.NewReader(data), int64(len(data)+1)); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("short upload: %v", err)
	}
	if got, _ := s.fsm.State().ImageByID(nil, img.ID); got.Status != structs.ImageQueued || got.HasData() {
		t.Fatalf("after a failed upload: %+v", got)
	}
	// A stream cut before the end marker too.
	conn, err := pool.Stream(s.RPCAddr(), structs.BlobPutStream)
	if err != nil {
		t.Fatal(err)
	}
	_ = rpc.WriteFrame(conn, &structs.BlobPutRequest{ImageID: img.ID, Size: -1})
	var ready structs.BlobPutReady
	if err := rpc.ReadFrame(conn, &ready); err != nil || ready.Error != "" {
		t.Fatalf("ready: %+v %v", ready, err)
	}
	waitFor(t, "saving", 5*time.Second, func() error {
		if got, _ := s.fsm.State().ImageByID(nil, img.ID); got.Status != structs.ImageSaving {
			return fmt.Errorf("status %s", got.Status)
		}
		return nil
	})
	// A second upload meanwhile is a conflict, as in Glance.
	if _, err := putBlob(t, pool, s.RPCAddr(), img.ID, bytes.NewReader(data), -1); structs.KindOf(err) != structs.KindConflict ||
		!strings.Contains(err.Error(), "Image status transition from saving to saving is not allowed") {
		t.Fatalf("concurrent upload: %v", err)
	}
	_, _ = rpc.NewChunkWriter(conn).Write(data[:1000])
	conn.Close()
	waitFor(t, "queued again", 5*time.Second, func() error {
		if got, _ := s.fsm.State().ImageByID(nil, img.ID); got.Status != structs.ImageQueued {
			return fmt.Errorf("status %s", got.Status)
		}
		return nil
	})

	up, err := putBlob(t, pool, s.RPCAddr(), img.ID, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := md5.Sum(data)
	if up.Status != structs.ImageActive || up.Size != int64(len(data)) || up.VirtualSize != int64(len(data)) ||
		up.Checksum != hex.EncodeToString(md[:]) || up.HashValue != sha512Hex(data) || !up.HeldBy(s.config.NodeID) {
		t.Fatalf("uploaded %+v", up)
	}
	if _, err := putBlob(t, pool, s.RPCAddr(), img.ID, bytes.NewReader(data), -1); structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("upload to an active image: %v", err)
	}
	got, resp, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: up.HashValue, Length: -1})
	if err != nil || !bytes.Equal(got, data) || resp.Size != int64(len(data)) {
		t.Fatalf("download: %d bytes, %v", len(got), err)
	}
	got, resp, err = getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: up.HashValue, Offset: 100, Length: 50})
	if err != nil || !bytes.Equal(got, data[100:150]) || resp.Length != 50 {
		t.Fatalf("range: %v", err)
	}
	got, _, err = getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: up.HashValue, Offset: int64(len(data)) - 5, Length: 100})
	if err != nil || !bytes.Equal(got, data[len(data)-5:]) {
		t.Fatalf("range past the end: %v", err)
	}
	if _, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: up.HashValue, Offset: int64(len(data))}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("range outside: %v", err)
	}
	if _, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: "../x"}); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("bad hash: %v", err)
	}
	if _, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: sha512Hex(nil)}); structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("unknown blob: %v", err)
	}

	// Deleting the image lets the sweep remove the data.
	var del structs.GenericResponse
	if err := s.RPC("Image.Delete", &structs.ImageDeleteRequest{ImageID: img.ID}, &del); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the data swept", 10*time.Second, func() error {
		if s.blobs.Has(up.HashValue) {
			return fmt.Errorf("still stored")
		}
		return nil
	})
}

// TestImageOverTheCapIsRefusedEarly: data over the size cap is refused
// while the client is still sending it, and the answer reaches the
// client; the image goes back to queued.
func TestImageOverTheCapIsRefusedEarly(t *testing.T) {
	s := testServer(t, func(c *Config) {
		fastImages(c)
		c.ImageSizeCap = 1 << 20
	})
	waitForLeader(t, s)
	pool := testPool(t)
	img := createImage(t, s, &structs.Image{Visibility: structs.ImagePublic})
	if _, err := putBlob(t, pool, s.RPCAddr(), img.ID, bytes.NewReader(make([]byte, 2<<20)), 2<<20); structs.KindOf(err) != structs.KindTooLarge {
		t.Fatalf("declared over the cap: %v", err)
	}
	_, err := putBlob(t, pool, s.RPCAddr(), img.ID, bytes.NewReader(randomData(8<<20)), -1)
	if structs.KindOf(err) != structs.KindTooLarge || !strings.Contains(err.Error(), "exceeds the limit of 1048576 bytes") {
		t.Fatalf("sent over the cap: %v", err)
	}
	if got, _ := s.fsm.State().ImageByID(nil, img.ID); got.Status != structs.ImageQueued {
		t.Fatalf("status %s", got.Status)
	}
}

// TestImageSurvivesTheLossOfItsUploader uploads to a follower of three
// servers, waits for the copy, stops the uploader and reads the image
// from the others.
func TestImageSurvivesTheLossOfItsUploader(t *testing.T) {
	servers := testCluster(t, 3, fastImages)
	leader := waitForLeader(t, servers...)
	var uploader *Server
	for _, s := range servers {
		if s != leader {
			uploader = s
			break
		}
	}
	pool := testPool(t)
	img := createImage(t, uploader, &structs.Image{Name: "big", DiskFormat: "qcow2", ContainerFormat: "bare", Visibility: structs.ImagePublic})
	header := imagestore.EmptyQCOW2(1 << 30)
	data := append(header, randomData(2<<20)...)
	up, err := putBlob(t, pool, uploader.RPCAddr(), img.ID, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if up.VirtualSize != 1<<30 || up.Locations[0].NodeID != uploader.config.NodeID {
		t.Fatalf("uploaded %+v", up)
	}
	// Two servers hold it, recorded in the state of all three.
	var copies []*Server
	waitFor(t, "a second copy", 20*time.Second, func() error {
		copies = copies[:0]
		for _, s := range servers {
			if s.blobs.Has(up.HashValue) {
				copies = append(copies, s)
			}
		}
		if len(copies) != 2 {
			return fmt.Errorf("%d copies", len(copies))
		}
		for _, s := range servers {
			if h := holders(t, s, img.ID); len(h) != 2 {
				return fmt.Errorf("%s records holders %v", s.config.NodeName, h)
			}
		}
		return nil
	})
	// The server without a copy relays it from one that has it.
	for _, s := range servers {
		if !s.blobs.Has(up.HashValue) {
			got, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: up.HashValue, Length: -1})
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("relayed download: %v", err)
			}
		}
	}

	// Lose the uploader: every other server still serves the image, and
	// a new copy is made on the server that lacked one.
	_ = uploader.Shutdown()
	var rest []*Server
	for _, s := range servers {
		if s != uploader {
			rest = append(rest, s)
		}
	}
	for _, s := range rest {
		got, _, err := getBlob(t, pool, s.RPCAddr(), &structs.BlobGetRequest{HashValue: up.HashValue, Length: -1})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("download from %s after the uploader left: %v", s.config.NodeName, err)
		}
	}
	waitFor(t, "both remaining servers to hold the data", 30*time.Second, func() error {
		for _, s := range rest {
			if !s.blobs.Has(up.HashValue) {
				return fmt.Errorf("%s has no copy", s.config.NodeName)
			}
		}
		return nil
	})
}

func TestInstanceCreateResolvesImages(t *testing.T) {
	s := testServer(t, fastImages)
	waitForLeader(t, s)
	upsertFlavor(t, s, "f1") // 128 MB, 1 GB disk
	create := func(image, project string, admin bool) (*structs.InstanceCreateResponse, error) {
		var resp structs.InstanceCreateResponse
		err := s.RPC("Instance.Create", &structs.InstanceCreateRequest{Name: "vm", FlavorID: "f1", ImageID: image,
			ProjectID: project, ImageAdmin: admin}, &resp)
		return &resp, err
	}
	// No image at all: any name is passed on, as before images existed.
	if resp, err := create("anything", "p1", false); err != nil || resp.Instances[0].ImageID != "anything" {
		t.Fatalf("without images: %v", err)
	}
	pool := testPool(t)
	register := func(img *structs.Image, data []byte) *structs.Image {
		img = createImage(t, s, img)
		if data != nil {
			var err error
			if img, err = putBlob(t, pool, s.RPCAddr(), img.ID, bytes.NewReader(data), int64(len(data))); err != nil {
				t.Fatal(err)
			}
		}
		return img
	}
	cirros := register(&structs.Image{Name: "cirros", DiskFormat: "qcow2", ContainerFormat: "bare", Visibility: structs.ImagePublic,
		Properties: map[string]string{"hw_architecture": "x86_64"}}, imagestore.EmptyQCOW2(112<<20))
	private := register(&structs.Image{Name: "mine", DiskFormat: "raw", ContainerFormat: "bare", Visibility: structs.ImagePrivate, Owner: "p1"}, []byte("x"))
	queued := register(&structs.Image{Name: "empty", Visibility: structs.ImagePublic}, nil)
	big := register(&structs.Image{Name: "big", DiskFormat: "qcow2", ContainerFormat: "bare", Visibility: structs.ImagePublic}, imagestore.EmptyQCOW2(2<<30))
	hungry := register(&structs.Image{Name: "hungry", DiskFormat: "raw", ContainerFormat: "bare", Visibility: structs.ImagePublic, MinRAM: 1024}, []byte("x"))
	wide := register(&structs.Image{Name: "wide", DiskFormat: "raw", ContainerFormat: "bare", Visibility: structs.ImagePublic, MinDisk: 5}, []byte("x"))
	register(&structs.Image{Name: "twin", Visibility: structs.ImagePublic}, nil)
	register(&structs.Image{Name: "twin", Visibility: structs.ImagePublic}, nil)

	resp, err := create("cirros", "p2", false)
	if err != nil {
		t.Fatal(err)
	}
	if inst := resp.Instances[0]; inst.ImageID != cirros.ID || inst.ImageProperties["hw_architecture"] != "x86_64" {
		t.Fatalf("by name: %+v", inst)
	}
	if resp, err := create(strings.ToUpper(cirros.ID), "p2", false); err != nil || resp.Instances[0].ImageID != cirros.ID {
		t.Fatalf("by id: %v", err)
	}
	if _, err := create(private.ID, "p1", false); err != nil {
		t.Fatalf("own private image: %v", err)
	}
	if _, err := create("mine", "", false); err != nil {
		t.Fatalf("native API (no project): %v", err)
	}
	for _, tc := range []struct {
		image, project string
		admin          bool
		msg            string
	}{
		{"nope", "p1", false, "Image nope could not be found."},
		{private.ID, "p2", false, "Image " + private.ID + " could not be found."},
		{"mine", "p2", false, "Image mine could not be found."},
		{queued.ID, "p1", false, "Image " + queued.ID + " is not active."},
		{big.ID, "p1", false, "Flavor's disk is too small for requested image. Flavor disk is 1073741824 bytes, image is 2147483648 bytes."},
		{hungry.ID, "p1", false, "Flavor's memory is too small for requested image."},
		{wide.ID, "p1", false, "Flavor's disk is smaller than the minimum size specified in image metadata. Flavor disk is 1073741824 bytes, minimum size is 5368709120 bytes."},
		{"twin", "p1", false, "Multiple images are named twin; use an image id."},
	} {
		_, err := create(tc.image, tc.project, tc.admin)
		if structs.KindOf(err) != structs.KindInvalid || structs.Message(err) != tc.msg {
			t.Errorf("%s as %s: %v, want %q", tc.image, tc.project, err, tc.msg)
		}
	}
	if _, err := create(private.ID, "p2", true); err != nil {
		t.Fatalf("admin, another project's private image: %v", err)
	}
}

func TestRegisterImageIsActiveAtOnce(t *testing.T) {
	s := testServer(t, fastImages)
	waitForLeader(t, s)
	img, err := s.RegisterImage(&structs.Image{ID: "11111111-2222-3333-4444-555555555555", Name: "cirros", DiskFormat: "qcow2",
		ContainerFormat: "bare", Visibility: structs.ImagePublic}, bytes.NewReader(imagestore.EmptyQCOW2(112<<20)))
	if err != nil {
		t.Fatal(err)
	}
	if img.Status != structs.ImageActive || img.VirtualSize != 112<<20 || !s.blobs.Has(img.HashValue) || !img.HeldBy(s.config.NodeID) {
		t.Fatalf("registered %+v", img)
	}
}

// TestStaleUploadOfARestartedServer: an image saving on a server that
// no longer receives it goes back to queued.
func TestStaleUploadOfARestartedServer(t *testing.T) {
	s := testServer(t, fastImages)
	waitForLeader(t, s)
	img := createImage(t, s, &structs.Image{Visibility: structs.ImagePublic})
	var resp structs.SingleImageResponse
	// As if this server had started receiving it before a restart.
	if err := s.RPC("Image.Data", &structs.ImageDataRequest{Entry: &structs.ImageDataEntry{ImageID: img.ID, Op: structs.ImageDataStart, NodeID: s.config.NodeID}}, &resp); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "queued", 5*time.Second, func() error {
		if got, _ := s.fsm.State().ImageByID(nil, img.ID); got.Status != structs.ImageQueued {
			return fmt.Errorf("status %s", got.Status)
		}
		return nil
	})
	// And one a vanished server was receiving, on the leader.
	if err := s.RPC("Image.Data", &structs.ImageDataRequest{Entry: &structs.ImageDataEntry{ImageID: img.ID, Op: structs.ImageDataStart, NodeID: "gone"}}, &resp); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "queued after the uploader vanished", 10*time.Second, func() error {
		if got, _ := s.fsm.State().ImageByID(nil, img.ID); got.Status != structs.ImageQueued {
			return fmt.Errorf("status %s", got.Status)
		}
		return nil
	})
}
