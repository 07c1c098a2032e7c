package nova

import (
	"fmt"
	"testing"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// TestBootFromAVolumeOfAnotherHost: a server booted from a volume of a
// storage host that serves NBD is placed by the scheduler (no pin), and
// boots from the storage host's export of the root attachment (TLS) on
// whichever host it lands; it migrates, live-migrates, shelves
// (offloaded at once, no image) and unshelves with the root volume, in
// use throughout, its attachment on the server's host, and the volume
// is available again once the server is deleted.
func TestBootFromAVolumeOfAnotherHost(t *testing.T) {
	h, s := newRealHarnessWith(t, func(c *server.Config) { c.ShelvedOffloadTime = 0 })
	drvS, hvS := startMovableHost(t, s, "hv-storage", 50, "192.0.2.7:10809")
	drv1, hv1 := startMovableHost(t, s, "hv-1", 0, "")
	drivers := map[string]*fake.Driver{"hv-storage": drvS, "hv-1": drv1}
	agents := map[string]*client.Client{"hv-storage": hvS, "hv-1": hv1}
	vol := createOn(t, s, hvS, "root")
	bootable := true
	if err := s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: vol, Bootable: &bootable}, &structs.SingleVolumeResponse{}); err != nil {
		t.Fatal(err)
	}
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "2.37", withNetworks(bfvServer(
		map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": vol, "boot_index": 0}))).expect(t, 202)
	id := r.obj("server")["id"].(string)
	var got structs.SingleInstanceResponse
	if err := s.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &got); err != nil || got.Instance.TargetHostID != "" {
		t.Fatalf("the server is pinned to %q: %v", got.Instance.TargetHostID, err)
	}

	// bootsOn checks that the server runs on its host from the root
	// attachment's export, the attachment there, and returns the host.
	bootsOn := func(when, status string) string {
		t.Helper()
		srv := waitServer(h, id, status)
		name, _ := srv["OS-EXT-SRV-ATTR:host"].(string)
		drv, agent := drivers[name], agents[name]
		if drv == nil {
			t.Fatalf("%s: on host %q", when, name)
		}
		v := waitVolume(t, s, vol, structs.VolumeInUse)
		att := v.AttachmentOf(id)
		if att == nil || att.Host != agent.HostID() || !att.Exported || att.Device != "/dev/vda" {
			t.Fatalf("%s: attachment %+v, want on %s through the export", when, att, name)
		}
		want := virt.NetworkDisk{Protocol: virt.NetworkNBD, Name: structs.VolumeExportName(vol, att.ID), Hosts: []string{"192.0.2.7:10809"}, TLS: true}
		if rv := drv.RootVolume(id); rv == nil || rv.Path != "" || rv.Network == nil || fmt.Sprint(*rv.Network) != fmt.Sprint(want) {
			t.Fatalf("%s: the driver's root volume on %s: %+v", when, name, rv)
		}
		return name
	}
	other := func(name string) string {
		if name == "hv-1" {
			return "hv-storage"
		}
		return "hv-1"
	}
	first := bootsOn("created", "ACTIVE")

	act(h, id, adminTok, "", `{"migrate": null}`).expect(t, 202)
	if on := bootsOn("migrated", "VERIFY_RESIZE"); on != other(first) {
		t.Fatalf("migrated to %s", on)
	}
	act(h, id, adminTok, "", `{"confirmResize": null}`).expect(t, 204)
	waitMigration(h, id, "confirmed")
	bootsOn("confirmed", "ACTIVE")
	waitFor(t, "the source's copy gone", func() error {
		if rv := drivers[first].RootVolume(id); rv != nil {
			return fmt.Errorf("still on %s: %+v", first, rv)
		}
		return nil
	})

	act(h, id, adminTok, "2.30", fmt.Sprintf(`{"os-migrateLive": {"host": %q, "block_migration": "auto"}}`, first)).expect(t, 202)
	waitFor(t, "live-migrated back", func() error {
		if srv := waitServer(h, id, "ACTIVE"); srv["OS-EXT-SRV-ATTR:host"] != first {
			return fmt.Errorf("on %v", srv["OS-EXT-SRV-ATTR:host"])
		}
		return nil
	})
	bootsOn("live-migrated", "ACTIVE")

	act(h, id, memberTok, "", `{"shelve": null}`).expect(t, 202)
	waitServer(h, id, "SHELVED_OFFLOADED")
	if att := waitVolume(t, s, vol, structs.VolumeInUse).AttachmentOf(id); att == nil || att.Host != "" {
		t.Fatalf("offloaded: attachment %+v", att)
	}
	if err := s.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &got); err != nil || got.Instance.SystemMetadata["shelved_image_id"] != "" {
		t.Fatalf("shelving a volume-backed server made an image: %v %v", got.Instance.SystemMetadata, err)
	}
	act(h, id, memberTok, "", `{"unshelve": null}`).expect(t, 202)
	bootsOn("unshelved", "ACTIVE")

	h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, 204)
	waitServer(h, id, "SOFT_DELETED")
	act(h, id, memberTok, "", `{"forceDelete": null}`).expect(t, 202)
	if v := waitVolume(t, s, vol, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("root volume after the server's delete: %+v", v)
	}
}

