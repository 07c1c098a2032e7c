package fsm

import (
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAttachedVolumeExtendEndsInUse: an in-use volume extends with its
// attachments kept, its growth counted against the gigabytes quota, and
// ends in-use (never available) or error_extending, as Cinder's
// extend_volume_completion.
func TestAttachedVolumeExtendEndsInUse(t *testing.T) {
	f := newVolumeFixture(t)
	v := f.volume("v1", "p1", 1)
	v.Status = structs.VolumeInUse
	v.Attachments = []*structs.VolumeAttachment{{ID: "a1", InstanceID: "i1", Host: "h1", AttachedAt: 1}}
	f.must(f.s.CreateVolume(f.next(), v))
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", FromStatus: []string{structs.VolumeInUse},
		Status: structs.VolumeExtending, SizeGB: 3}))
	got, err := f.s.Volume(nil, "v1")
	f.must(err)
	if got.SizeGB != 3 || len(got.Attachments) != 1 {
		t.Fatalf("extending volume: %+v", got)
	}
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Host: "h1", FromStatus: []string{structs.VolumeExtending},
		Status: structs.VolumeAvailable}), structs.KindInvalid, "its extend ends in-use")
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Host: "h1", FromStatus: []string{structs.VolumeExtending},
		Status: structs.VolumeInUse}))
	if s := f.status("v1"); s != structs.VolumeInUse {
		t.Fatalf("status %s", s)
	}

	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", FromStatus: []string{structs.VolumeInUse},
		Status: structs.VolumeExtending, SizeGB: 4}))
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Host: "h1", FromStatus: []string{structs.VolumeExtending},
		Status: structs.VolumeErrorExtend}))
	if s := f.status("v1"); s != structs.VolumeErrorExtend {
		t.Fatalf("status %s", s)
	}

	f.must(f.s.updateQuotaSet(f.next(), &structs.QuotaEntry{Scope: structs.QuotaScopeProject, ID: "p1",
		Set: map[string]int64{structs.QuotaGigabytes: 5}}, structs.VolumeDefaultQuotas))
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Status: structs.VolumeInUse, Reset: true}))
	f.refused(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", FromStatus: []string{structs.VolumeInUse},
		Status: structs.VolumeExtending, SizeGB: 6}), structs.KindQuotaReached, "Requested 2G, quota is 5G and 4G has been consumed")
	if s := f.status("v1"); s != structs.VolumeInUse {
		t.Fatalf("status after a refused extend %s", s)
	}
}

// TestPurgedInstanceLeavesTheExtendGoing: an instance purged while its
// volume extends leaves the volume extending (its storage host ends the
// extend, available), not available at a size its storage may lack.
func TestPurgedInstanceLeavesTheExtendGoing(t *testing.T) {
	f := newVolumeFixture(t)
	v := f.volume("v1", "p1", 1)
	v.Status = structs.VolumeExtending
	v.Attachments = []*structs.VolumeAttachment{{ID: "a1", InstanceID: "i1", Host: "h1", AttachedAt: 1}}
	f.must(f.s.CreateVolume(f.next(), v))
	txn := f.s.writeTxn()
	index := f.next()
	f.must(releaseInstanceVolumes(txn, index, 1, "i1"))
	f.must(commitAt(txn, index, TableVolumes))
	got, err := f.s.Volume(nil, "v1")
	f.must(err)
	if got.Status != structs.VolumeExtending || len(got.Attachments) != 0 {
		t.Fatalf("volume of a purged instance: %+v", got)
	}
	f.must(f.s.UpdateVolume(f.next(), &structs.VolumeUpdateEntry{ID: "v1", Host: "h1", FromStatus: []string{structs.VolumeExtending},
		Status: structs.VolumeAvailable}))
}
