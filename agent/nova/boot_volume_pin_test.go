package nova

import (
	"testing"

	"github.com/stratus-cloud/stratus/server"
	"github.com/stratus-cloud/stratus/structs"
)

// TestNewBootVolumesPinOnlyWhenLocal: a volume a create makes (here a
// blank root) on a storage host that serves NBD exports leaves the
// server free for the scheduler, reaching its root over the network; on
// a storage host that serves none it pins the server there, where the
// volume is its file.
func TestNewBootVolumesPinOnlyWhenLocal(t *testing.T) {
	for _, c := range []struct {
		name, nbd string
		pinned    bool
	}{{"exports", "192.0.2.9:10809", false}, {"local", "", true}} {
		t.Run(c.name, func(t *testing.T) {
			h, s := newRealHarnessWith(t, func(*server.Config) {})
			drvS, hvS := startMovableHost(t, s, "hv-storage", 50, c.nbd)
			drv1, _ := startMovableHost(t, s, "hv-1", 0, "")
			reportVolumesMade(t, s, hvS)
			r := h.req("POST", "/compute/v2.1/servers", memberTok, "2.37", withNetworks(bfvServer(
				map[string]any{"source_type": "blank", "destination_type": "volume", "volume_size": 1, "boot_index": 0}))).expect(t, 202)
			id := r.obj("server")["id"].(string)
			waitServer(h, id, "ACTIVE")
			var got structs.SingleInstanceResponse
			if err := s.RPC("Instance.Get", &structs.InstanceSpecificRequest{InstanceID: id}, &got); err != nil {
				t.Fatal(err)
			}
			inst := got.Instance
			if pinned := inst.TargetHostID == hvS.HostID(); pinned != c.pinned || (!c.pinned && inst.TargetHostID != "") {
				t.Fatalf("target host %q, want pinned to the storage host: %v", inst.TargetHostID, c.pinned)
			}
			rv := drvS.RootVolume(id)
			if rv == nil {
				rv = drv1.RootVolume(id)
			}
			switch {
			case rv == nil:
				t.Fatal("no driver has the server's root volume")
			case c.pinned && (rv.Path == "" || rv.Network != nil || drvS.RootVolume(id) == nil):
				t.Fatalf("pinned server's root volume %+v, want its file on the storage host", rv)
			case !c.pinned && (rv.Network == nil || rv.Path != ""):
				t.Fatalf("unpinned server's root volume %+v, want the NBD export", rv)
			}
		})
	}
}
