package server

import (
	"strings"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// storageHost is a registered storage host with a pool of capGB.
func storageHost(t *testing.T, s *Server, id string, capGB string) {
	t.Helper()
	h := testHost(id, 4, 4096)
	h.Capabilities = []string{structs.HostCapabilityVolumes}
	h.Attributes = map[string]string{structs.HostAttrStorageCapacityGB: capGB}
	registerHost(t, s, h)
	waitFor(t, "storage host up", 10*time.Second, func() error {
		got, err := s.fsm.State().HostByID(nil, id)
		if err != nil || got == nil || got.Status != structs.HostStatusUp {
			return structs.Errorf(structs.KindUnavailable, "host %s not up yet", id)
		}
		return nil
	})
}

func createVolume(s *Server, project string, v *structs.Volume) (*structs.Volume, error) {
	var resp structs.SingleVolumeResponse
	err := s.RPC("Volume.Create", &structs.VolumeCreateRequest{ProjectID: project, Volume: v}, &resp)
	return resp.Volume, err
}

// report is a storage agent's report that a volume reached status.
func report(t *testing.T, s *Server, host, id, from, to string) {
	t.Helper()
	err := s.RPC("Volume.Report", &structs.VolumeReportRequest{HostID: host, Update: &structs.VolumeUpdateEntry{
		ID: id, FromStatus: []string{from}, Status: to}}, &structs.GenericResponse{})
	if err != nil {
		t.Fatalf("report %s %s→%s: %v", id, from, to, err)
	}
}

func TestVolumePlacementAndLifecycle(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)

	// No storage host: Cinder's scheduler leaves the volume in error,
	// and it is deleted at once.
	v, err := createVolume(s, "p1", &structs.Volume{Name: "orphan", SizeGB: 1})
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != structs.VolumeError || v.Host != "" || !strings.Contains(v.ErrorMessage, "No valid backend") {
		t.Fatalf("volume without a storage host: %+v", v)
	}
	if err := s.RPC("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: v.ID, ProjectID: "p1"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}

	storageHost(t, s, "st1", "10")
	storageHost(t, s, "st2", "20")
	v, err = createVolume(s, "p1", &structs.Volume{Name: "data", SizeGB: 15})
	if err != nil {
		t.Fatal(err)
	}
	if v.Host != "st2" || v.Status != structs.VolumeCreating || v.VolumeTypeID != "" && v.Backend != structs.VolumeBackendFile {
		t.Fatalf("15 GB volume placed on %q in %s", v.Host, v.Status)
	}
	// Other projects do not see it.
	var got structs.SingleVolumeResponse
	if err := s.RPC("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: v.ID, ProjectID: "p2"}, &got); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("another project's get: %v", err)
	}
	// Deleting a creating volume is refused with Cinder's message.
	err = s.RPC("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: v.ID, ProjectID: "p1"}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "Volume status must be available or error") {
		t.Fatalf("delete while creating: %v", err)
	}
	// Only the volume's host may report on it.
	err = s.RPC("Volume.Report", &structs.VolumeReportRequest{HostID: "st1", Update: &structs.VolumeUpdateEntry{
		ID: v.ID, FromStatus: []string{structs.VolumeCreating}, Status: structs.VolumeAvailable}}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("report from another host: %v", err)
	}
	report(t, s, "st2", v.ID, structs.VolumeCreating, structs.VolumeAvailable)

	// Extend past the host's room is refused; within it the volume goes
	// to extending at its new size.
	err = s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: v.ID, ProjectID: "p1", NewSizeGB: 25}, &got)
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "no room") {
		t.Fatalf("extend past the pool: %v", err)
	}
	if err := s.RPC("Volume.Update", &structs.VolumeUpdateRequest{VolumeID: v.ID, ProjectID: "p1", NewSizeGB: 18}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Volume.Status != structs.VolumeExtending || got.Volume.SizeGB != 18 {
		t.Fatalf("extended volume %s %d GB", got.Volume.Status, got.Volume.SizeGB)
	}
	report(t, s, "st2", v.ID, structs.VolumeExtending, structs.VolumeAvailable)

	checkSnapshotPlacement(t, s, v.ID)
	// Deleting goes through deleting until the host purges the record.
	if err := s.RPC("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: v.ID, ProjectID: "p1"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: v.ID}, &got); err != nil || got.Volume.Status != structs.VolumeDeleting {
		t.Fatalf("deleted volume: %v %+v", err, got.Volume)
	}
	err = s.RPC("Volume.Report", &structs.VolumeReportRequest{HostID: "st2", Delete: &structs.VolumeDeleteEntry{
		ID: v.ID, FromStatus: []string{structs.VolumeDeleting}}}, &structs.GenericResponse{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: v.ID}, &got); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("purged volume: %v", err)
	}
}

