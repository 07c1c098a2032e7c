package nova

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
	"github.com/stratus-cloud/stratus/virt/fake"
)

// extendAttached asks the servers to extend an in-use volume, as the
// Block Storage API does at 3.42.
func extendAttached(s *server.Server, id string, size int) error {
	return s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: id, ProjectID: "p-demo",
		NewSizeGB: size, ExtendAttached: true}, &structs.SingleVolumeResponse{})
}

// startAgentIn starts a fake hypervisor agent that keeps the volume
// pool, on drv with its state in dir (so a second one in the same dir is
// the first restarted), and waits until its host is up.
func startAgentIn(t *testing.T, s *server.Server, drv *fake.Driver, dir string) *client.Client {
	t.Helper()
	a, err := client.New(client.Config{NodeName: "hv-ext", Driver: drv, StorageCapacityGB: 50, DataDir: dir,
		RPC: s, Logger: hclog.NewNullLogger(), ReportInterval: 20 * time.Millisecond, PowerSyncInterval: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.Start() }()
	t.Cleanup(func() { _ = a.Shutdown() })
	waitFor(t, "hv-ext up", func() error {
		var out structs.HostListResponse
		if err := s.RPC("Host.List", &structs.HostListRequest{}, &out); err != nil {
			return err
		}
		for _, h := range out.Hosts {
			if h.Name == "hv-ext" && h.Up() {
				return nil
			}
		}
		return fmt.Errorf("hv-ext not up")
	})
	return a
}

// TestExtendAttachedVolumeWithAFakeAgent extends volumes attached to a
// server whose host keeps their files: the instance's QEMU holds the
// file, so the compute agent grows the guest's disk and reports the
// volume in-use with its new size, attachment kept; a failure of the
// driver leaves the volume error_extending, as Cinder's; an agent down
// when the extend comes finishes it once restarted; and the quota and
// status rules hold for in-use volumes.
func TestExtendAttachedVolumeWithAFakeAgent(t *testing.T) {
	h, s := newRealHarness(t)
	drv := fake.New(fake.Config{HostName: "hv-ext", SpawnLatency: 50 * time.Millisecond, PowerLatency: 20 * time.Millisecond})
	dir := t.TempDir()
	agent := startAgentIn(t, s, drv, dir)
	id := h.req("POST", "/compute/v2.1/servers", memberTok, "", map[string]any{"server": map[string]any{
		"name": "vm", "imageRef": "cirros", "flavorRef": "1"}}).expect(t, 202).obj("server")["id"].(string)
	waitServer(h, id, "ACTIVE")
	attach := func(name string) string {
		vol := availableVolume(t, s, agent, name, "/pool/volume-"+name+".qcow2")
		h.req("POST", "/compute/v2.1/servers/"+id+"/os-volume_attachments", memberTok, "2.79",
			map[string]any{"volumeAttachment": map[string]any{"volumeId": vol}}).expect(t, 200)
		waitVolume(t, s, vol, structs.VolumeInUse)
		waitServer(h, id, "ACTIVE")
		return vol
	}

	vol := attach("data")
	if err := extendAttached(s, vol, 3); err != nil {
		t.Fatalf("extend in-use: %v", err)
	}
	v := waitVolume(t, s, vol, structs.VolumeInUse)
	if v.SizeGB != 3 || v.AttachmentOf(id) == nil || v.AttachmentOf(id).AttachedAt == 0 {
		t.Fatalf("extended volume: %+v", v)
	}
	if got := drv.VolumeSize(id, vol); got != 3<<30 {
		t.Fatalf("guest disk is %d bytes, want %d", got, 3<<30)
	}
	if err := extendAttached(s, vol, 3); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("extend to the same size: %v", err)
	}
	err := s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: vol, ProjectID: "p-demo", NewSizeGB: 4}, &structs.SingleVolumeResponse{})
	if want := "status must be '{'status': 'available'}' to extend, currently in-use."; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("extend in-use below 3.42: %v", err)
	}

	drv.FailNext("ResizeVolume", nil)
	if err := extendAttached(s, vol, 4); err != nil {
		t.Fatalf("extend in-use: %v", err)
	}
	v = waitVolume(t, s, vol, structs.VolumeErrorExtend)
	if v.ErrorMessage == "" || v.AttachmentOf(id) == nil || drv.VolumeSize(id, vol) != 3<<30 {
		t.Fatalf("failed extend: %+v, disk %d", v, drv.VolumeSize(id, vol))
	}

	// The agent is down when the extend comes; restarted, it finishes.
	other := attach("logs")
	if err := agent.Shutdown(); err != nil {
		t.Fatal(err)
	}
	if err := extendAttached(s, other, 2); err != nil {
		t.Fatalf("extend in-use: %v", err)
	}
	if v := volumeStatus(t, s, other); v.Status != structs.VolumeExtending || v.AttachmentOf(id) == nil {
		t.Fatalf("volume while its agent is down: %+v", v)
	}
	startAgentIn(t, s, drv, dir)
	if v := waitVolume(t, s, other, structs.VolumeInUse); v.SizeGB != 2 || drv.VolumeSize(id, other) != 2<<30 {
		t.Fatalf("extend after the restart: %+v, disk %d", v, drv.VolumeSize(id, other))
	}
}
