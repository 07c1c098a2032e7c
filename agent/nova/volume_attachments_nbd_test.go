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

// startFakeHost starts a fake agent, a storage host of capGB (0: none)
// advertising an NBD server at addr ("" for none).
func startFakeHost(t *testing.T, s *server.Server, name string, capGB int64, addr string) (*fake.Driver, *client.Client) {
	t.Helper()
	drv := fake.New(fake.Config{HostName: name})
	a := runFakeAgent(t, s, client.Config{NodeName: name, Driver: drv, StorageCapacityGB: capGB, StorageNBDAddress: addr},
		func(h *structs.Host) bool { return h.Attributes[structs.HostAttrStorageNBDAddress] == addr })
	return drv, a
}

// reportBuilt reports volume id built at path, as its storage agent
// would.
func reportBuilt(t *testing.T, s *server.Server, a *client.Client, id, path string) {
	t.Helper()
	if err := s.RPC("Volume.Report", &structs.VolumeReportRequest{HostID: a.HostID(), Update: &structs.VolumeUpdateEntry{
		ID: id, FromStatus: []string{structs.VolumeCreating}, Status: structs.VolumeAvailable, ProviderLocation: &path},
		WriteRequest: structs.WriteRequest{AuthToken: a.NodeSecret()}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
}

// createOn creates a 1 GB volume and checks that it was placed on a.
func createOn(t *testing.T, s *server.Server, a *client.Client, name string) string {
	t.Helper()
	var resp structs.SingleVolumeResponse
	if err := s.RPC("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p-demo", Volume: &structs.Volume{Name: name, SizeGB: 1}}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Volume.Host != a.HostID() {
		t.Fatalf("volume %s placed on %s, want %s", name, resp.Volume.Host, a.HostID())
	}
	reportBuilt(t, s, a, resp.Volume.ID, "/pool/volume-"+name+".qcow2")
	return resp.Volume.ID
}

// TestVolumeAttachmentAcrossHosts: os-volume_attachments attaches a
// volume kept on another host than the server's when that storage host
// serves NBD: the server's agent attaches the storage host's export of
// the attachment (with TLS); a storage host without an NBD server is
// still refused with Nova's 400.
func TestVolumeAttachmentAcrossHosts(t *testing.T) {
	h, s := newRealHarness(t)
	drv, _ := startFakeHost(t, s, "hv-1", 0, "")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202)
	id := r.obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	base := "/compute/v2.1/servers/" + id + "/os-volume_attachments"

	// A storage host without an NBD server (1 GB: the next volume goes
	// to the other) serves only its own instances.
	_, plain := startFakeHost(t, s, "hv-plain", 1, "")
	near := createOn(t, s, plain, "near")
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": near}}).
		fault(t, 400, "badRequest", "Invalid volume: volume "+near+" is kept on another host than the instance, and its storage host serves no NBD exports (storage nbd_address)")

	_, far := startFakeHost(t, s, "hv-nbd", 50, "192.0.2.7:10809")
	vol := createOn(t, s, far, "far")
	h.req("POST", base, memberTok, "2.79", map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}).expect(t, 200)
	v := waitVolume(t, s, vol, structs.VolumeInUse)
	att := v.AttachmentOf(id)
	got := drv.Volumes(id)
	want := virt.NetworkDisk{Protocol: virt.NetworkNBD, Name: structs.VolumeExportName(vol, att.ID), Hosts: []string{"192.0.2.7:10809"}, TLS: true}
	if len(got) != 1 || got[0].Path != "" || got[0].Network == nil || fmt.Sprint(*got[0].Network) != fmt.Sprint(want) {
		t.Fatalf("driver's volumes: %+v", got)
	}
	waitServer(h, id, "ACTIVE")
	h.req("DELETE", base+"/"+vol, memberTok, "", nil).expect(t, 202)
	waitVolume(t, s, vol, structs.VolumeAvailable)
	if got := drv.Volumes(id); len(got) != 0 {
		t.Fatalf("driver's volumes after the detach: %+v", got)
	}
}