// TestBootFromVolumesOfSeveralHosts: a server's volumes may be kept on
// several storage hosts when every one serves NBD (each reached through
// its export); a volume of a storage host without NBD pins the server to
// that host, with its file, and then every volume must be kept there
// (400 otherwise).
func TestBootFromVolumesOfSeveralHosts(t *testing.T) {
	h, s := newRealHarness(t)
	_, hvA := startFakeHost(t, s, "hv-nbd-a", 50, "192.0.2.7:10809")
	_, hvB := startFakeHost(t, s, "hv-nbd-b", 50, "192.0.2.8:10809")
	drvL, hvL := startFakeHost(t, s, "hv-local", 50, "")
	on := func(a *client.Client, name string) string {
		t.Helper()
		var resp structs.SingleVolumeResponse
		if err := s.RPC("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p-demo", Host: a.HostID(),
			Volume: &structs.Volume{Name: name, SizeGB: 1}}, &resp); err != nil {
			t.Fatal(err)
		}
		reportBuilt(t, s, a, resp.Volume.ID, "/pool/volume-"+name+".qcow2")
		bootable := true
		if err := s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: resp.Volume.ID, Bootable: &bootable}, &structs.SingleVolumeResponse{}); err != nil {
			t.Fatal(err)
		}
		return resp.Volume.ID
	}
	create := func(root, data string) *response {
		t.Helper()
		return h.req("POST", "/compute/v2.1/servers", memberTok, "2.37", withNetworks(bfvServer(
			map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": root, "boot_index": 0},
			map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": data})))
	}
	pinned := func(id string) string {
		t.Helper()
		var got structs.SingleInstanceResponse
		if err := s.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &got); err != nil {
			t.Fatal(err)
		}
		return got.Instance.TargetHostID
	}

	// Two NBD storage hosts: unpinned, both volumes through exports.
	rootA, dataB := on(hvA, "root-a"), on(hvB, "data-b")
	id := create(rootA, dataB).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	if p := pinned(id); p != "" {
		t.Fatalf("volumes of two NBD hosts pinned the server to %s", p)
	}
	for _, vol := range []string{rootA, dataB} {
		if att := waitVolume(t, s, vol, structs.VolumeInUse).AttachmentOf(id); att == nil || !att.Exported {
			t.Fatalf("volume %s: attachment %+v", vol, att)
		}
	}

	// A volume of a host without NBD with one of another host: refused.
	rootL, dataA := on(hvL, "root-l"), on(hvA, "data-a")
	create(rootL, dataA).fault(t, 400, "badRequest", "Invalid volume: volume "+rootL+" is kept on a storage host that serves no NBD exports (storage nbd_address), so the server must run there, and its other volumes must be kept on that host too")
	if v := waitVolume(t, s, rootL, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("the refused create attached %+v", v.Attachments)
	}

	// Both on that host: pinned there, its files.
	dataL := on(hvL, "data-l")
	id = create(rootL, dataL).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	if p := pinned(id); p != hvL.HostID() {
		t.Fatalf("pinned to %q, want hv-local", p)
	}
	if rv := drvL.RootVolume(id); rv == nil || rv.Path != "/pool/volume-root-l.qcow2" || rv.Network != nil {
		t.Fatalf("root volume on hv-local: %+v", rv)
	}
}
