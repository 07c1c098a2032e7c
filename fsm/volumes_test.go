package fsm

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// populateVolumes fills the volume tables for the snapshot round trip,
// at indexes up to 6 like populate's.
func populateVolumes(t *testing.T, s *StateStore) {
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.UpsertVolumeType(5, &structs.VolumeType{ID: "vt1", Name: "fast", IsPublic: true, ExtraSpecs: map[string]string{"volume_backend_name": "file"}}))
	must(s.CreateVolume(5, &structs.Volume{ID: "v1", ProjectID: "p1", SizeGB: 2, Status: structs.VolumeAvailable,
		VolumeTypeID: "vt1", Host: "h1", Metadata: map[string]string{"k": "v"}, CreatedAt: 9}))
	must(s.CreateVolumeSnapshot(6, &structs.VolumeSnapshotCreateEntry{Snapshot: &structs.VolumeSnapshot{
		ID: "s1", VolumeID: "v1", ProjectID: "p1", Status: structs.SnapshotCreating, CreatedAt: 9}}))
}

// volumeFixture is an FSM for the volume tests, with its own index.
type volumeFixture struct {
	t     *testing.T
	s     *StateStore
	index uint64
}

func newVolumeFixture(t *testing.T) *volumeFixture {
	return &volumeFixture{t: t, s: testFSM(t).State()}
}

func (f *volumeFixture) next() uint64 { f.index++; return f.index }

func (f *volumeFixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// refused checks that err is of kind and says want.
func (f *volumeFixture) refused(err error, kind structs.ErrorKind, want string) {
	f.t.Helper()
	if err == nil || structs.KindOf(err) != kind || !strings.Contains(err.Error(), want) {
		f.t.Fatalf("got %v, want a %s error saying %q", err, kind, want)
	}
}

func (f *volumeFixture) volume(id, project string, size int) *structs.Volume {
	return &structs.Volume{ID: id, ProjectID: project, SizeGB: size, Status: structs.VolumeCreating, Host: "h1"}
}

func (f *volumeFixture) status(id string) string {
	f.t.Helper()
	v, err := f.s.Volume(nil, id)
	f.must(err)
	if v == nil {
		return ""
	}
	return v.Status
}

func TestVolumeStatusMachine(t *testing.T) {
	f := newVolumeFixture(t)
	f.must(f.s.CreateVolume(f.next(), f.volume("v1", "p1", 1)))
	// Cinder's machine: a creating volume is not in use; an admin's
	// reset steps outside the machine.
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeInUse}),
		structs.KindInvalid, "cannot go from creating to in-use")
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeInUse, Reset: true}))
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeCreating, Reset: true}))
	// A report from another host is refused; from the volume's host it
	// moves creating to available.
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Host: "h2",
		FromStatus: []string{structs.VolumeCreating}, Status: structs.VolumeAvailable}), structs.KindConflict, "not on host h2")
	loc := "/pool/volume-v1.qcow2"
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Host: "h1",
		FromStatus: []string{structs.VolumeCreating}, Status: structs.VolumeAvailable, ProviderLocation: &loc}))
	// A late, repeated report finds the volume past creating.
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Host: "h1",
		FromStatus: []string{structs.VolumeCreating}, Status: structs.VolumeError}), structs.KindInvalid, "must be creating, not available")
	// Extending grows the size; shrinking is refused.
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1",
		FromStatus: []string{structs.VolumeAvailable}, Status: structs.VolumeExtending, SizeGB: 3}))
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", SizeGB: 2}), structs.KindInvalid, "must be greater")
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Host: "h1",
		FromStatus: []string{structs.VolumeExtending}, Status: structs.VolumeAvailable}))
	// Delete: available → deleting → record purged by the host.
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1",
		FromStatus: []string{structs.VolumeAvailable, structs.VolumeError}, Status: structs.VolumeDeleting}))
	f.refused(f.s.DeleteVolume(f.next(), &structs.VolumeDeleteEntry{ID: "v1", Host: "h1",
		FromStatus: []string{structs.VolumeAvailable}}), structs.KindInvalid, "must be available, not deleting")
	f.must(f.s.DeleteVolume(f.next(), &structs.VolumeDeleteEntry{ID: "v1", Host: "h1", FromStatus: []string{structs.VolumeDeleting}}))
	if got := f.status("v1"); got != "" {
		t.Fatalf("deleted volume still there, %s", got)
	}
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeError}), structs.KindNotFound, "could not be found")
}

