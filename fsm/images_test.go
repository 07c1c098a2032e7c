package fsm

import (
	"bytes"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

const (
	img1 = "11111111-1111-1111-1111-111111111111"
	img2 = "22222222-2222-2222-2222-222222222222"
)

// populateImages fills the image tables for the snapshot tests.
func populateImages(t *testing.T, s *StateStore) {
	t.Helper()
	for _, err := range []error{
		s.UpsertImage(5, &structs.ImageUpsertEntry{Create: true, Image: &structs.Image{ID: img1, Name: "cirros", Visibility: structs.ImageShared,
			Owner: "p1", Status: structs.ImageActive, Size: 3, HashAlgo: "sha512", HashValue: "h", Tags: []string{"t"},
			Properties: map[string]string{"os_distro": "cirros"}, Locations: []*structs.ImageLocation{{NodeID: "s1", AddedAt: 1}}}}),
		s.UpsertImageMember(6, &structs.ImageMemberEntry{Create: true, Member: &structs.ImageMember{ImageID: img1, MemberID: "p2",
			Status: structs.MemberPending, CreatedAt: 1, UpdatedAt: 1}}),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func wantImageErr(t *testing.T, resp any, kind structs.ErrorKind) {
	t.Helper()
	err, _ := resp.(error)
	if structs.KindOf(err) != kind {
		t.Fatalf("want a %q error, got %v", kind, resp)
	}
}

func mustApply(t *testing.T, f *FSM, index uint64, mt structs.MessageType, body any) {
	t.Helper()
	if resp := apply(t, f, index, mt, body); resp != nil {
		t.Fatalf("apply %s at %d: %v", mt, index, resp)
	}
}

func TestImageLifecycleInTheFSM(t *testing.T) {
	f := testFSM(t)
	create := &structs.ImageUpsertEntry{Create: true, Image: &structs.Image{ID: img1, Name: "cirros", Visibility: structs.ImagePrivate,
		Owner: "p1", DiskFormat: "qcow2", ContainerFormat: "bare", Tags: []string{"a", "a", "b"},
		// A client cannot smuggle data or a status in.
		Status: structs.ImageActive, HashValue: "abc", Size: 9}}
	mustApply(t, f, 1, structs.ImageUpsertType, create)
	wantImageErr(t, apply(t, f, 2, structs.ImageUpsertType, create), structs.KindConflict)
	img, _ := f.State().ImageByID(nil, img1)
	if img.Status != structs.ImageQueued || img.HasData() || img.Size != 0 || len(img.Tags) != 2 || img.Properties == nil || img.CreateIndex != 1 {
		t.Fatalf("created %+v", img)
	}

	// Updates change user fields and keep the rest; CAS refuses stale ones.
	upd := img.Copy()
	upd.Name, upd.Properties, upd.Status = "cirros-0.6", map[string]string{"os_distro": "cirros"}, structs.ImageActive
	mustApply(t, f, 3, structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: upd, CASIndex: 1})
	wantImageErr(t, apply(t, f, 4, structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: upd, CASIndex: 1}), structs.KindConflict)
	bad := upd.Copy()
	bad.DiskFormat = "floppy"
	wantImageErr(t, apply(t, f, 4, structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: bad}), structs.KindInvalid)
	img, _ = f.State().ImageByID(nil, img1)
	if img.Name != "cirros-0.6" || img.Properties["os_distro"] != "cirros" || img.Status != structs.ImageQueued || img.ModifyIndex != 3 {
		t.Fatalf("updated %+v", img)
	}

	// Upload: start, a second start conflicts, abort, start again, finish.
	data := func(op, node string) *structs.ImageDataEntry {
		return &structs.ImageDataEntry{ImageID: img1, Op: op, NodeID: node, Size: 10, VirtualSize: 100, Checksum: "md5", HashValue: "h1", At: 7}
	}
	mustApply(t, f, 5, structs.ImageDataType, data(structs.ImageDataStart, "s1"))
	wantImageErr(t, apply(t, f, 6, structs.ImageDataType, data(structs.ImageDataStart, "s2")), structs.KindConflict)
	wantImageErr(t, apply(t, f, 6, structs.ImageDataType, data(structs.ImageDataFinish, "s2")), structs.KindConflict)
	mustApply(t, f, 6, structs.ImageDataType, data(structs.ImageDataAbort, "s1"))
	if img, _ = f.State().ImageByID(nil, img1); img.Status != structs.ImageQueued || img.Uploader != "" {
		t.Fatalf("aborted %+v", img)
	}
	mustApply(t, f, 7, structs.ImageDataType, data(structs.ImageDataStart, "s1"))
	mustApply(t, f, 8, structs.ImageDataType, data(structs.ImageDataFinish, "s1"))
	img, _ = f.State().ImageByID(nil, img1)
	if img.Status != structs.ImageActive || img.Size != 10 || img.HashAlgo != "sha512" || img.HashValue != "h1" || !img.HeldBy("s1") || len(img.Locations) != 1 {
		t.Fatalf("finished %+v", img)
	}
	// Formats are fixed once there is data.
	upd = img.Copy()
	upd.DiskFormat = "raw"
	resp := apply(t, f, 9, structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: upd})
	if err, _ := resp.(error); structs.KindOf(err) != structs.KindPermission || structs.Message(err) != "Attribute disk_format can be only replaced for a queued image." {
		t.Fatalf("format change: %v", resp)
	}

	// A second image with the same bytes inherits the holders.
	mustApply(t, f, 10, structs.ImageLocationType, &structs.ImageLocationEntry{HashValue: "h1", NodeID: "s2", At: 8})
	mustApply(t, f, 11, structs.ImageUpsertType, &structs.ImageUpsertEntry{Create: true, Image: &structs.Image{ID: img2, Name: "cirros", Visibility: structs.ImageShared, Owner: "p1"}})
	mustApply(t, f, 12, structs.ImageDataType, &structs.ImageDataEntry{ImageID: img2, Op: structs.ImageDataStart, NodeID: "s3"})
	mustApply(t, f, 13, structs.ImageDataType, &structs.ImageDataEntry{ImageID: img2, Op: structs.ImageDataFinish, NodeID: "s3", Size: 10, HashValue: "h1"})
	img, _ = f.State().ImageByID(nil, img2)
	if !img.HeldBy("s1") || !img.HeldBy("s2") || !img.HeldBy("s3") {
		t.Fatalf("dedup holders %+v", img.Locations)
	}
	// Forgetting a holder applies to both; an unknown hash is a no-op.
	mustApply(t, f, 14, structs.ImageLocationType, &structs.ImageLocationEntry{HashValue: "h1", NodeID: "s1", Remove: true})
	mustApply(t, f, 15, structs.ImageLocationType, &structs.ImageLocationEntry{HashValue: "nope", NodeID: "s1"})
	if a, _ := f.State().ImageByID(nil, img1); a.HeldBy("s1") || !a.HeldBy("s2") {
		t.Fatalf("removed holder: %+v", a.Locations)
	}
	if byHash, _ := f.State().ImagesByHash(nil, "h1"); len(byHash) != 2 {
		t.Fatalf("by hash: %d", len(byHash))
	}
	if byName, _ := f.State().ImagesByName(nil, "cirros"); len(byName) != 1 || byName[0].ID != img2 {
		t.Fatalf("by name: %+v", byName)
	}

	// Deactivate and reactivate.
	mustApply(t, f, 16, structs.ImageDataType, &structs.ImageDataEntry{ImageID: img1, Op: structs.ImageDeactivate})
	mustApply(t, f, 17, structs.ImageDataType, &structs.ImageDataEntry{ImageID: img1, Op: structs.ImageDeactivate})
	if a, _ := f.State().ImageByID(nil, img1); a.Status != structs.ImageDeactivated {
		t.Fatalf("deactivated: %s", a.Status)
	}
	mustApply(t, f, 18, structs.ImageDataType, &structs.ImageDataEntry{ImageID: img1, Op: structs.ImageReactivate})

	// Members: only shared images have them; status changes; limits.
	member := func(image, project, status string) *structs.ImageMember {
		return &structs.ImageMember{ImageID: image, MemberID: project, Status: status, CreatedAt: 1, UpdatedAt: 2}
	}
	wantImageErr(t, apply(t, f, 19, structs.ImageMemberType, &structs.ImageMemberEntry{Create: true, Member: member(img1, "p2", structs.MemberPending)}), structs.KindPermission)
	mustApply(t, f, 19, structs.ImageMemberType, &structs.ImageMemberEntry{Create: true, Member: member(img2, "p2", structs.MemberPending)})
	wantImageErr(t, apply(t, f, 20, structs.ImageMemberType, &structs.ImageMemberEntry{Create: true, Member: member(img2, "p2", structs.MemberPending)}), structs.KindConflict)
	wantImageErr(t, apply(t, f, 20, structs.ImageMemberType, &structs.ImageMemberEntry{Member: member(img2, "p3", structs.MemberAccepted)}), structs.KindNotFound)
	wantImageErr(t, apply(t, f, 20, structs.ImageMemberType, &structs.ImageMemberEntry{Member: member(img2, "p2", "maybe")}), structs.KindInvalid)
	mustApply(t, f, 20, structs.ImageMemberType, &structs.ImageMemberEntry{Member: &structs.ImageMember{ImageID: img2, MemberID: "p2", Status: structs.MemberAccepted, UpdatedAt: 9}})
	m, _ := f.State().ImageMemberByID(nil, img2, "p2")
	if m.Status != structs.MemberAccepted || m.CreatedAt != 1 || m.CreateIndex != 19 || m.ModifyIndex != 20 {
		t.Fatalf("member %+v", m)
	}
	if mine, _ := f.State().ImageMembershipsOf(nil, "p2"); len(mine) != 1 {
		t.Fatalf("memberships %+v", mine)
	}
	for i := 0; i < structs.MaxImageMembers-1; i++ {
		mustApply(t, f, uint64(21+i), structs.ImageMemberType, &structs.ImageMemberEntry{Create: true, Member: member(img2, "q"+string(rune('A'+i%26))+string(rune('a'+i/26)), structs.MemberPending)})
	}
	wantImageErr(t, apply(t, f, 200, structs.ImageMemberType, &structs.ImageMemberEntry{Create: true, Member: member(img2, "over", structs.MemberPending)}), structs.KindQuotaReached)

	// The state survives a snapshot.
	var buf bytes.Buffer
	if err := f.State().WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	restored, err := ReadSnapshot(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := restored.ImageByID(nil, img1); a == nil || a.HashValue != "h1" || a.Properties["os_distro"] != "cirros" {
		t.Fatalf("restored %+v", a)
	}
	if ms, _ := restored.ImageMembers(nil, img2); len(ms) != structs.MaxImageMembers {
		t.Fatalf("restored members: %d", len(ms))
	}

	// Protected images cannot be deleted; deleting drops the members.
	upd, _ = f.State().ImageByID(nil, img2)
	upd = upd.Copy()
	upd.Protected = true
	mustApply(t, f, 201, structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: upd})
	resp = apply(t, f, 202, structs.ImageDeleteType, &structs.ImageDeleteEntry{ImageID: img2})
	if err, _ := resp.(error); structs.KindOf(err) != structs.KindPermission || structs.Message(err) != "Image "+img2+" is protected and cannot be deleted." {
		t.Fatalf("protected delete: %v", resp)
	}
	upd.Protected = false
	mustApply(t, f, 203, structs.ImageUpsertType, &structs.ImageUpsertEntry{Image: upd})
	mustApply(t, f, 204, structs.ImageDeleteType, &structs.ImageDeleteEntry{ImageID: img2})
	wantImageErr(t, apply(t, f, 205, structs.ImageDeleteType, &structs.ImageDeleteEntry{ImageID: img2}), structs.KindNotFound)
	if ms, _ := f.State().ImageMembers(nil, img2); len(ms) != 0 {
		t.Fatalf("members left: %d", len(ms))
	}
	if has, _ := f.State().HasImages(nil); !has {
		t.Fatal("HasImages false with an image")
	}
}

func TestImageCreateWithDataIsKeptForServers(t *testing.T) {
	f := testFSM(t)
	mustApply(t, f, 1, structs.ImageUpsertType, &structs.ImageUpsertEntry{Create: true, Image: &structs.Image{ID: img1, Visibility: structs.ImagePublic,
		Status: structs.ImageActive, Size: 3, HashAlgo: "sha512", HashValue: "h", Locations: []*structs.ImageLocation{{NodeID: "s1"}}}})
	if img, _ := f.State().ImageByID(nil, img1); img.Status != structs.ImageActive || !img.HeldBy("s1") {
		t.Fatalf("registered %+v", img)
	}
}
