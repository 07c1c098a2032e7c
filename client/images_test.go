package client

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// imageServer adds image records (Image.Get) to the fake server, and
// serves their data to an image cache.
type imageServer struct {
	*fakeServer
	mu     sync.Mutex
	images map[string]*structs.Image
	data   map[string][]byte // by hash
}

func (s *imageServer) add(id string, data []byte) *structs.Image {
	sum := sha512.Sum512(data)
	img := &structs.Image{ID: id, Name: "img " + id, Status: structs.ImageActive, Size: int64(len(data)), HashValue: hex.EncodeToString(sum[:])}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.images[id], s.data[img.HashValue] = img, data
	return img
}

func (s *imageServer) RPC(method string, args, reply any) error {
	if method != "Image.Get" {
		return s.fakeServer.RPC(method, args, reply)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	img := s.images[args.(*structs.ImageSpecificRequest).ImageID]
	if img == nil {
		return rpcErr(structs.KindNotFound, "Image %s could not be found.", args.(*structs.ImageSpecificRequest).ImageID)
	}
	reply.(*structs.SingleImageResponse).Image = img.Copy()
	return nil
}

func (s *imageServer) Fetch(_ context.Context, img imagecache.Image) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return io.NopCloser(bytes.NewReader(s.data[img.HashValue])), nil
}

// TestSpawnResolvesTheImageThroughTheCache: the driver gets the cached
// file of the instance's image as ImagePath; an image without a record
// spawns without one; data that does not match its sha512 fails the
// spawn; the images of live instances are reported in use.
func TestSpawnResolvesTheImageThroughTheCache(t *testing.T) {
	h := newHarness(t, fake.Config{})
	srv := &imageServer{fakeServer: h.srv, images: map[string]*structs.Image{}, data: map[string][]byte{}}
	good := srv.add("img-good", []byte(strings.Repeat("a bootable disk ", 1000)))
	bad := srv.add("img-bad", []byte("the recorded data"))
	srv.data[bad.HashValue] = []byte("other data of the same.") // served instead
	var c *Client
	cache, err := imagecache.New(imagecache.Config{Dir: t.TempDir(), Fetcher: srv, InUse: func() map[string]bool { return c.ImagesInUse() }})
	if err != nil {
		t.Fatal(err)
	}
	h.tweak = func(cfg *Config) { cfg.RPC, cfg.ImageFiles = srv, cache }
	c = h.start()

	withImage := func(id string) func(*structs.Allocation, *structs.Instance) {
		return func(_ *structs.Allocation, inst *structs.Instance) { inst.ImageID = id }
	}
	a := h.srv.addAllocWith(c.HostID(), withImage(good.ID))
	waitState(t, h.srv, a.ID, structs.AllocClientRunning)
	spec, err := h.fake.Spec(a.InstanceID)
	if err != nil {
		t.Fatal(err)
	}
	if spec.ImagePath != cache.Path(good.HashValue) {
		t.Fatalf("ImagePath %q, want %q", spec.ImagePath, cache.Path(good.HashValue))
	}
	if data, err := os.ReadFile(spec.ImagePath); err != nil || sha512.Sum512(data) != sha512.Sum512([]byte(strings.Repeat("a bootable disk ", 1000))) {
		t.Fatalf("cached file: %v", err)
	}
	if inUse := c.ImagesInUse(); !inUse[good.ID] {
		t.Fatalf("images in use %v", inUse)
	}

	// An image the image service does not know boots without data.
	b := h.srv.addAllocWith(c.HostID(), withImage("cirros"))
	waitState(t, h.srv, b.ID, structs.AllocClientRunning)
	if spec, err := h.fake.Spec(b.InstanceID); err != nil || spec.ImagePath != "" {
		t.Fatalf("unknown image: spec %+v, %v", spec, err)
	}

	// Data that is not the image's fails the spawn.
	f := h.srv.addAllocWith(c.HostID(), withImage(bad.ID))
	got := waitState(t, h.srv, f.ID, structs.AllocClientFailed)
	if !strings.Contains(got.ClientDescription, "does not match") || h.fake.Calls("Spawn") != 2 {
		t.Fatalf("bad image: %q, %d spawns", got.ClientDescription, h.fake.Calls("Spawn"))
	}
}
