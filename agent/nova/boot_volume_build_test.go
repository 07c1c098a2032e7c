package nova

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// madeFor lists the volumes the servers made for a server's create,
// waiting until there are n.
func madeFor(t *testing.T, s *server.Server, id string, n int) []*structs.Volume {
	t.Helper()
	var vols []*structs.Volume
	waitFor(t, fmt.Sprintf("%d volumes made for %s", n, id), func() error {
		var out structs.VolumeListResponse
		if err := s.RPC("Volume.List", &structs.VolumeListRequest{ProjectID: "p-demo"}, &out); err != nil {
			return err
		}
		vols = vols[:0]
		for _, v := range out.Volumes {
			if v.MadeFor != nil && v.MadeFor.InstanceID == id {
				vols = append(vols, v)
			}
		}
		if len(vols) != n {
			return fmt.Errorf("%d volumes", len(vols))
		}
		return nil
	})
	return vols
}

// reportVolume is the storage agent's report on a volume it made (or
// failed to make).
func reportVolume(t *testing.T, s *server.Server, a *client.Client, v *structs.Volume, status string) {
	t.Helper()
	path, reason := "/pool/volume-"+v.ID+".qcow2", "qemu-img create failed: No space left on device"
	u := &structs.VolumeUpdateEntry{ID: v.ID, FromStatus: []string{structs.VolumeCreating}, Status: status, ProviderLocation: &path}
	if status == structs.VolumeError {
		u.ProviderLocation, u.ErrorMessage = nil, &reason
	}
	if err := s.RPC("Volume.Report", &structs.VolumeReportRequest{HostID: v.Host, Update: u,
		WriteRequest: structs.WriteRequest{AuthToken: a.NodeSecret()}}, &structs.GenericResponse{}); err != nil {
		t.Fatalf("report %s %s: %v", v.ID, status, err)
	}
}

// TestBootFromVolumeStorageFailure: a volume its storage host fails to
// make does not fail the POST (202, the server in BUILD while its
// volumes are made) but the build, as Nova's: the server goes to ERROR
// with Nova's fault, the volumes it made with delete_on_termination are
// deleted and the others left to the project, also when the failed
// server is deleted.
func TestBootFromVolumeStorageFailure(t *testing.T) {
	h, s := newRealHarness(t)
	_, agent := startStorageHypervisor(t, s, "hv-bfv-fail")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "2.79", withNetworks(bfvServer(
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0, "delete_on_termination": true},
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "delete_on_termination": false},
	))).expect(t, 202)
	id := r.obj("server")["id"].(string)
	srv := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "2.1", nil).expect(t, 200).obj("server")
	if srv["status"] != "BUILD" || srv["OS-EXT-STS:task_state"] != structs.TaskBlockDeviceMapping {
		t.Fatalf("a server whose volumes are being made: %v %v", srv["status"], srv["OS-EXT-STS:task_state"])
	}
	vols := madeFor(t, s, id, 2)
	byDOT := map[bool]*structs.Volume{}
	for _, v := range vols {
		byDOT[v.MadeFor.DeleteOnTermination] = v
	}
	root, data := byDOT[true], byDOT[false]
	reportVolume(t, s, agent, data, structs.VolumeAvailable)
	reportVolume(t, s, agent, root, structs.VolumeError)
	srv = waitServer(h, id, "ERROR")
	fault, _ := srv["fault"].(map[string]any)
	want := regexp.MustCompile(`^Build of instance ` + id + ` aborted: Volume ` + root.ID +
		` did not finish being created even after we waited \d+ seconds or \d+ attempts\. And its status is error\.$`)
	if fault == nil || !want.MatchString(fmt.Sprint(fault["message"])) || fmt.Sprint(fault["code"]) != "500" {
		t.Fatalf("fault: %v", fault)
	}
	waitVolume(t, s, root.ID, structs.VolumeDeleting)
	if v := volumeStatus(t, s, data.ID); v.Status != structs.VolumeAvailable || len(v.Attachments) != 0 || v.MadeFor != nil {
		t.Fatalf("the volume without delete_on_termination: %+v", v)
	}
	h.req("DELETE", "/compute/v2.1/servers/"+id, memberTok, "", nil).expect(t, 204)
	waitServer(h, id, "SOFT_DELETED")
	act(h, id, memberTok, "", `{"forceDelete": null}`).expect(t, 202)
	waitFor(t, "the failed server gone", func() error {
		if r := h.req("GET", "/compute/v2.1/servers/"+id, memberTok, "", nil); r.status != 404 {
			return fmt.Errorf("GET: %d", r.status)
		}
		return nil
	})
	if v := volumeStatus(t, s, data.ID); v.Status != structs.VolumeAvailable {
		t.Fatalf("the kept volume after the failed server's delete: %+v", v)
	}

	// A server deleted while its volumes are made: those with
	// delete_on_termination are deleted once made.
	r = h.req("POST", "/compute/v2.1/servers", memberTok, "", bfvServer(
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0, "delete_on_termination": true},
	)).expect(t, 202)
	gone := r.obj("server")["id"].(string)
	v := madeFor(t, s, gone, 1)[0]
	h.req("DELETE", "/compute/v2.1/servers/"+gone, memberTok, "", nil).expect(t, 204)
	reportVolume(t, s, agent, v, structs.VolumeAvailable)
	waitVolume(t, s, v.ID, structs.VolumeDeleting)
}

