package libvirt_test

import (
	"errors"
	"net/url"
	"slices"
	"testing"

	golibvirt "github.com/digitalocean/go-libvirt"

	"github.com/stratus-cloud/stratus/internal/libvirtpeer"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/libvirt"
)

// TestLiveMigrateToPeer migrates a running domain between two real
// libvirtds: the machine's own (A) and a peer started for the test
// (scripts/libvirt-peer.sh, B) that shares its filesystem. Afterwards it
// runs on B with the same instance metadata, is gone from A, and B's
// driver manages it (List, GetInfo, console, Destroy).
func TestLiveMigrateToPeer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *libvirt.Config) {
		c.MigrationURI = testURI
		c.SharedStorage = true
	})
	peer := libvirtpeer.Start(t)
	peerURI := peer.URI
	bcfg := e.cfg
	bcfg.URI, bcfg.MigrationURI, bcfg.HostName = peerURI, peerURI, "peer-"+e.ns
	b, err := libvirt.New(bcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })

	spec := tinySpec("mig")
	spec.Name = "migrant"
	if _, err := e.drv.Spawn(ctx(t), spec); err != nil {
		t.Fatal(err)
	}
	name := e.drv.DomainName("mig")
	if err := e.drv.LiveMigrate(ctx(t), "mig", peerURI); err != nil {
		t.Fatalf("LiveMigrate to the peer: %v", err)
	}

	// Gone from A.
	if _, err := e.drv.GetInfo(ctx(t), "mig"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("GetInfo on A after the migration = %v, want ErrNotFound", err)
	}
	if ids, err := e.drv.ListInstances(ctx(t)); err != nil || len(ids) != 0 {
		t.Errorf("A lists %v, %v after the migration, want none", ids, err)
	}
	if st := domainState(t, e.raw, name); st != -1 {
		t.Errorf("domain %s still on A in state %d", name, st)
	}

	// Running on B, with its metadata.
	info, err := b.GetInfo(ctx(t), "mig")
	if err != nil {
		t.Fatalf("GetInfo on B: %v", err)
	}
	if info.PowerState != virt.PowerRunning || info.DriverRef != name {
		t.Errorf("B's info = %+v, want RUNNING %s", info, name)
	}
	if ids, err := b.ListInstances(ctx(t)); err != nil || !slices.Equal(ids, []string{"mig"}) {
		t.Errorf("B lists %v, %v, want [mig]", ids, err)
	}
	braw := rawConnTo(t, peerURI)
	x := domainXML(t, braw, name, 0)
	if x.Title != "migrant" || x.Metadata == nil || x.Metadata.XML == "" {
		t.Errorf("domain on B: title %q, metadata %v", x.Title, x.Metadata)
	}
	if _, err := b.ConsoleOutput(ctx(t), "mig", 10); err != nil {
		t.Errorf("ConsoleOutput on B: %v", err)
	}
	if _, err := b.Spawn(ctx(t), spec); err != nil {
		t.Errorf("Spawn on B of the migrated instance (an agent re-attaching) = %v", err)
	}
	if ids, _ := b.ListInstances(ctx(t)); len(ids) != 1 {
		t.Errorf("B lists %v after a second Spawn, want one instance", ids)
	}

	// And back to A, the way B's libvirtd reaches A.
	if err := b.LiveMigrate(ctx(t), "mig", peer.HostURI); err != nil {
		t.Fatalf("LiveMigrate back to A: %v", err)
	}
	if _, err := b.GetInfo(ctx(t), "mig"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("GetInfo on B after the migration back = %v, want ErrNotFound", err)
	}
	if info, err := e.drv.GetInfo(ctx(t), "mig"); err != nil || info.PowerState != virt.PowerRunning {
		t.Fatalf("GetInfo on A after the migration back = %+v, %v", info, err)
	}
	if err := e.drv.Destroy(ctx(t), "mig"); err != nil {
		t.Fatalf("Destroy on A: %v", err)
	}
	if _, err := e.drv.GetInfo(ctx(t), "mig"); !errors.Is(err, virt.ErrNotFound) {
		t.Errorf("GetInfo on A after Destroy = %v", err)
	}
	if vols := volumeNames(t, e.raw, e.drv.PoolName()); len(vols) != 0 {
		t.Errorf("volumes left after Destroy: %v", vols)
	}
}

// rawConnTo is a connection of the test's own to the libvirtd at uri.
func rawConnTo(t *testing.T, uri string) *golibvirt.Libvirt {
	t.Helper()
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	lv, err := golibvirt.ConnectToURI(u)
	if err != nil {
		t.Fatalf("connect to %s: %v", uri, err)
	}
	t.Cleanup(func() { _ = lv.Disconnect() })
	return lv
}
