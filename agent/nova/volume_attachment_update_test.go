package nova

import (
	"fmt"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt"
)

// TestVolumeAttachmentUpdate drives Nova 2.85's PUT that names the
// attached volume itself: a member changes delete_on_termination (seen
// in the attachment views, and by the purge that deletes the volume
// with the server); the other fields of the view may be given but not
// changed (Nova's 400s); a volume not attached is Nova's 404; naming
// another volume is a swap, which needs the swap rule (403 for a
// member) and, for an admin, applies the update before swapping.
func TestVolumeAttachmentUpdate(t *testing.T) {
	h, s := newRealHarness(t)
	drv, agent := startStorageHypervisor(t, s, "hv-up")
	id := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	volA := availableVolume(t, s, agent, "a", "/pool/volume-a.qcow2")
	volB := availableVolume(t, s, agent, "b", "/pool/volume-b.qcow2")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": volA, "tag": "data"}}).expect(t, 200)
	waitVolume(t, s, volA, structs.VolumeInUse)
	waitServer(h, id, "ACTIVE")

	put := func(tok, version, vol string, body map[string]any) *response {
		return h.req("PUT", base+"/"+vol, tok, version, map[string]any{"volumeAttachment": body})
	}
	show := func() map[string]any {
		return h.req("GET", base+"/"+volA, memberTok, "2.85", nil).expect(t, 200).obj("volumeAttachment")
	}
	put(memberTok, "2.85", volA, map[string]any{"volumeId": volA, "delete_on_termination": true}).expect(t, 202)
	if got := show()["delete_on_termination"]; got != true {
		t.Fatalf("delete_on_termination after the update: %v", got)
	}
	// The view's own values may be given back.
	put(memberTok, "2.85", volA, map[string]any{"volumeId": volA, "id": volA, "serverId": id, "device": "/dev/sdb",
		"tag": "data", "delete_on_termination": "false"}).expect(t, 202)
	if got := show()["delete_on_termination"]; got != false {
		t.Fatalf("delete_on_termination after the second update: %v", got)
	}
	other := "6f0c5f1c-3b86-4d7c-9d6e-0d3f4a1b2c3d"
	for field, value := range map[string]any{"id": other, "serverId": other, "device": "/dev/sdc", "tag": "other"} {
		put(memberTok, "2.85", volA, map[string]any{"volumeId": volA, field: value}).
			fault(t, 400, "badRequest", fmt.Sprintf("The %s property is not mutable", field))
	}
	put(memberTok, "2.85", volA, map[string]any{"volumeId": volA, "device": nil}).
		fault(t, 400, "badRequest", "The device property is not mutable")
	put(memberTok, "2.85", volA, map[string]any{"volumeId": volA, "bogus": 1}).expect(t, 400)
	put(memberTok, "2.85", volB, map[string]any{"volumeId": volB, "delete_on_termination": true}).
		fault(t, 404, "itemNotFound", "No volume Block Device Mapping with id "+volB+".")
	// Before 2.85 every PUT is a swap, an admin's; from 2.85 a swap
	// still is.
	put(memberTok, "2.84", volA, map[string]any{"volumeId": volA}).expect(t, 403)
	put(memberTok, "2.85", volA, map[string]any{"volumeId": volB}).
		fault(t, 403, "forbidden", "Policy doesn't allow os_compute_api:os-volumes-attachments:swap to be performed.")

	put(adminTok, "2.85", volA, map[string]any{"volumeId": volB, "delete_on_termination": true}).expect(t, 202)
	v := waitVolume(t, s, volB, structs.VolumeInUse)
	if att := v.AttachmentOf(id); att == nil || !att.DeleteOnTermination || att.Tag != "data" || att.Device != "/dev/sdb" {
		t.Fatalf("the new volume's attachment: %+v", v.Attachments)
	}
	waitVolume(t, s, volA, structs.VolumeAvailable)
	if got := drv.Volumes(id); len(got) != 1 || got[0].ID != volB {
		t.Fatalf("driver's volumes after the swap: %+v", got)
	}
	waitServer(h, id, "ACTIVE")
}

