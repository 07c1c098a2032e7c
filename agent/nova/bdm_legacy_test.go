package nova

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestLegacyBlockDeviceMapping boots a server with Nova's legacy
// block_device_mapping (what novaclient's --block-device-mapping sends):
// the volume on vda is the root disk, another volume a data disk, a
// no_device entry is ignored; and the legacy format's errors are
// Nova's.
func TestLegacyBlockDeviceMapping(t *testing.T) {
	h, s := newRealHarness(t)
	drv, agent := startStorageHypervisor(t, s, "hv-legacy")
	root := availableVolume(t, s, agent, "root", "/pool/volume-root.qcow2")
	data := availableVolume(t, s, agent, "data", "/pool/volume-data.qcow2")
	bootable := true
	if err := s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: root, Bootable: &bootable}, &structs.SingleVolumeResponse{}); err != nil {
		t.Fatal(err)
	}
	legacy := func(bdms ...map[string]any) map[string]any {
		list := make([]any, len(bdms))
		for i, b := range bdms {
			list[i] = b
		}
		return map[string]any{"server": map[string]any{"name": "legacy", "flavorRef": "1", "block_device_mapping": list}}
	}
	post := func(body map[string]any) *response {
		return h.req("POST", "/compute/v2.1/servers", memberTok, "", body)
	}

	post(legacy(map[string]any{"device_name": "vda"})).
		fault(t, 400, "badRequest", "Block Device Mapping is Invalid: Unrecognized legacy format.")
	post(legacy(map[string]any{"device_name": "vda", "volume_id": root, "boot_index": 0})).
		fault(t, 400, "badRequest", "Additional properties are not allowed ('boot_index' was unexpected)")
	both := legacy(map[string]any{"device_name": "vda", "volume_id": root})
	both["server"].(map[string]any)["block_device_mapping_v2"] = []any{map[string]any{"source_type": "volume", "uuid": root, "boot_index": 0}}
	post(both).fault(t, 400, "badRequest", "Using different block_device_mapping syntaxes is not allowed in the same request.")
	// A volume not on the root device leaves the server nothing to boot.
	post(legacy(map[string]any{"device_name": "/dev/vdb", "volume_id": data})).
		fault(t, 400, "badRequest", "Boot sequence for the instance and image/block device mapping combination is not valid.")
	// v2 entries name their source.
	v2 := bfvServer(map[string]any{"uuid": root, "boot_index": 0})
	post(v2).fault(t, 400, "badRequest", "Block Device Mapping is Invalid: Following fields are invalid: None_id")
	// With an image to boot, no volume may take the root device's name.
	named := map[string]any{"server": map[string]any{"name": "x", "flavorRef": "1", "imageRef": "cirros",
		"block_device_mapping_v2": []any{map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": data, "device_name": "/dev/vda"}}}}
	post(named).fault(t, 400, "badRequest", "The volume cannot be assigned the same device name as the root device vda")

	r := post(legacy(
		map[string]any{"device_name": "/dev/vda", "volume_id": root, "delete_on_termination": "false"},
		map[string]any{"device_name": "vdb", "volume_id": data, "delete_on_termination": "1"},
		map[string]any{"device_name": "vdc", "no_device": true},
	)).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	if rv := drv.RootVolume(id); rv == nil || rv.ID != root {
		t.Fatalf("driver's root volume: %+v", rv)
	}
	if vols := drv.Volumes(id); len(vols) != 1 || vols[0].ID != data {
		t.Fatalf("driver's data volumes: %+v", vols)
	}
	if v := volumeStatus(t, s, root); v.AttachmentOf(id) == nil || v.AttachmentOf(id).Device != "/dev/vda" || v.AttachmentOf(id).DeleteOnTermination {
		t.Fatalf("root volume: %+v", v)
	}
	if v := volumeStatus(t, s, data); v.AttachmentOf(id) == nil || !v.AttachmentOf(id).DeleteOnTermination {
		t.Fatalf("data volume: %+v", v)
	}
}
