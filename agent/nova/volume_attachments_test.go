package nova

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// startStorageHypervisor starts a fake hypervisor agent that is also a
// storage host, and waits until it is up.
func startStorageHypervisor(t *testing.T, s *server.Server, name string) (*fake.Driver, *client.Client) {
	t.Helper()
	drv := fake.New(fake.Config{HostName: name, SpawnLatency: 50 * time.Millisecond, PowerLatency: 20 * time.Millisecond})
	a := runFakeAgent(t, s, client.Config{NodeName: name, Driver: drv, StorageCapacityGB: 50,
		PowerSyncInterval: 500 * time.Millisecond}, nil)
	return drv, a
}

// runFakeAgent starts the agent cfg describes (its data dir, server,
// logger and report interval filled in) and waits until its host is up
// and, when ready is given, ready says so of it.
func runFakeAgent(t *testing.T, s *server.Server, cfg client.Config, ready func(*structs.Host) bool) *client.Client {
	t.Helper()
	cfg.DataDir, cfg.RPC, cfg.Logger, cfg.ReportInterval = t.TempDir(), s, hclog.NewNullLogger(), 20*time.Millisecond
	a, err := client.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Start() }()
	t.Cleanup(func() { _ = a.Shutdown() })
	waitFor(t, cfg.NodeName+" up", func() error {
		var out structs.HostListResponse
		if err := s.RPC("Host.List", &structs.HostListRequest{}, &out); err != nil {
			return err
		}
		for _, h := range out.Hosts {
			if h.Name == cfg.NodeName && h.Up() && (ready == nil || ready(h)) {
				return nil
			}
		}
		return fmt.Errorf("%s not up", cfg.NodeName)
	})
	return a
}

// availableVolume creates a volume in p-demo and reports it built, as
// the host's storage agent would, with its file at path.
func availableVolume(t *testing.T, s *server.Server, a *client.Client, name, path string) string {
	t.Helper()
	var resp structs.SingleVolumeResponse
	if err := s.RPC("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p-demo",
		Volume: &structs.Volume{Name: name, SizeGB: 1}}, &resp); err != nil {
		t.Fatal(err)
	}
	v := resp.Volume
	if err := s.RPC("Volume.Report", &structs.VolumeReportRequest{HostID: v.Host, Update: &structs.VolumeUpdateEntry{
		ID: v.ID, FromStatus: []string{structs.VolumeCreating}, Status: structs.VolumeAvailable, ProviderLocation: &path},
		WriteRequest: structs.WriteRequest{AuthToken: a.NodeSecret()}}, &structs.GenericResponse{}); err != nil {
		t.Fatalf("report %s available: %v", v.ID, err)
	}
	return v.ID
}

