package fsm

import (
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// TestVolumesAttachedToIndex: a host's listing holds the volumes the
// Compute API attached to its instances (not an external record, not
// another host's), and its watch fires for a change of one of them but
// not for another host's volume.
func TestVolumesAttachedToIndex(t *testing.T) {
	s := testFSM(t).State()
	put := func(index uint64, v *structs.Volume) {
		t.Helper()
		txn := s.writeTxn()
		defer txn.Abort()
		if err := txn.Insert(TableVolumes, v); err != nil {
			t.Fatal(err)
		}
		if err := commitAt(txn, index, TableVolumes); err != nil {
			t.Fatal(err)
		}
	}
	att := func(host string, external bool) *structs.VolumeAttachment {
		return &structs.VolumeAttachment{ID: "a-" + host, InstanceID: "i-" + host, Host: host, External: external}
	}
	put(1, &structs.Volume{ID: "v1", ProjectID: "p", Attachments: []*structs.VolumeAttachment{att("h1", false)}})
	put(2, &structs.Volume{ID: "v2", ProjectID: "p", Attachments: []*structs.VolumeAttachment{att("h2", false), att("h1", true)}})
	put(3, &structs.Volume{ID: "v3", ProjectID: "p"})
	put(4, &structs.Volume{ID: "v4", ProjectID: "p", Attachments: []*structs.VolumeAttachment{att("h1", false), att("h2", false)}})

	ws := memdb.NewWatchSet()
	got, err := s.VolumesAttachedTo(ws, "h1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "v1" || got[1].ID != "v4" {
		t.Fatalf("h1's volumes: %+v", got)
	}
	put(5, &structs.Volume{ID: "v2", ProjectID: "p", SizeGB: 2, Attachments: []*structs.VolumeAttachment{att("h2", false)}})
	if !ws.Watch(time.After(50 * time.Millisecond)) {
		t.Fatal("a change of another host's volume woke h1's watch")
	}
	put(6, &structs.Volume{ID: "v1", ProjectID: "p", SizeGB: 2, Attachments: []*structs.VolumeAttachment{att("h1", false)}})
	if ws.Watch(time.After(time.Second)) {
		t.Fatal("a change of h1's volume did not wake its watch")
	}
}
