package storage

import (
	"slices"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestWantExports: one export per attachment to an instance on another
// host, of volumes kept as files here; none for attachments on this
// host, for other hosts' volumes or for volumes not made yet.
func TestWantExports(t *testing.T) {
	vols := []*structs.Volume{
		{ID: "v1", Host: "hs", Status: structs.VolumeInUse, ProviderLocation: "/pool/volume-v1.qcow2",
			Attachments: []*structs.VolumeAttachment{{ID: "a1", Host: "h1"}, {ID: "a2", Host: "h2"}, {ID: "a3", Host: "hs"},
				{ID: "a-ext", Host: "client-host", External: true}}},
		{ID: "v2", Host: "hs", Status: structs.VolumeDetaching, ProviderLocation: "/pool/volume-v2.qcow2",
			Attachments: []*structs.VolumeAttachment{{ID: "a4", Host: "h1"}}},
		{ID: "v3", Host: "other", Status: structs.VolumeInUse, ProviderLocation: "/pool/volume-v3.qcow2",
			Attachments: []*structs.VolumeAttachment{{ID: "a5", Host: "h1"}}},
		{ID: "v4", Host: "hs", Status: structs.VolumeAttaching, ProviderLocation: "rbd:pool/v4",
			Attachments: []*structs.VolumeAttachment{{ID: "a6", Host: "h1"}}},
		{ID: "v5", Host: "hs", Status: structs.VolumeAvailable, ProviderLocation: "/pool/volume-v5.qcow2"},
		// Moves: an attachment here moving to another host, one on
		// another host moving here, one offloaded (no host), one moving
		// between two hosts of this one.
		{ID: "v6", Host: "hs", Status: structs.VolumeInUse, ProviderLocation: "/pool/volume-v6.qcow2",
			Attachments: []*structs.VolumeAttachment{{ID: "a7", Host: "hs", MoveHost: "h2"}}},
		{ID: "v7", Host: "hs", Status: structs.VolumeInUse, ProviderLocation: "/pool/volume-v7.qcow2",
			Attachments: []*structs.VolumeAttachment{{ID: "a8", Host: "h1", MoveHost: "hs"}}},
		{ID: "v8", Host: "hs", Status: structs.VolumeInUse, ProviderLocation: "/pool/volume-v8.qcow2",
			Attachments: []*structs.VolumeAttachment{{ID: "a9"}, {ID: "a10", Host: "hs", MoveHost: "hs"}}},
		// Reached through the export on this host: after a move, and
		// by a move's destination here.
		{ID: "v9", Host: "hs", Status: structs.VolumeInUse, ProviderLocation: "/pool/volume-v9.qcow2",
			Attachments: []*structs.VolumeAttachment{{ID: "a11", Host: "hs", Exported: true}, {ID: "a12", Host: "", MoveHost: "hs", MoveExported: true}}},
	}
	// h2 is not known (gone): it is admitted nowhere.
	names := map[string]string{"hs": "store", "h1": "compute-1"}
	got := wantExports("hs", vols, names)
	want := []Export{
		{Name: "volume-v1-a1", Path: "/pool/volume-v1.qcow2", Hosts: []string{"compute-1"}},
		{Name: "volume-v1-a2", Path: "/pool/volume-v1.qcow2"},
		{Name: "volume-v2-a4", Path: "/pool/volume-v2.qcow2", Hosts: []string{"compute-1"}},
		{Name: "volume-v6-a7", Path: "/pool/volume-v6.qcow2", Hosts: []string{"store"}},
		{Name: "volume-v7-a8", Path: "/pool/volume-v7.qcow2", Hosts: []string{"compute-1", "store"}},
		{Name: "volume-v9-a11", Path: "/pool/volume-v9.qcow2", Hosts: []string{"store"}},
		{Name: "volume-v9-a12", Path: "/pool/volume-v9.qcow2", Hosts: []string{"store"}},
	}
	if !slices.EqualFunc(got, want, Export.equal) {
		t.Fatalf("exports %+v, want %+v", got, want)
	}
}

// TestExportIDs: export ids are valid QEMU node names (at most 31
// characters, starting with a letter) and differ per attachment.
func TestExportIDs(t *testing.T) {
	a, b := exportID(structs.VolumeExportName("v1", "a1")), exportID(structs.VolumeExportName("v1", "a2"))
	if a == b || len(a) > 31 || a[0] != 's' {
		t.Fatalf("ids %q %q", a, b)
	}
}
