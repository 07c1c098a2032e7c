package nova

import (
	"fmt"
	"testing"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/diskxfer/diskxfertest"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// startMovableHost is startFakeHost with a disk export, so that moves
// between such hosts copy the instance's disks.
func startMovableHost(t *testing.T, s *server.Server, name string, capGB int64, addr string) (*fake.Driver, *client.Client) {
	t.Helper()
	drv := fake.New(fake.Config{HostName: name})
	export := diskxfertest.Serve(t)
	cfg := client.Config{NodeName: name, Driver: drv, StorageCapacityGB: capGB, StorageNBDAddress: addr,
		DiskExportURL: export.URL, ImageUploader: uploaderTo(s)}
	// Nothing asks the export for a disk before a move, which starts
	// only once the host is up.
	a := runFakeAgent(t, s, cfg, nil)
	export.Set(a)
	return drv, a
}

// onlyVolume returns the one volume the driver has attached to the
// instance.
func onlyVolume(t *testing.T, drv *fake.Driver, id string) virt.Volume {
	t.Helper()
	got := drv.Volumes(id)
	if len(got) != 1 {
		t.Fatalf("driver's volumes of %s: %+v", id, got)
	}
	return got[0]
}

// TestMigrateKeepsVolumes: a server with a volume attached migrates
// (and reverts, and migrates again) with the volume: each host it runs
// on attaches the storage host's export of the attachment (the storage
// host too, after a move); the volume stays in-use, its attachment on
// the server's host.
func TestMigrateKeepsVolumes(t *testing.T) {
	h, s := newRealHarness(t)
	drv1, hv1 := startMovableHost(t, s, "hv-1", 0, "")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	drvS, hvS := startMovableHost(t, s, "hv-storage", 50, "192.0.2.7:10809")
	vol := createOn(t, s, hvS, "moving")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}).expect(t, 200)
	v := waitVolume(t, s, vol, structs.VolumeInUse)
	attID := v.AttachmentOf(id).ID
	export := virt.NetworkDisk{Protocol: virt.NetworkNBD, Name: structs.VolumeExportName(vol, attID), Hosts: []string{"192.0.2.7:10809"}, TLS: true}
	if got := onlyVolume(t, drv1, id); got.Network == nil || fmt.Sprint(*got.Network) != fmt.Sprint(export) {
		t.Fatalf("attached on hv-1: %+v", got)
	}
	waitServer(h, id, "ACTIVE")

	attachedOn := func(when string, host *client.Client) {
		t.Helper()
		v := waitVolume(t, s, vol, structs.VolumeInUse)
		if att := v.AttachmentOf(id); att == nil || att.ID != attID || att.Host != host.HostID() {
			t.Fatalf("%s: attachment %+v, want on %s", when, att, host.HostID())
		}
	}
	// Onto the storage host: through the export there too (it served
	// the source, which a revert starts again).
	act(h, id, adminTok, "", `{"migrate": null}`).expect(t, 202)
	waitServer(h, id, "VERIFY_RESIZE")
	if got := onlyVolume(t, drvS, id); got.Network == nil || fmt.Sprint(*got.Network) != fmt.Sprint(export) || got.Device != "/dev/sdb" {
		t.Fatalf("attached on the storage host: %+v", got)
	}
	attachedOn("migrated", hvS)
	// A revert runs it on hv-1 again, with the export it had.
	act(h, id, adminTok, "", `{"revertResize": null}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")
	attachedOn("reverted", hv1)
	if got := onlyVolume(t, drv1, id); got.Network == nil || fmt.Sprint(*got.Network) != fmt.Sprint(export) {
		t.Fatalf("attached on hv-1 after the revert: %+v", got)
	}
	// Migrate and confirm: the source's copy goes, the volume stays.
	act(h, id, adminTok, "", `{"migrate": null}`).expect(t, 202)
	waitServer(h, id, "VERIFY_RESIZE")
	act(h, id, adminTok, "", `{"confirmResize": null}`).expect(t, 204)
	waitMigration(h, id, "confirmed")
	attachedOn("confirmed", hvS)
	if got := onlyVolume(t, drvS, id); got.Network == nil || fmt.Sprint(*got.Network) != fmt.Sprint(export) {
		t.Fatalf("attached on the storage host after the confirm: %+v", got)
	}
	if v := waitVolume(t, s, vol, structs.VolumeInUse); !v.AttachmentOf(id).Exported {
		t.Fatalf("the attachment on the storage host does not record its export: %+v", v.AttachmentOf(id))
	}
	// And back to hv-1 over the export, where the os-volume_attachments
	// view still lists it.
	act(h, id, adminTok, "", `{"migrate": null}`).expect(t, 202)
	waitServer(h, id, "VERIFY_RESIZE")
	act(h, id, adminTok, "", `{"confirmResize": null}`).expect(t, 204)
	waitServer(h, id, "ACTIVE")
	attachedOn("back on hv-1", hv1)
	if got := onlyVolume(t, drv1, id); got.Network == nil || fmt.Sprint(*got.Network) != fmt.Sprint(export) {
		t.Fatalf("attached on hv-1 after the second migration: %+v", got)
	}
	list := h.req("GET", base, memberTok, "2.79", nil).expect(t, 200)
	if atts := list.body["volumeAttachments"].([]any); len(atts) != 1 || atts[0].(map[string]any)["volumeId"] != vol {
		t.Fatalf("attachments listed: %s", list.raw)
	}
}

// TestShelveOffloadKeepsVolumes: a server with a volume attached is
// shelved and offloaded (the volume stays in-use, its attachment on no
// host) and unshelved with the volume attached where it lands.
func TestShelveOffloadKeepsVolumes(t *testing.T) {
	h, s := newRealHarnessWith(t, func(c *server.Config) { c.ShelvedOffloadTime = 0 })
	drv1, hv1 := startMovableHost(t, s, "hv-1", 0, "")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	drvS, hvS := startMovableHost(t, s, "hv-storage", 50, "192.0.2.7:10809")
	vol := createOn(t, s, hvS, "shelved")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}).expect(t, 200)
	waitVolume(t, s, vol, structs.VolumeInUse)
	waitServer(h, id, "ACTIVE")

	act(h, id, memberTok, "", `{"shelve": null}`).expect(t, 202)
	waitServer(h, id, "SHELVED_OFFLOADED")
	v := waitVolume(t, s, vol, structs.VolumeInUse)
	if att := v.AttachmentOf(id); att == nil || att.Host != "" {
		t.Fatalf("offloaded: attachment %+v", att)
	}
	if got := drv1.Volumes(id); len(got) != 0 {
		t.Fatalf("the offloaded guest still has volumes on hv-1: %+v", got)
	}
	act(h, id, memberTok, "", `{"unshelve": null}`).expect(t, 202)
	srv := waitServer(h, id, "ACTIVE")
	v = waitVolume(t, s, vol, structs.VolumeInUse)
	att := v.AttachmentOf(id)
	host, drv := hv1, drv1
	if srv["OS-EXT-SRV-ATTR:host"] == "hv-storage" {
		host, drv = hvS, drvS
	}
	if got := onlyVolume(t, drv, id); got.ID != vol {
		t.Fatalf("unshelved with %+v", got)
	}
	if att == nil || att.Host != host.HostID() {
		t.Fatalf("unshelved on %v: attachment %+v", srv["OS-EXT-SRV-ATTR:host"], att)
	}
}

// TestLiveMigrateKeepsVolumes: a server with a volume attached through
// its storage host's export live-migrates with it, still in-use, the
// attachment on the new host.
func TestLiveMigrateKeepsVolumes(t *testing.T) {
	h, s := newRealHarness(t)
	_, hv1 := startMovableHost(t, s, "hv-1", 0, "")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	drvS, hvS := startMovableHost(t, s, "hv-storage", 50, "192.0.2.7:10809")
	vol := createOn(t, s, hvS, "live")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}).expect(t, 200)
	waitVolume(t, s, vol, structs.VolumeInUse)
	waitServer(h, id, "ACTIVE")

	act(h, id, adminTok, "2.30", `{"os-migrateLive": {"host": "hv-storage", "block_migration": "auto"}}`).expect(t, 202)
	waitFor(t, "on hv-storage", func() error {
		if s := waitServer(h, id, "ACTIVE"); s["OS-EXT-SRV-ATTR:host"] != "hv-storage" {
			return fmt.Errorf("on %v", s["OS-EXT-SRV-ATTR:host"])
		}
		return nil
	})
	v := waitVolume(t, s, vol, structs.VolumeInUse)
	if att := v.AttachmentOf(id); att == nil || att.Host != hvS.HostID() || !att.Exported || att.MoveHost != "" {
		t.Fatalf("live-migrated: attachment %+v (hv-1 is %s)", att, hv1.HostID())
	}
	if got := onlyVolume(t, drvS, id); got.Network == nil || got.Network.Name != structs.VolumeExportName(vol, v.AttachmentOf(id).ID) {
		t.Fatalf("attached on the destination: %+v", got)
	}
}