// TestBootFromVolumeOutlivesTheAPIAgent: the Compute API agent that
// took the create answers before any volume is made and may go away:
// the servers finish the build, the server boots from the volume made
// for it.
func TestBootFromVolumeOutlivesTheAPIAgent(t *testing.T) {
	h, s := newRealHarness(t)
	drv, agent := startStorageHypervisor(t, s, "hv-bfv-gone")
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", New(Config{RPC: s, Verifier: testTokens()}).Handler())
	first := &harness{t: t, srv: httptest.NewServer(mux)}
	r := first.req("POST", "/compute/v2.1/servers", memberTok, "", bfvServer(
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0},
	)).expect(t, 202)
	first.srv.Close()
	id := r.obj("server")["id"].(string)
	v := madeFor(t, s, id, 1)[0]
	if v.Status != structs.VolumeCreating {
		t.Fatalf("the volume was made before the create answered: %+v", v)
	}
	reportVolume(t, s, agent, v, structs.VolumeAvailable)
	waitServer(h, id, "ACTIVE")
	if rv := drv.RootVolume(id); rv == nil || rv.ID != v.ID {
		t.Fatalf("driver's root volume: %+v", rv)
	}
	if got := volumeStatus(t, s, v.ID); got.Status != structs.VolumeInUse || got.AttachmentOf(id) == nil || got.MadeFor != nil {
		t.Fatalf("the made volume once the server is ACTIVE: %+v", got)
	}
}

// TestBootFromVolumeTimesOut: a volume its storage host never reports
// (the host went away with it half made) does not leave the server in
// BUILD for good: the leader ends the build after VolumeBuildTimeout
// with Nova's fault, and the volume is deleted once it is reported.
func TestBootFromVolumeTimesOut(t *testing.T) {
	h, s := newRealHarnessWith(t, func(c *server.Config) { c.VolumeBuildTimeout = time.Second })
	_, agent := startStorageHypervisor(t, s, "hv-bfv-slow")
	r := h.req("POST", "/compute/v2.1/servers", memberTok, "", bfvServer(
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0, "delete_on_termination": true},
	)).expect(t, 202)
	id := r.obj("server")["id"].(string)
	v := madeFor(t, s, id, 1)[0]
	fault, _ := waitServer(h, id, "ERROR")["fault"].(map[string]any)
	want := regexp.MustCompile(`^Build of instance ` + id + ` aborted: Volume ` + v.ID +
		` did not finish being created even after we waited \d+ seconds or \d+ attempts\. And its status is creating\.$`)
	if !want.MatchString(fmt.Sprint(fault["message"])) {
		t.Fatalf("fault: %v", fault)
	}
	reportVolume(t, s, agent, v, structs.VolumeAvailable)
	waitVolume(t, s, v.ID, structs.VolumeDeleting)
}

// TestBootFromVolumeOverQuota: a create whose volumes exceed the
// project's volume quota is refused whole (403), as it was when the
// Compute API made the volumes itself, and leaves nothing behind.
func TestBootFromVolumeOverQuota(t *testing.T) {
	h, s := newRealHarness(t)
	startStorageHypervisor(t, s, "hv-bfv-quota")
	if err := s.RPC("Volume.QuotaUpdate", &structs.VolumeQuotaUpdateRequest{ProjectID: "p-demo",
		Limits: map[string]int64{structs.QuotaVolumes: 1}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	h.req("POST", "/compute/v2.1/servers", memberTok, "", bfvServer(
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0},
		map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1},
	)).fault(t, 403, "forbidden", "Maximum number of volumes allowed (1) exceeded for quota 'volumes'.")
	var out structs.VolumeListResponse
	if err := s.RPC("Volume.List", &structs.VolumeListRequest{ProjectID: "p-demo"}, &out); err != nil || len(out.Volumes) != 0 {
		t.Fatalf("volumes after a refused create: %v %v", out.Volumes, err)
	}
	if l := h.req("GET", "/compute/v2.1/servers", memberTok, "", nil).expect(t, 200).list("servers"); len(l) != 0 {
		t.Fatalf("servers after a refused create: %v", l)
	}
}