// TestVolumeSwapAcrossHosts swaps a server's volume onto one kept on
// another storage host: the server's agent copies onto that host's NBD
// export of the new attachment (with TLS), and a swap back moves the
// disk onto a file of its own host again. A storage host that serves no
// NBD exports is refused with a 400, as its attaches are.
func TestVolumeSwapAcrossHosts(t *testing.T) {
	h, s := newRealHarness(t)
	drv, local := startFakeHost(t, s, "hv-1", 2, "")
	id := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"
	near := createOn(t, s, local, "near")
	back := createOn(t, s, local, "back")
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": near}}).expect(t, 200)
	waitVolume(t, s, near, structs.VolumeInUse)
	waitServer(h, id, "ACTIVE")
	swap := func(old, nv string) *response {
		return h.req("PUT", base+"/"+old, adminTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": nv}})
	}

	_, plain := startFakeHost(t, s, "hv-plain", 1, "")
	unserved := createOn(t, s, plain, "unserved")
	swap(near, unserved).fault(t, 400, "badRequest", "Invalid volume: volume "+unserved+
		" is kept on another host than the instance, and its storage host serves no NBD exports (storage nbd_address)")

	_, farHost := startFakeHost(t, s, "hv-nbd", 50, "192.0.2.7:10809")
	far := createOn(t, s, farHost, "far")
	swap(near, far).expect(t, 202)
	v := waitVolume(t, s, far, structs.VolumeInUse)
	waitVolume(t, s, near, structs.VolumeAvailable)
	att := v.AttachmentOf(id)
	want := virt.NetworkDisk{Protocol: virt.NetworkNBD, Name: structs.VolumeExportName(far, att.ID), Hosts: []string{"192.0.2.7:10809"}, TLS: true}
	got := drv.Volumes(id)
	if len(got) != 1 || got[0].ID != far || got[0].Path != "" || got[0].Network == nil || fmt.Sprint(*got[0].Network) != fmt.Sprint(want) {
		t.Fatalf("driver's volumes after the swap onto another host: %+v", got)
	}
	waitServer(h, id, "ACTIVE")

	swap(far, back).expect(t, 202)
	waitVolume(t, s, back, structs.VolumeInUse)
	if v := waitVolume(t, s, far, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("the NBD volume keeps attachments: %+v", v.Attachments)
	}
	if got := drv.Volumes(id); len(got) != 1 || got[0].ID != back || got[0].Path != "/pool/volume-back.qcow2" || got[0].Network != nil {
		t.Fatalf("driver's volumes after the swap back: %+v", got)
	}
}

// TestVolumeSwapOfTheRootVolume: Nova lets an admin swap the volume a
// server booted from; the agent's driver moves the root disk onto the
// new volume (a file of the server's host), which the server's
// attachments then list as /dev/vda, while a volume of another host is
// refused for the root disk (a spawn boots only from a file of its
// host).
func TestVolumeSwapOfTheRootVolume(t *testing.T) {
	h, s := newRealHarness(t)
	drv, agent := startStorageHypervisor(t, s, "hv-rs")
	reportVolumesMade(t, s, agent)
	root := availableVolume(t, s, agent, "root", "/pool/volume-root.qcow2")
	bootable := true
	if err := s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: root, Bootable: &bootable}, &structs.SingleVolumeResponse{}); err != nil {
		t.Fatal(err)
	}
	id := h.req("POST", "/compute/v2.1/servers", memberTok, "2.79", withNetworks(bfvServer(
		map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": root, "boot_index": "0"},
	))).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"
	swap := func(old, nv string) *response {
		return h.req("PUT", base+"/"+old, adminTok, "2.85", map[string]any{"volumeAttachment": map[string]any{"volumeId": nv}})
	}

	// The next volume is made before the other host exists, so it lands
	// here.
	next := availableVolume(t, s, agent, "next", "/pool/volume-next.qcow2")
	_, farHost := startFakeHost(t, s, "hv-nbd", 50, "192.0.2.7:10809")
	far := createOn(t, s, farHost, "far")
	swap(root, far).fault(t, 400, "badRequest", "Invalid volume: volume "+root+
		" is the instance's root volume, which can be swapped only onto a volume kept as a file on the instance's host")

	swap(root, next).expect(t, 202)
	waitVolume(t, s, next, structs.VolumeInUse)
	waitVolume(t, s, root, structs.VolumeAvailable)
	if rv := drv.RootVolume(id); rv == nil || rv.ID != next || rv.Path != "/pool/volume-next.qcow2" {
		t.Fatalf("driver's root volume after the swap: %+v", rv)
	}
	waitServer(h, id, "ACTIVE")
	att := h.req("GET", base+"/"+next, memberTok, "2.85", nil).expect(t, 200).obj("volumeAttachment")
	if att["device"] != "/dev/vda" {
		t.Fatalf("the new root volume's attachment: %v", att)
	}
	h.req("DELETE", base+"/"+next, memberTok, "", nil).fault(t, 400, "badRequest", "Cannot detach a root device volume")
}