func TestVolumeQuotasAreEnforcedInTheFSM(t *testing.T) {
	f := newVolumeFixture(t)
	f.must(f.s.updateQuotaSet(f.next(), &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaVolumes: 2, structs.QuotaGigabytes: 10, structs.QuotaVolumeSnapshots: 1}}, structs.VolumeDefaultQuotas))
	f.must(f.s.CreateVolume(f.next(), f.volume("v1", "p1", 4)))
	f.refused(f.s.CreateVolume(f.next(), f.volume("v2", "p1", 7)), structs.KindQuotaReached,
		"Requested 7G, quota is 10G and 4G has been consumed")
	f.must(f.s.CreateVolume(f.next(), f.volume("v2", "p1", 2)))
	f.refused(f.s.CreateVolume(f.next(), f.volume("v3", "p1", 1)), structs.KindQuotaReached,
		"Maximum number of volumes allowed (2) exceeded for quota 'volumes'")
	// Another project has the defaults (10 volumes).
	f.must(f.s.CreateVolume(f.next(), f.volume("v3", "p2", 1)))
	// Snapshots count in gigabytes and snapshots; an extend is checked
	// for its growth.
	f.refused(f.s.CreateVolumeSnapshot(f.next(), &structs.VolumeSnapshotCreateEntry{Snapshot: &structs.VolumeSnapshot{ID: "s1", VolumeID: "v1"}}),
		structs.KindInvalid, "status must be available")
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeAvailable}))
	f.must(f.s.CreateVolumeSnapshot(f.next(), &structs.VolumeSnapshotCreateEntry{Snapshot: &structs.VolumeSnapshot{ID: "s1", VolumeID: "v1", Status: structs.SnapshotCreating}}))
	used, err := f.s.VolumeQuotaUsage(nil, "p1")
	f.must(err)
	if used[structs.QuotaGigabytes] != 10 || used[structs.QuotaVolumes] != 2 || used[structs.QuotaVolumeSnapshots] != 1 {
		t.Fatalf("usage %v, want 10 GB, 2 volumes, 1 snapshot", used)
	}
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", SizeGB: 5}), structs.KindQuotaReached, "Requested 1G")
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v2", Status: structs.VolumeAvailable}))
	f.refused(f.s.CreateVolumeSnapshot(f.next(), &structs.VolumeSnapshotCreateEntry{Snapshot: &structs.VolumeSnapshot{ID: "s2", VolumeID: "v2"}}),
		structs.KindQuotaReached, "")
	// A volume with snapshots cannot go to deleting.
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeDeleting}), structs.KindInvalid, "dependent snapshots")
	// Deleting the snapshot releases its quota.
	f.must(f.s.DeleteVolumeSnapshot(f.next(), &structs.VolumeSnapshotDeleteEntry{ID: "s1"}))
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", SizeGB: 6}))
	// per_volume_gigabytes caps one volume; the default class changes
	// every project without its own limits.
	f.must(f.s.updateQuotaSet(f.next(), &structs.QuotaEntry{Scope: structs.QuotaScopeClass, ID: structs.QuotaDefaultClass,
		Set: map[string]int64{structs.QuotaPerVolumeGigabytes: 5}}, structs.VolumeDefaultQuotas))
	f.refused(f.s.CreateVolume(f.next(), f.volume("v4", "p2", 6)), structs.KindInvalid, "exceeds per_volume_gigabytes quota of 5G")
	if got := f.s.VolumeQuotaLimits(nil, "p2")[structs.QuotaVolumes]; got != 10 {
		t.Fatalf("p2's volumes limit %d, want the default 10", got)
	}
}

