package nova

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestRescueImageChecksAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t, "hv-1")
	img := func(id, owner, vis string, props map[string]string) *structs.Image {
		return registerImage(t, s, &structs.Image{ID: id, Name: "rescue-" + id[:1], Visibility: vis, Owner: owner,
			DiskFormat: "qcow2", ContainerFormat: "bare", Properties: props})
	}
	stable := img("40000000-0000-0000-0000-000000000001", "p-admin", structs.ImagePublic,
		map[string]string{"hw_rescue_bus": "usb", "hw_rescue_device": "disk"})
	snapshot := img("40000000-0000-0000-0000-000000000002", "p-demo", structs.ImagePrivate,
		map[string]string{"img_block_device_mapping": `[{"source_type": "snapshot"}]`})
	theirs := img("40000000-0000-0000-0000-000000000003", "p-other", structs.ImagePrivate, nil)
	const missing = "40000000-0000-0000-0000-00000000dead"

	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": stable.ID, "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	rescue := func(version, ref string) *response {
		t.Helper()
		return act(h, id, memberTok, version, map[string]any{"rescue": map[string]any{"rescue_image_ref": ref}})
	}
	rescue("", "not-a-uuid").fault(t, 400, "badRequest", "'not-a-uuid' is not a 'uuid'")
	for _, ref := range []string{missing, snapshot.ID, theirs.ID} {
		rescue("2.87", ref).fault(t, 400, "badRequest", "Requested rescue image '"+ref+"' is not supported")
	}
	// The lock and the state come before the image.
	act(h, id, adminTok, "", `{"lock": null}`).expect(t, 202)
	rescue("2.87", missing).fault(t, 409, "conflictingRequest", "Instance "+id+" is locked")
	act(h, id, adminTok, "", `{"unlock": null}`).expect(t, 202)
	act(h, id, memberTok, "", `{"pause": null}`).expect(t, 202)
	waitServer(h, id, "PAUSED")
	rescue("2.87", missing).fault(t, 409, "conflictingRequest", "Cannot 'rescue' instance "+id+" while it is in vm_state paused")
	act(h, id, memberTok, "", `{"unpause": null}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")

	// A stable-rescue image rescues an image-backed server at any version.
	if r := rescue("2.87", stable.ID).expect(t, 200); r.body["adminPass"] == "" {
		t.Fatalf("rescue answer %s", r.raw)
	}
	waitServer(h, id, "RESCUE")
	rescue("2.87", stable.ID).fault(t, 409, "conflictingRequest", "Cannot 'rescue' instance "+id+" while it is in vm_state rescued")
	act(h, id, memberTok, "", `{"unrescue": null}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")
}

// A server without an image looks volume-backed, and Nova rescues
// those only with stable rescue (2.87) and the rescue properties.
func TestRescueOfAnImagelessServer(t *testing.T) {
	h, _ := newActionHarness(t)
	_, mine, _ := addHostAndServers(h)
	h.rpc.hosts[mine.HostID].Capabilities = []string{structs.HostCapabilityRescue}
	h.setInst(mine.ID, func(i *structs.Instance) {
		i.ImageID, i.VMState, i.ImageProperties = "", structs.VMStateActive, nil
	})
	refused := "Instance " + mine.ID + " cannot be rescued: Cannot rescue a volume-backed instance"
	act(h, mine.ID, memberTok, "2.86", `{"rescue": null}`).fault(t, 400, "badRequest", refused)
	act(h, mine.ID, memberTok, "2.87", `{"rescue": null}`).fault(t, 400, "badRequest", refused)
	h.setInst(mine.ID, func(i *structs.Instance) {
		i.ImageProperties = map[string]string{"hw_rescue_bus": "virtio", "hw_rescue_device": "disk"}
	})
	act(h, mine.ID, memberTok, "2.86", `{"rescue": null}`).fault(t, 400, "badRequest", refused)
	h.rpc.hosts[mine.HostID].Capabilities = nil
	act(h, mine.ID, memberTok, "2.87", `{"rescue": null}`).
		fault(t, 400, "badRequest", "Instance "+mine.ID+" cannot be rescued: Host unable to rescue a volume-backed instance")
	h.rpc.hosts[mine.HostID].Capabilities = []string{structs.HostCapabilityRescue}
	act(h, mine.ID, memberTok, "2.87", `{"rescue": null}`).expect(t, 200)
	if args := lastTask(h); args.Op != structs.OpRescue {
		t.Fatalf("rescue task %+v", args)
	}
}
