package server

import (
	"maps"
	"testing"

	"github.com/stratus-cloud/stratus/fsm"
	"github.com/stratus-cloud/stratus/structs"
)

// TestAttachmentHostNames: a storage agent learns the names of the
// hosts its volumes' attachments name (Host and MoveHost), which make
// up the certificates its NBD exports admit; a host that is gone is
// left out, and so refused.
func TestAttachmentHostNames(t *testing.T) {
	state, err := fsm.NewStateStore()
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range []*structs.Host{{ID: "h1", Name: "compute-1"}, {ID: "h2", Name: "compute-2"}, {ID: "hs", Name: "store"}} {
		if err := state.UpsertHost(uint64(i+1), h); err != nil {
			t.Fatal(err)
		}
	}
	vols := []*structs.Volume{
		{ID: "v1", Host: "hs", Attachments: []*structs.VolumeAttachment{{ID: "a1", Host: "h1", MoveHost: "h2"}}},
		{ID: "v2", Host: "hs", Attachments: []*structs.VolumeAttachment{{ID: "a2", Host: "h1"}, {ID: "a3", Host: "gone"}, {ID: "a4"}}},
		{ID: "v3", Host: "hs"},
	}
	got, err := attachmentHostNames(state, vols)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"h1": "compute-1", "h2": "compute-2"}; !maps.Equal(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
}
