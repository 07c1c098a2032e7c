package libvirt_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/internal/clienttest"
	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestAgentLiveMigratePreparesTheDestination live-migrates a running
// instance booted from an image of the image service between two real
// libvirtds without shared storage, through the servers and the agents.
// The destination's image cache does not have the image, and the
// destination's libvirtd cannot open the source's cached file (it lies
// under /var/lib/libvirt, which the peer's namespace hides), so without
// the destination preparing, the whole disk would be copied. The
// destination's agent fetches the image into its cache before the
// migration starts; the destination's root disk is then an overlay on
// that file (the incremental copy), what the guest wrote (a qemu-io
// pattern written while it was stopped) is there, and the domain's
// record names the destination's file.
func TestAgentLiveMigratePreparesTheDestination(t *testing.T) {
	t.Parallel()
	c := newCloud(t)
	peer := libvirtpeer.Start(t)
	imageFile := qcow2Image(t, "1G")
	img := c.uploadImage(imageFile)

	hiddenCache := filepath.Join("/var/lib/libvirt/images", "stratus-test-cache-"+newNamespace())
	t.Cleanup(func() { _ = os.RemoveAll(hiddenCache) })
	a := &host{name: "hv-a", dataDir: t.TempDir(), syncEvery: time.Second, env: newEnv(t, func(cfg *libvirt.Config) {
		cfg.HostName, cfg.MigrationURI = "hv-a", peer.HostURI
	})}
	a.drv, a.images = a.env.drv, fileCache(t, hiddenCache, imageFile)
	benv := *a.env
	benv.cfg.URI, benv.cfg.MigrationURI, benv.cfg.HostName = peer.URI, peer.URI, "hv-b"
	benv.cfg.ImagesDir = filepath.Join(t.TempDir(), "images-b")
	benv.raw = rawConnTo(t, peer.URI)
	bCacheDir := filepath.Join(t.TempDir(), "cache-b")
	bCache := fileCache(t, bCacheDir, imageFile)
	b := &host{name: "hv-b", dataDir: t.TempDir(), syncEvery: time.Second, env: &benv, images: bCache}
	b.drv = benv.open()
	// B's pool exists once B built something.
	if _, err := b.drv.Spawn(ctx(t), tinySpec("pool")); err != nil {
		t.Fatal(err)
	}
	if err := b.drv.Destroy(ctx(t), "pool"); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.hosts[a.name], c.hosts[b.name] = a, b
	c.mu.Unlock()
	c.startAgent(a)

	var out structs.InstanceCreateResponse
	if err := c.rpc("Instance.Create", &structs.InstanceCreateRequest{Name: "prep", FlavorID: flavorTiny.ID, ImageID: img.ID,
		ProjectID: "p1", UserID: "u1", RequestID: "req-prep"}, &out); err != nil {
		t.Fatal(err)
	}
	id := out.Instances[0].ID
	c.waitStatus(id, "ACTIVE")
	c.startAgent(b) // after the boot, so that the instance is on A
	name := a.drv.DomainName(id)
	aBacking := qemuImgInfo(t, disksOf(t, a.env.raw, name)[0]).BackingFilename
	if filepath.Dir(aBacking) != hiddenCache {
		t.Fatalf("A's root disk is backed by %q, want A's cache in %s", aBacking, hiddenCache)
	}
	c.task(id, structs.OpStop)
	c.waitStatus(id, "SHUTOFF")
	writePattern(t, disksOf(t, a.env.raw, name)[0])
	c.task(id, structs.OpStart)
	c.waitStatus(id, "ACTIVE")
	if len(bCache.List()) != 0 {
		t.Fatalf("B's cache before the migration: %+v", bCache.List())
	}

	c.task(id, structs.OpLiveMigrate, func(r *structs.InstanceTaskRequest) { r.TargetHost = b.name })
	c.waitFor(id+" on hv-b", statusWait, func() error {
		inst := c.waitStatus(id, "ACTIVE")
		if h := c.host(b.name); h == nil || inst.HostID != h.ID {
			return fmt.Errorf("instance on host %q, want hv-b", inst.HostID)
		}
		return nil
	})
	expectDomain(t, b, id, golibvirt.DomainRunning)
	if l := bCache.List(); len(l) != 1 {
		t.Fatalf("B's cache after the migration: %+v, want the instance's image", l)
	}
	bFile := bCache.Path(img.HashValue)
	bDisks := disksOf(t, b.env.raw, name)
	if backing := qemuImgInfo(t, bDisks[0]).BackingFilename; backing != bFile {
		t.Fatalf("B's root disk %s is backed by %q, want an overlay on B's cached image %s (incremental copy)", bDisks[0], backing, bFile)
	}
	if filepath.Dir(bDisks[0]) != benv.cfg.ImagesDir {
		t.Errorf("B runs from %s, not a file of its own pool", bDisks[0])
	}
	if meta := domainXML(t, b.env.raw, name, golibvirt.DomainXMLInactive).Metadata; meta == nil || !strings.Contains(meta.XML, bFile) {
		t.Errorf("B's domain record does not name B's image file %s", bFile)
	}
	// The pattern is read from the disk of the stopped guest.
	c.task(id, structs.OpStop)
	c.waitStatus(id, "SHUTOFF")
	if !hasPattern(t, bDisks[0]) {
		t.Error("B's root disk lost what the guest wrote")
	}
	if err := c.rpc("Instance.Delete", &structs.InstanceDeleteRequest{InstanceIDs: []string{id}, ProjectID: "p1", UserID: "u1", Admin: true},
		&structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 60*time.Second, "every domain removed", func() error {
		for _, h := range []*host{a, b} {
			if got := domainNames(t, h.env.raw, h.env.ns); len(got) != 0 {
				return fmt.Errorf("%s still has domains %v", h.name, got)
			}
		}
		return nil
	})
}

// uploadImage creates an image of the image service with the data of
// the local file path.
func (c *cloud) uploadImage(path string) *structs.Image {
	c.t.Helper()
	var created structs.SingleImageResponse
	if err := c.rpc("Image.Create", &structs.ImageCreateRequest{Image: &structs.Image{Name: "prep-image", DiskFormat: "qcow2",
		ContainerFormat: "bare", Owner: "p1", Visibility: structs.ImagePublic}}, &created); err != nil {
		c.t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		c.t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		c.t.Fatal(err)
	}
	up := clienttest.Uploader{Server: func() *server.Server { return c.srv }}
	if err := up.Upload(ctx(c.t), created.Image.ID, st.Size(), f); err != nil {
		c.t.Fatal(err)
	}
	var got structs.SingleImageResponse
	if err := c.rpc("Image.Get", &structs.ImageSpecificRequest{ImageID: created.Image.ID}, &got); err != nil {
		c.t.Fatal(err)
	}
	if got.Image.HashValue == "" {
		c.t.Fatalf("uploaded image %+v has no hash", got.Image)
	}
	return got.Image
}

// fileCache is an image cache in dir whose every image's data is the
// local file src (the cache checks it against the image's hash).
func fileCache(t *testing.T, dir, src string) *imagecache.Cache {
	t.Helper()
	c, err := imagecache.New(imagecache.Config{Dir: dir, Fetcher: imagecache.FetcherFunc(
		func(context.Context, imagecache.Image) (io.ReadCloser, error) { return os.Open(src) })})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
