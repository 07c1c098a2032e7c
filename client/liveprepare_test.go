package client

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/client/diskxfer"
	"github.com/stratus-cloud/stratus/client/diskxfer/diskxfertest"
	"github.com/stratus-cloud/stratus/client/imagecache"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestLiveMigrationPreparesTheDestination: before the source sends the
// guest it asks the destination's agent (agent to agent, with the move's
// token) to prepare; the destination fetches the instance's image into
// its cache and names the file, which the source's driver gets as the
// migration's ImagePath. A wrong token or a dead destination fails the
// migration before it starts: the instance stays here, running.
func TestLiveMigrationPreparesTheDestination(t *testing.T) {
	h := newHarness(t, fake.Config{})
	srv := &imageServer{fakeServer: h.srv, images: map[string]*structs.Image{}, data: map[string][]byte{}}
	img := srv.add("img-prep", []byte(strings.Repeat("the image the guest booted ", 500)))
	var c *Client
	cache, err := imagecache.New(imagecache.Config{Dir: t.TempDir(), Fetcher: srv, InUse: func() map[string]bool { return c.ImagesInUse() }})
	if err != nil {
		t.Fatal(err)
	}
	export := diskxfertest.Serve(t)
	h.tweak = func(cfg *Config) { cfg.RPC, cfg.ImageFiles, cfg.DiskExportURL = srv, cache, export.URL }
	c = h.start()
	export.Set(c)

	// This host plays both ends: a running source whose image this host
	// never fetched, and a live migration's held destination of an
	// instance on img (its own instance, so the two runners do not meet).
	src := h.srv.addAlloc(c.HostID())
	waitState(t, h.srv, src.ID, structs.AllocClientRunning)
	dest := h.srv.addAllocWith(c.HostID(), func(a *structs.Allocation, inst *structs.Instance) {
		a.DesiredState, a.DiskExportToken, inst.ImageID = structs.AllocDesiredHeld, "tok", img.ID
	})
	waitFor(t, "the destination's runner", func() bool { return c.runner(dest.ID) != nil })
	if len(cache.List()) != 0 {
		t.Fatalf("cache before the migration: %+v", cache.List())
	}

	migrate := func(pd *structs.DiskSource) *structs.Allocation {
		t.Helper()
		seq := h.srv.change(src.ID, func(a *structs.Allocation, idx uint64) {
			a.PendingAction, a.ActionArg, a.ActionSeq, a.PrepareDest = structs.ActionLiveMigrate, "qemu+tcp://dest/system", idx, pd
		})
		return waitAction(t, h.srv, src.ID, seq)
	}
	// Refused: the migration fails before the driver is called.
	dead := httptest.NewServer(nil)
	dead.Close()
	for _, pd := range []*structs.DiskSource{
		{AllocID: dest.ID, URL: export.URL, Token: "wrong"},
		{AllocID: dest.ID, URL: dead.URL + diskxfer.MountPath, Token: "tok"},
	} {
		got := migrate(pd)
		if !strings.Contains(got.ActionError, "prepare the destination") || h.fake.Calls("LiveMigrate") != 0 {
			t.Fatalf("unprepared migration via %s: %+v, %d migrations", pd.URL, got, h.fake.Calls("LiveMigrate"))
		}
		if power(h.fake, src.InstanceID) != virt.PowerRunning {
			t.Fatal("the instance left or stopped after a failed prepare")
		}
	}

	got := migrate(&structs.DiskSource{AllocID: dest.ID, URL: export.URL, Token: "tok"})
	if got.ActionError != "" || h.fake.Calls("LiveMigrate") != 1 {
		t.Fatalf("prepared migration: %+v", got)
	}
	to := h.fake.MigrationTarget(src.InstanceID)
	if to.URI != "qemu+tcp://dest/system" || to.ImagePath != cache.Path(img.HashValue) {
		t.Fatalf("migration target %+v, want the cache's file %s", to, cache.Path(img.HashValue))
	}
	if l := cache.List(); len(l) != 1 || !c.ImagesInUse()[img.ID] {
		t.Fatalf("cache after the prepare %+v, in use %v", l, c.ImagesInUse())
	}
}
