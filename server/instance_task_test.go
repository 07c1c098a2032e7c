package server

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/structs"
)

// TestRebuildResolvesItsImage: a rebuild's new image is checked as a
// create's is, and its properties replace the old image's.
func TestRebuildResolvesItsImage(t *testing.T) {
	t.Parallel()
	s := testServer(t, fastImages)
	waitForLeader(t, s)
	seedFlavors(t, s)
	h := testHost("h1", 8, 16384)
	h.Status = structs.HostStatusUp
	registerHost(t, s, h)
	resp := createInstances(t, s, "vm", "m1.small", 1)
	id := resp.Instances[0].ID
	inst := waitSettled(t, s, []string{id})[id]
	var allocs structs.AllocListResponse
	if err := s.RPC("Alloc.List", &structs.AllocListRequest{InstanceID: id}, &allocs); err != nil || len(allocs.Allocs) != 1 {
		t.Fatalf("allocs %v %v", allocs.Allocs, err)
	}
	err := s.RPC("Alloc.UpdateFromClient", &structs.AllocUpdateRequest{HostID: inst.HostID, Updates: []*structs.AllocClientUpdate{
		{AllocID: allocs.Allocs[0].ID, ClientState: structs.AllocClientRunning, PowerState: structs.PowerRunning}}}, &structs.GenericResponse{})
	if err != nil {
		t.Fatal(err)
	}
	img, err := s.RegisterImage(&structs.Image{ID: "22222222-2222-3333-4444-555555555555", Name: "debian", DiskFormat: "qcow2",
		ContainerFormat: "bare", Visibility: structs.ImagePublic, Properties: map[string]string{"os_distro": "debian"}},
		bytes.NewReader(imagestore.EmptyQCOW2(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	rebuild := func(image string) error {
		return s.RPC("Instance.Task", &structs.InstanceTaskRequest{InstanceID: id, Op: structs.OpRebuild, ImageID: image, Admin: true},
			&structs.InstanceTaskResponse{})
	}
	if err := rebuild("no-such-image"); structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("rebuild with an unknown image: %v", err)
	}
	if err := rebuild("debian"); err != nil {
		t.Fatal(err)
	}
	got, _ := s.fsm.State().InstanceByID(nil, id)
	if got.ImageID != img.ID || !reflect.DeepEqual(got.ImageProperties, img.Properties) || got.TaskState != structs.TaskRebuilding {
		t.Fatalf("rebuilding instance: image %s props %v task %q", got.ImageID, got.ImageProperties, got.TaskState)
	}
}
