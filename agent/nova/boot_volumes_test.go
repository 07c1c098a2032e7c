package nova

import (
	"fmt"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// reportVolumesMade stands in for the storage agent of a host whose
// agent runs without a pool directory: every volume a server create
// made there is reported available, with its file at
// /pool/volume-<id>.qcow2. Volumes the test creates itself are left to
// it (availableVolume, createOn), so the two never race to report one.
func reportVolumesMade(t *testing.T, s *server.Server, a *client.Client) {
	t.Helper()
	ctx := t.Context()
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var out structs.VolumeListResponse
			if err := s.RPC("Volume.List", &structs.VolumeListRequest{}, &out); err != nil {
				continue
			}
			for _, v := range out.Volumes {
				if v.Status != structs.VolumeCreating || v.Host == "" || v.MadeFor == nil {
					continue
				}
				path := "/pool/volume-" + v.ID + ".qcow2"
				_ = s.RPC("Volume.Report", &structs.VolumeReportRequest{HostID: v.Host, Update: &structs.VolumeUpdateEntry{
					ID: v.ID, FromStatus: []string{structs.VolumeCreating}, Status: structs.VolumeAvailable, ProviderLocation: &path},
					WriteRequest: structs.WriteRequest{AuthToken: a.NodeSecret()}}, &structs.GenericResponse{})
			}
		}
	}()
}

// withNetworks adds networks "none", which 2.37 and later require.
func withNetworks(body map[string]any) map[string]any {
	body["server"].(map[string]any)["networks"] = "none"
	return body
}

func bfvServer(bdms ...map[string]any) map[string]any {
	list := make([]any, len(bdms))
	for i, b := range bdms {
		list[i] = b
	}
	return map[string]any{"server": map[string]any{"name": "bfv", "flavorRef": "1", "block_device_mapping_v2": list}}
}