func volumeStatus(t *testing.T, s *server.Server, id string) *structs.Volume {
	t.Helper()
	var resp structs.SingleVolumeResponse
	if err := s.RPC("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: id}, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Volume
}

func waitVolume(t *testing.T, s *server.Server, id, status string) *structs.Volume {
	t.Helper()
	var v *structs.Volume
	waitFor(t, "volume "+id+" "+status, func() error {
		if v = volumeStatus(t, s, id); v.Status != status {
			return fmt.Errorf("status %s", v.Status)
		}
		return nil
	})
	return v
}

// TestVolumeAttachmentsAgainstARealServer drives os-volume_attachments
// through a real server and a fake hypervisor agent that keeps the
// volume pool: the attach hot-plugs the volume on the agent's driver and
// makes it in-use, the server lists and shows it (tag and
// delete_on_termination at 2.79, volumes_attached in its view), an
// in-use volume, a missing one and a bad body are refused as Nova
// refuses them, the detach unplugs it, and deleting the server frees a
// volume or deletes it when asked to.
func TestVolumeAttachmentsAgainstARealServer(t *testing.T) {
	h, s := newRealHarness(t)
	drv, agent := startStorageHypervisor(t, s, "hv-st")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	vol := availableVolume(t, s, agent, "data", "/pool/volume-data.qcow2")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"

	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": "not-a-uuid"}}).expect(t, 400)
	h.req("POST", base, memberTok, "2.48", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol, "tag": "x"}}).expect(t, 400)
	missing := "6f0c5f1c-3b86-4d7c-9d6e-0d3f4a1b2c3d"
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": missing}}).
		fault(t, 404, "itemNotFound", "Volume "+missing+" could not be found.")

	att := h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{
		"volumeId": vol, "tag": "db", "delete_on_termination": true}}).expect(t, 200).obj("volumeAttachment")
	if att["volumeId"] != vol || att["serverId"] != id || att["device"] != "/dev/sdb" || att["tag"] != "db" || att["delete_on_termination"] != true {
		t.Fatalf("attach answer: %v", att)
	}
	v := waitVolume(t, s, vol, structs.VolumeInUse)
	if a := v.AttachmentOf(id); a == nil || a.AttachedAt == 0 {
		t.Fatalf("attachment: %+v", v.Attachments)
	}
	if got := drv.Volumes(id); len(got) != 1 || got[0].ID != vol || got[0].Path != "/pool/volume-data.qcow2" || got[0].Device != "/dev/sdb" {
		t.Fatalf("driver's volumes: %+v", got)
	}
	waitServer(h, id, "ACTIVE")

	list := h.req("GET", base, memberTok, "2.79", nil).expect(t, 200).list("volumeAttachments")
	if len(list) != 1 || list[0].(map[string]any)["id"] != vol {
		t.Fatalf("list: %v", list)
	}
	show := h.req("GET", base+"/"+vol, memberTok, "2.89", nil).expect(t, 200).obj("volumeAttachment")
	if show["attachment_id"] == nil || show["id"] != nil || show["delete_on_termination"] != true {
		t.Fatalf("show at 2.89: %v", show)
	}
	srv := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.3", nil).expect(t, 200).obj("server")
	if va := fmt.Sprint(srv["os-extended-volumes:volumes_attached"]); va != fmt.Sprintf("[map[delete_on_termination:true id:%s]]", vol) {
		t.Fatalf("volumes_attached: %s", va)
	}
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}).
		fault(t, 400, "badRequest", "Invalid volume: volume "+vol+" already attached")
	other := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "other", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, other, "ACTIVE")
	h.req("POST", "/compute/v2.1/servers/"+other+"/os-volume_attachments", memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}).
		fault(t, 400, "badRequest", "Invalid input received: Invalid volume: Volume "+vol+" status must be available or downloading to reserve, but the current status is in-use. (HTTP 400)")
	h.req("GET", base+"/"+missing, memberTok, "", nil).expect(t, 404)

	h.req("DELETE", base+"/"+vol, memberTok, "", nil).expect(t, 202)
	waitVolume(t, s, vol, structs.VolumeAvailable)
	if got := drv.Volumes(id); len(got) != 0 {
		t.Fatalf("driver's volumes after the detach: %+v", got)
	}
	waitServer(h, id, "ACTIVE")
	h.req("DELETE", base+"/"+vol, memberTok, "", nil).expect(t, 404)
	act(h, id, memberTok, "", `{"suspend": null}`).expect(t, 202)
	waitServer(h, id, "SUSPENDED")
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}).
		fault(t, 409, "conflictingRequest", "Cannot 'attach_volume' instance "+id+" while it is in vm_state suspended")
	act(h, id, memberTok, "", `{"resume": null}`).expect(t, 202)
	waitServer(h, id, "ACTIVE")

	// Deleting the server detaches its volumes once it is gone (a soft
	// delete keeps them, as Nova's does, until the reclaim);
	// delete_on_termination deletes.
	keep := availableVolume(t, s, agent, "keep", "/pool/volume-keep.qcow2")
	for _, body := range []map[string]any{{"volumeId": vol, "delete_on_termination": true}, {"volumeId": keep}} {
		h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": body}).expect(t, 200)
		waitVolume(t, s, body["volumeId"].(string), structs.VolumeInUse)
		waitServer(h, id, "ACTIVE")
	}
	h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, 204)
	waitServer(h, id, "SOFT_DELETED")
	if v := volumeStatus(t, s, keep); v.Status != structs.VolumeInUse {
		t.Fatalf("a soft-deleted server's volume: %s", v.Status)
	}
	act(h, id, memberTok, "", `{"forceDelete": null}`).expect(t, 202)
	waitVolume(t, s, keep, structs.VolumeAvailable)
	if v := waitVolume(t, s, vol, structs.VolumeDeleting); len(v.Attachments) != 0 {
		t.Fatalf("deleted with the server: %+v", v)
	}
}
