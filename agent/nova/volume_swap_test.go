package nova

import (
	"errors"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestVolumeSwapAgainstARealServer swaps a server's attached volume for
// another through a real server and a fake hypervisor agent that keeps
// the pool: Nova's refusals first (a member, a missing new volume, an
// old one not attached, a new one attached, a field besides volumeId
// before 2.85), then the swap, which the
// agent's driver carries out under the same device, leaving the new
// volume in-use and the old one available; a stopped server refuses
// with 409.
func TestVolumeSwapAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t)
	drv, agent := startStorageHypervisor(t, s, "hv-sw")
	id := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	volA := availableVolume(t, s, agent, "a", "/pool/volume-a.qcow2")
	volB := availableVolume(t, s, agent, "b", "/pool/volume-b.qcow2")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": volA}}).expect(t, 200)
	waitVolume(t, s, volA, structs.VolumeInUse)
	waitServer(h, id, "ACTIVE")

	swap := func(tok, old, nv string) *response {
		return h.req("PUT", base+"/"+old, tok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": nv}})
	}
	swap(memberTok, volA, volB).expect(t, 403)
	missing := "6f0c5f1c-3b86-4d7c-9d6e-0d3f4a1b2c3d"
	swap(adminTok, volA, missing).fault(t, 400, "badRequest", "Volume "+missing+" could not be found.")
	swap(adminTok, missing, volB).fault(t, 404, "itemNotFound", "Volume "+missing+" could not be found.")
	swap(adminTok, volB, volA).fault(t, 400, "badRequest", "Invalid volume: Old volume is attached to a different instance.")
	swap(adminTok, volA, volA).fault(t, 400, "badRequest", "Invalid volume: New volume must be detached in order to swap.")
	h.req("PUT", base+"/"+volA, adminTok, "2.79", map[string]any{"volumeAttachment": map[string]any{}}).expect(t, 400)
	// Before 2.85 the body names the new volume and nothing else.
	h.req("PUT", base+"/"+volA, adminTok, "2.84", map[string]any{"volumeAttachment": map[string]any{
		"volumeId": volB, "delete_on_termination": true}}).expect(t, 400)

	// A copy that fails leaves both volumes where they were.
	drv.FailNext("SwapVolume", errors.New("block copy failed"))
	swap(adminTok, volA, volB).expect(t, 202)
	if v := waitVolume(t, s, volB, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("the new volume keeps the failed swap's attachment: %+v", v.Attachments)
	}
	waitVolume(t, s, volA, structs.VolumeInUse)
	if got := drv.Volumes(id); len(got) != 1 || got[0].ID != volA {
		t.Fatalf("driver's volumes after a failed swap: %+v", got)
	}
	waitServer(h, id, "ACTIVE")

	swap(adminTok, volA, volB).expect(t, 202)
	waitVolume(t, s, volB, structs.VolumeInUse)
	if v := waitVolume(t, s, volA, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("the old volume keeps attachments: %+v", v.Attachments)
	}
	if got := drv.Volumes(id); len(got) != 1 || got[0].ID != volB || got[0].Path != "/pool/volume-b.qcow2" || got[0].Device != "/dev/sdb" {
		t.Fatalf("driver's volumes after the swap: %+v", got)
	}
	waitServer(h, id, "ACTIVE")
	list := h.req("GET", base, memberTok, "2.79", nil).expect(t, 200).list("volumeAttachments")
	if len(list) != 1 || list[0].(map[string]any)["volumeId"] != volB || list[0].(map[string]any)["device"] != "/dev/sdb" {
		t.Fatalf("attachments after the swap: %v", list)
	}

	act(h, id, memberTok, "", `{"os-stop": null}`).expect(t, 202)
	waitServer(h, id, "SHUTOFF")
	swap(adminTok, volB, volA).fault(t, 409, "conflictingRequest", "Cannot 'swap_volume' instance "+id+" while it is in vm_state stopped")
}
