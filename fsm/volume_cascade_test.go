package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestVolumeCascadeDelete: a cascade takes the volume and its snapshots
// to deleting in one write, or changes nothing when a snapshot is in a
// status the entry does not allow.
func TestVolumeCascadeDelete(t *testing.T) {
	f := newVolumeFixture(t)
	f.must(f.s.CreateVolume(f.next(), &structs.Volume{ID: "v1", ProjectID: "p1", SizeGB: 1, Status: structs.VolumeAvailable, Host: "h1"}))
	for _, id := range []string{"s1", "s2"} {
		f.must(f.s.CreateVolumeSnapshot(f.next(), &structs.VolumeSnapshotCreateEntry{Snapshot: &structs.VolumeSnapshot{ID: id, VolumeID: "v1", Status: structs.SnapshotAvailable}}))
	}
	f.must(f.s.UpdateVolumeSnapshot(f.next(), &structs.VolumeSnapshotUpdateEntry{ID: "s2", Status: structs.SnapshotErrorDeleting}))
	allowed := []string{structs.SnapshotAvailable, structs.SnapshotError, structs.SnapshotDeleting}
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeDeleting, Cascade: true, CascadeFrom: allowed}),
		structs.KindInvalid, "Failed to update snapshot")
	if v, _ := f.s.Volume(nil, "v1"); v.Status != structs.VolumeAvailable {
		t.Fatalf("refused cascade changed the volume: %s", v.Status)
	}
	if s, _ := f.s.VolumeSnapshot(nil, "s1"); s.Status != structs.SnapshotAvailable {
		t.Fatalf("refused cascade changed a snapshot: %s", s.Status)
	}
	// Without a status list (force) any snapshot goes.
	index := f.next()
	f.must(f.s.UpdateVolume(index, &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeDeleting, Cascade: true}))
	for _, id := range []string{"s1", "s2"} {
		if s, _ := f.s.VolumeSnapshot(nil, id); s.Status != structs.SnapshotDeleting || s.ModifyIndex != index {
			t.Fatalf("snapshot %s after the cascade: %s at %d", id, s.Status, s.ModifyIndex)
		}
	}
	if got := f.s.Index(TableVolumeSnapshots); got != index {
		t.Fatalf("snapshots table index %d, want %d (storage hosts wait on it)", got, index)
	}
	// The volume's record goes only once the snapshots' records have.
	f.refused(f.s.DeleteVolume(f.next(), &structs.VolumeDeleteEntry{ID: "v1"}), structs.KindInvalid, "dependent snapshots")
}