func TestVolumeCreateChecksSourceAndType(t *testing.T) {
	f := newVolumeFixture(t)
	v := f.volume("v1", "p1", 1)
	v.VolumeTypeID = "nope"
	f.refused(f.s.CreateVolume(f.next(), v), structs.KindNotFound, "Volume type nope could not be found.")
	f.must(f.s.UpsertVolumeType(f.next(), &structs.VolumeType{ID: "t1", Name: "fast"}))
	f.refused(f.s.UpsertVolumeType(f.next(), &structs.VolumeType{ID: "t2", Name: "fast"}), structs.KindConflict, "already exists")
	v.VolumeTypeID = "fast" // by name
	v.Status = structs.VolumeAvailable
	f.must(f.s.CreateVolume(f.next(), v))
	f.refused(f.s.DeleteVolumeType(f.next(), "t1"), structs.KindInvalid, "still in use")
	f.refused(f.s.DeleteVolumeType(f.next(), structs.DefaultVolumeTypeID), structs.KindInvalid, "cannot be deleted")

	f.must(f.s.CreateVolumeSnapshot(f.next(), &structs.VolumeSnapshotCreateEntry{Snapshot: &structs.VolumeSnapshot{ID: "s1", VolumeID: "v1", Status: structs.SnapshotCreating}}))
	clone := f.volume("v2", "p1", 1)
	clone.SnapshotID = "s1"
	f.refused(f.s.CreateVolume(f.next(), clone), structs.KindInvalid, "Originating snapshot status must be one of 'available' values")
	f.must(f.s.UpdateVolumeSnapshot(f.next(), &structs.VolumeSnapshotUpdateEntry{ID: "s1", Host: "h1",
		FromStatus: []string{structs.SnapshotCreating}, Status: structs.SnapshotAvailable}))
	f.must(f.s.CreateVolume(f.next(), clone))
	// Another project does not see the snapshot.
	other := f.volume("v3", "p2", 1)
	other.SnapshotID = "s1"
	f.refused(f.s.CreateVolume(f.next(), other), structs.KindNotFound, "Snapshot s1 could not be found.")
	small := f.volume("v4", "p1", 1)
	small.SourceVolumeID = "v1"
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", SizeGB: 2}))
	f.refused(f.s.CreateVolume(f.next(), small), structs.KindInvalid, "cannot be smaller than original volume size 2GB")
	f.refused(f.s.CreateVolume(f.next(), f.volume("v5", "p1", 0)), structs.KindInvalid, "at least 1 GB")
}

func TestVolumeMetadataMergeReplaceDelete(t *testing.T) {
	f := newVolumeFixture(t)
	f.must(f.s.CreateVolume(f.next(), f.volume("v1", "p1", 1)))
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Metadata: map[string]string{"a": "1", "b": "2"}}))
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Metadata: map[string]string{"c": "3"}, DeleteMetadata: []string{"a"}}))
	v, err := f.s.Volume(nil, "v1")
	f.must(err)
	if len(v.Metadata) != 2 || v.Metadata["b"] != "2" || v.Metadata["c"] != "3" {
		t.Fatalf("metadata %v", v.Metadata)
	}
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", ReplaceMetadata: true, Metadata: map[string]string{"z": "9"}}))
	v, _ = f.s.Volume(nil, "v1")
	if len(v.Metadata) != 1 || v.Metadata["z"] != "9" {
		t.Fatalf("replaced metadata %v", v.Metadata)
	}
}

func TestVolumeQuotaEntryRefusesComputeNames(t *testing.T) {
	fsm := testFSM(t)
	res := apply(t, fsm, 1, structs.VolumeQuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaInstances: 3}})
	if err, ok := res.(error); !ok || !strings.Contains(err.Error(), "unknown quota resource") {
		t.Fatalf("volume quota entry with a compute name: %v", res)
	}
	if res := apply(t, fsm, 2, structs.VolumeQuotaUpdateType, &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaVolumes: 3}}); res != nil {
		t.Fatalf("volume quota entry: %v", res)
	}
	if got := fsm.State().VolumeQuotaLimits(nil, "p1")[structs.QuotaVolumes]; got != 3 {
		t.Fatalf("volumes limit %d after the entry", got)
	}
}