func TestVolumeQuotaAndTypesEndpoints(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	storageHost(t, s, "st1", "100")
	if err := s.RPC("Volume.QuotaUpdate", &structs.VolumeQuotaUpdateRequest{ProjectID: "p1",
		Limits: map[string]int64{structs.QuotaVolumes: 1}}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	err := s.RPC("Volume.QuotaUpdate", &structs.VolumeQuotaUpdateRequest{ProjectID: "p1",
		Limits: map[string]int64{"cores": 1}}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "Bad key") {
		t.Fatalf("compute quota through the volume endpoint: %v", err)
	}
	if _, err := createVolume(s, "p1", &structs.Volume{SizeGB: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = createVolume(s, "p1", &structs.Volume{SizeGB: 1})
	if structs.KindOf(err) != structs.KindQuotaReached || !strings.Contains(err.Error(), "Maximum number of volumes allowed (1)") {
		t.Fatalf("second volume over quota: %v", err)
	}
	var q structs.VolumeQuotaResponse
	if err := s.RPC("Volume.QuotaGet", &structs.VolumeQuotaRequest{ProjectID: "p1", Usage: true}, &q); err != nil {
		t.Fatal(err)
	}
	if q.Limits[structs.QuotaVolumes] != 1 || q.Limits[structs.QuotaGigabytes] != 1000 || q.Usage[structs.QuotaVolumes] != 1 || q.Usage[structs.QuotaGigabytes] != 1 {
		t.Fatalf("quota %v usage %v", q.Limits, q.Usage)
	}

	var vt structs.SingleVolumeTypeResponse
	if err := s.RPC("Volume.TypeUpsert", &structs.VolumeTypeUpsertRequest{Type: &structs.VolumeType{Name: "fast", IsPublic: true}}, &vt); err != nil {
		t.Fatal(err)
	}
	var types structs.VolumeTypeListResponse
	if err := s.RPC("Volume.TypeList", &structs.VolumeTypeListRequest{}, &types); err != nil {
		t.Fatal(err)
	}
	if len(types.Types) != 2 || types.Types[0].Name != structs.DefaultVolumeTypeName || types.Types[1].ID != vt.Type.ID {
		t.Fatalf("types %+v", types.Types)
	}
	v, err := createVolume(s, "p2", &structs.Volume{SizeGB: 1, VolumeTypeID: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	if v.VolumeTypeID != vt.Type.ID {
		t.Fatalf("created volume's type %q, want fast's id %s", v.VolumeTypeID, vt.Type.ID)
	}
	var stored structs.SingleVolumeResponse
	if err := s.RPC("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: v.ID}, &stored); err != nil || stored.Volume.VolumeTypeID != vt.Type.ID {
		t.Fatalf("stored type %v %v", err, stored.Volume)
	}
	err = s.RPC("Volume.TypeDelete", &structs.VolumeTypeDeleteRequest{TypeID: "fast"}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("delete of a used type: %v", err)
	}
}

// checkSnapshotPlacement: a snapshot lands on its volume's host, and a
// volume made from it too, even where another host has more room; a
// snapshot over the host's room is refused. bigID is an 18 GB volume on
// st2's 20 GB pool.
func checkSnapshotPlacement(t *testing.T, s *Server, bigID string) {
	t.Helper()
	v := &structs.Volume{ID: bigID}
	// A snapshot lands on the volume's host; a volume made from it too,
	// even though st1 would have more room.
	var snap structs.SingleVolumeSnapshotResponse
	err := s.RPC("Volume.SnapshotCreate", &structs.VolumeSnapshotCreateRequest{ProjectID: "p1",
		Snapshot: &structs.VolumeSnapshot{VolumeID: v.ID, Name: "s"}}, &snap)
	if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "no room") {
		t.Fatalf("snapshot of an 18 GB volume on a 20 GB pool: %v", err)
	}
	small, err := createVolume(s, "p1", &structs.Volume{SizeGB: 1, AvailabilityZone: "nova"})
	if err != nil {
		t.Fatal(err)
	}
	if small.Host != "st1" {
		t.Fatalf("1 GB volume on %s, want st1 (more room)", small.Host)
	}
	report(t, s, "st1", small.ID, structs.VolumeCreating, structs.VolumeAvailable)
	if err := s.RPC("Volume.SnapshotCreate", &structs.VolumeSnapshotCreateRequest{ProjectID: "p1",
		Snapshot: &structs.VolumeSnapshot{VolumeID: small.ID}}, &snap); err != nil {
		t.Fatal(err)
	}
	if snap.Snapshot.Host != "st1" || snap.Snapshot.SizeGB != 1 || snap.Snapshot.Status != structs.SnapshotCreating {
		t.Fatalf("snapshot %+v", snap.Snapshot)
	}
	err = s.RPC("Volume.Report", &structs.VolumeReportRequest{HostID: "st1", SnapshotUpdate: &structs.VolumeSnapshotUpdateEntry{
		ID: snap.Snapshot.ID, FromStatus: []string{structs.SnapshotCreating}, Status: structs.SnapshotAvailable}}, &structs.GenericResponse{})
	if err != nil {
		t.Fatal(err)
	}
	clone, err := createVolume(s, "p1", &structs.Volume{SizeGB: 2, SnapshotID: snap.Snapshot.ID})
	if err != nil {
		t.Fatal(err)
	}
	if clone.Host != "st1" {
		t.Fatalf("volume from a snapshot on %s, want the snapshot's st1", clone.Host)
	}
	// The storage agent's read lists st1's volumes and snapshot.
	var hv structs.VolumeHostResponse
	if err := s.RPC("Volume.HostVolumes", &structs.VolumeHostRequest{HostID: "st1"}, &hv); err != nil {
		t.Fatal(err)
	}
	if len(hv.Volumes) != 2 || len(hv.Snapshots) != 1 {
		t.Fatalf("st1 keeps %d volumes, %d snapshots", len(hv.Volumes), len(hv.Snapshots))
	}
	// A volume with a snapshot cannot be deleted.
	err = s.RPC("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: small.ID, ProjectID: "p1"}, &structs.GenericResponse{})
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("delete of a volume with a snapshot: %v", err)
	}
}

// TestVolumeOfARemovedHostIsDeletedAtOnce: once its storage host is
// gone from the cluster nothing would delete a volume's data, so its
// delete removes the record at once.
func TestVolumeOfARemovedHostIsDeletedAtOnce(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	storageHost(t, s, "st1", "10")
	v, err := createVolume(s, "p1", &structs.Volume{SizeGB: 1})
	if err != nil {
		t.Fatal(err)
	}
	report(t, s, "st1", v.ID, structs.VolumeCreating, structs.VolumeAvailable)
	if err := s.RPC("Host.ForceDown", &structs.HostForceDownRequest{HostID: "st1", ForcedDown: true}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Host.Deregister", &structs.HostDeregisterRequest{HostID: "st1"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RPC("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: v.ID, ProjectID: "p1"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	var got structs.SingleVolumeResponse
	if err := s.RPC("Volume.Get", &structs.VolumeSpecificRequest{VolumeID: v.ID}, &got); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("volume of a removed host after delete: %v %+v", err, got.Volume)
	}
}

// TestVolumesWaitForTheUpgrade: until every server's FSM knows volume
// entries (FSM level 4) the servers refuse volume writes, unavailable,
// instead of proposing entries an older server could not apply.
func TestVolumesWaitForTheUpgrade(t *testing.T) {
	t.Parallel()
	s := testServer(t, nil)
	waitForLeader(t, s)
	storageHost(t, s, "st1", "10")
	if err := s.setAdvertisedFSMLevel(structs.FSMLevelSegments); err != nil {
		t.Fatal(err)
	}
	waitClusterFSMLevel(t, s, structs.FSMLevelSegments)
	if _, err := createVolume(s, "p1", &structs.Volume{SizeGB: 1}); structs.KindOf(err) != structs.KindUnavailable {
		t.Fatalf("create during the upgrade: %v", err)
	}
	if err := s.setAdvertisedFSMLevel(structs.CurrentFSMLevel); err != nil {
		t.Fatal(err)
	}
	waitClusterFSMLevel(t, s, structs.CurrentFSMLevel)
	if _, err := createVolume(s, "p1", &structs.Volume{SizeGB: 1}); err != nil {
		t.Fatalf("create after the upgrade: %v", err)
	}
}