// TestBootFromVolumeValidation: the mappings Nova refuses before
// anything is made get Nova's 400s.
func TestBootFromVolumeValidation(t *testing.T) {
	h, s := newRealHarness(t)
	_, agent := startStorageHypervisor(t, s, "hv-bfv-bad")
	vol := availableVolume(t, s, agent, "plain", "/pool/volume-plain.qcow2")
	missing := "6f0c5f1c-3b86-4d7c-9d6e-0d3f4a1b2c3d"
	post := func(body map[string]any) *response {
		return h.req("POST", "/compute/v2.1/servers", memberTok, "2.1", body)
	}
	post(bfvServer(map[string]any{"source_type": "image", "destination_type": "volume", "uuid": missing, "boot_index": 0})).
		fault(t, 400, "badRequest", "Block Device Mapping is Invalid: Images with destination_type 'volume' need to have a non-zero size specified")
	post(bfvServer(map[string]any{"source_type": "blank", "destination_type": "volume", "boot_index": 0})).
		fault(t, 400, "badRequest", "Block Device Mapping is Invalid: Blank volumes (source: 'blank', dest: 'volume') need to have non-zero size")
	post(bfvServer(map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": missing, "boot_index": 0})).
		fault(t, 400, "badRequest", "Block Device Mapping is Invalid: failed to get volume "+missing+".")
	post(bfvServer(map[string]any{"source_type": "snapshot", "destination_type": "volume", "uuid": missing, "boot_index": 0})).
		fault(t, 400, "badRequest", "Block Device Mapping is Invalid: failed to get snapshot "+missing+".")
	post(bfvServer(map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": vol, "boot_index": 0})).
		fault(t, 400, "badRequest", "Block Device "+vol+" is not bootable.")
	post(bfvServer(map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": vol, "boot_index": 1})).
		fault(t, 400, "badRequest", "Block Device Mapping is Invalid: Boot sequence for the instance and image/block device mapping combination is not valid.")
	h.req("POST", "/compute/v2.1/servers", memberTok, "2.67", withNetworks(bfvServer(map[string]any{
		"source_type": "volume", "destination_type": "volume", "uuid": vol, "volume_type": "x", "boot_index": 0}))).
		fault(t, 400, "badRequest", "Block Device Mapping is Invalid: Specifying volume type to existing volume is not supported.")
	multi := bfvServer(map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": vol, "boot_index": 0})
	multi["server"].(map[string]any)["min_count"] = 2
	post(multi).fault(t, 400, "badRequest", "Cannot attach one or more volumes to multiple instances")
	if v := volumeStatus(t, s, vol); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 {
		t.Fatalf("a refused create touched the volume: %+v", v)
	}
}

// TestBootFromVolumeAgainstARealServer boots servers from an existing
// bootable volume and with a blank data volume made for them, through a
// real server and a fake hypervisor that keeps the volumes: the root
// volume is the driver's root disk and in-use as /dev/vda, the data
// volume is attached from the first boot, the server shows no image and
// lists both, the root volume cannot be detached, and deleting the
// server keeps the volumes unless delete_on_termination asked
// otherwise.
func TestBootFromVolumeAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t)
	drv, agent := startStorageHypervisor(t, s, "hv-bfv")
	reportVolumesMade(t, s, agent)
	root := availableVolume(t, s, agent, "root", "/pool/volume-root.qcow2")
	bootable := true
	if err := s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: root, Bootable: &bootable}, &structs.SingleVolumeResponse{}); err != nil {
		t.Fatal(err)
	}
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "2.79", withNetworks(bfvServer(
		map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": root, "boot_index": "0"},
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "delete_on_termination": true, "tag": "scratch"},
	))).expect(t, 202)
	id := r.obj("server")["id"].(string)
	srv := waitServer(h, id, "ACTIVE")
	if srv["image"] != "" {
		t.Fatalf("a server booted from a volume shows image %v", srv["image"])
	}
	if rv := drv.RootVolume(id); rv == nil || rv.ID != root || rv.Path != "/pool/volume-root.qcow2" {
		t.Fatalf("driver's root volume: %+v", rv)
	}
	data := drv.Volumes(id)
	if len(data) != 1 || data[0].Device != "/dev/sdb" {
		t.Fatalf("driver's data volumes: %+v", data)
	}
	if v := volumeStatus(t, s, root); v.Status != structs.VolumeInUse || v.AttachmentOf(id) == nil || v.AttachmentOf(id).Device != "/dev/vda" {
		t.Fatalf("root volume: %+v", v)
	}
	if v := volumeStatus(t, s, data[0].ID); v.Status != structs.VolumeInUse || v.SizeGB != 1 || !v.AttachmentOf(id).DeleteOnTermination {
		t.Fatalf("data volume: %+v", v)
	}
	attached := fmt.Sprint(h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.3", nil).expect(t, 200).obj("server")["os-extended-volumes:volumes_attached"])
	if attached != fmt.Sprintf("[map[delete_on_termination:false id:%s] map[delete_on_termination:true id:%s]]", root, data[0].ID) &&
		attached != fmt.Sprintf("[map[delete_on_termination:true id:%s] map[delete_on_termination:false id:%s]]", data[0].ID, root) {
		t.Fatalf("volumes_attached: %s", attached)
	}
	h.req("DELETE", "/compute/v2.1/servers/"+id+"/os-volume_attachments/"+root, memberTok, "", nil).
		fault(t, 400, "badRequest", "Cannot detach a root device volume")
	// A rebuild with an image the root volume was not made from is
	// refused before 2.93 in Nova's words, the server untouched; at 2.93
	// it reimages the root volume (the agent rewrites it from the image
	// before the new guest boots) and leaves the data volume alone.
	act(h, id, memberTok, "", `{"rebuild": {"imageRef": "cirros"}}`).
		fault(t, 400, "badRequest", "Image cirros is unacceptable: Unable to rebuild with a different image for a volume-backed server.")
	if _, ok := drv.Reimaged(root); ok {
		t.Fatal("a refused rebuild reimaged the root volume")
	}
	act(h, id, memberTok, "2.93", `{"rebuild": {"imageRef": "cirros"}}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")
	_, rootDone := drv.Reimaged(root)
	_, dataDone := drv.Reimaged(data[0].ID)
	if !rootDone || dataDone {
		t.Fatalf("reimaged: root %v, data volume %v", rootDone, dataDone)
	}
	if v := volumeStatus(t, s, root); v.ImageID == "" || v.Status != structs.VolumeInUse || v.AttachmentOf(id) == nil {
		t.Fatalf("root volume after the reimage: %+v", v)
	}
	if rv := drv.RootVolume(id); rv == nil || rv.ID != root {
		t.Fatalf("driver's root volume after the rebuild: %+v", rv)
	}
	if data := drv.Volumes(id); len(data) != 1 || data[0].Device != "/dev/sdb" {
		t.Fatalf("driver's data volumes after the rebuild: %+v", data)
	}

	// A second server cannot boot from the volume in use.
	h.req("POST", "/compute/v2.1/servers", memberTok, "", bfvServer(
		map[string]any{"source_type": "volume", "destination_type": "volume", "uuid": root, "boot_index": 0})).
		fault(t, 400, "badRequest", "Invalid volume: Volume "+root+" status must be available or downloading to reserve, but the current status is in-use.")

	h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, 204)
	waitServer(h, id, "SOFT_DELETED")
	act(h, id, memberTok, "", `{"forceDelete": null}`).expect(t, 202)
	if v := waitVolume(t, s, root, structs.VolumeAvailable); len(v.Attachments) != 0 {
		t.Fatalf("root volume after the server's delete: %+v", v)
	}
	waitVolume(t, s, data[0].ID, structs.VolumeDeleting)

	// The volume boots a server again.
	r = h.req("POST", "/compute/v2.1/servers", memberTok, "", bfvServer(
		map[string]any{"source_type": "volume", "uuid": root, "boot_index": 0})).expect(t, 202)
	waitServer(h, r.obj("server")["id"].(string), "ACTIVE")

	// A blank root volume boots too (as Nova's, a disk with nothing on
	// it): only a volume named by id must be bootable.
	r = h.req("POST", "/compute/v2.1/servers", memberTok, "", bfvServer(
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0})).expect(t, 202)
	blank := r.obj("server")["id"].(string)
	waitServer(h, blank, "ACTIVE")
	if rv := drv.RootVolume(blank); rv == nil || rv.ID == root {
		t.Fatalf("blank root volume: %+v", rv)
	}

	// A multi-create makes each server its own volumes, as Nova does for
	// an image, snapshot or blank mapping.
	multi := bfvServer(map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0, "delete_on_termination": true})
	multi["server"].(map[string]any)["name"], multi["server"].(map[string]any)["min_count"] = "multi", 2
	h.req("POST", "/compute/v2.1/servers", memberTok, "", multi).expect(t, 202)
	list := h.req("GET", "/compute/v2.1/servers?name=%5Emulti-", memberTok, "", nil).expect(t, 200).list("servers")
	if len(list) != 2 {
		t.Fatalf("multi-create made %d servers: %v", len(list), list)
	}
	roots := map[string]bool{}
	for _, item := range list {
		sid := item.(map[string]any)["id"].(string)
		waitServer(h, sid, "ACTIVE")
		rv := drv.RootVolume(sid)
		if rv == nil || rv.ID == root || roots[rv.ID] {
			t.Fatalf("server %s's root volume %+v (others %v)", sid, rv, roots)
		}
		roots[rv.ID] = true
		if v := volumeStatus(t, s, rv.ID); v.Status != structs.VolumeInUse || v.AttachmentOf(sid) == nil {
			t.Fatalf("server %s's root volume: %+v", sid, v)
		}
	}
}
