package fsm

import (
	"slices"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestVolumeTypeAccess: projects join and leave a private type only
// through VolumeTypeAccessEntry; an upsert keeps them.
func TestVolumeTypeAccess(t *testing.T) {
	f := newVolumeFixture(t)
	f.must(f.s.UpsertVolumeType(f.next(), &structs.VolumeType{ID: "t1", Name: "secret"}))
	f.must(f.s.UpsertVolumeType(f.next(), &structs.VolumeType{ID: "t2", Name: "open", IsPublic: true}))
	f.must(f.s.VolumeTypeAccess(f.next(), &structs.VolumeTypeAccessEntry{TypeID: "t1", ProjectID: "p1"}))
	f.refused(f.s.VolumeTypeAccess(f.next(), &structs.VolumeTypeAccessEntry{TypeID: "t1", ProjectID: "p1"}), structs.KindConflict, "already exists")
	f.refused(f.s.VolumeTypeAccess(f.next(), &structs.VolumeTypeAccessEntry{TypeID: "t2", ProjectID: "p1"}), structs.KindInvalid, "public volume type")
	f.refused(f.s.VolumeTypeAccess(f.next(), &structs.VolumeTypeAccessEntry{TypeID: "nope", ProjectID: "p1"}), structs.KindNotFound, "could not be found")
	// An upsert from a read without the projects keeps them.
	f.must(f.s.UpsertVolumeType(f.next(), &structs.VolumeType{ID: "t1", Name: "secret", Description: "d"}))
	got, err := f.s.VolumeType(nil, "t1")
	f.must(err)
	if !slices.Equal(got.Projects, []string{"p1"}) || got.Description != "d" || !got.UsableBy("p1") || got.UsableBy("p2") {
		t.Fatalf("type after an upsert %+v", got)
	}
	f.must(f.s.VolumeTypeAccess(f.next(), &structs.VolumeTypeAccessEntry{TypeID: "t1", ProjectID: "p1", Remove: true}))
	f.refused(f.s.VolumeTypeAccess(f.next(), &structs.VolumeTypeAccessEntry{TypeID: "t1", ProjectID: "p1", Remove: true}), structs.KindNotFound, "Volume type access not found")
	if got, _ = f.s.VolumeType(nil, "t1"); len(got.Projects) != 0 {
		t.Fatalf("projects after the removal %v", got.Projects)
	}
}
