package storage

import (
	"context"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

// TestAgentExtendsAttachedVolumes: an extending volume attached to an
// instance elsewhere (or by the Block Storage API's caller) is grown
// here and goes back to in-use; one an instance on this host opens
// directly is left to that host's compute agent (its QEMU holds the
// file), neither grown nor reported.
func TestAgentExtendsAttachedVolumes(t *testing.T) {
	t.Parallel()
	pool := testPool(t)
	srv := newServers()
	startAgent(t, srv, pool, nil)
	for _, id := range []string{"held", "away"} {
		srv.setVolume(&structs.Volume{ID: id, SizeGB: 1, Status: structs.VolumeCreating, Host: "st1"})
		srv.waitStatus(t, id, structs.VolumeAvailable, false)
	}
	srv.setVolume(&structs.Volume{ID: "held", SizeGB: 2, Status: structs.VolumeExtending, Host: "st1",
		Attachments: []*structs.VolumeAttachment{{ID: "a1", InstanceID: "i1", Host: "st1", AttachedAt: 1}}})
	srv.setVolume(&structs.Volume{ID: "away", SizeGB: 2, Status: structs.VolumeExtending, Host: "st1",
		Attachments: []*structs.VolumeAttachment{{ID: "a2", InstanceID: "i2", Host: "cn2", AttachedAt: 1},
			{ID: "a3", External: true, AttachedAt: 1}}})
	// The listing that extended "away" held "held" too.
	srv.waitStatus(t, "away", structs.VolumeInUse, false)
	if got, _ := pool.VirtualSize(context.Background(), pool.VolumePath("away")); got != 2<<30 {
		t.Fatalf("extended attached volume is %d bytes", got)
	}
	srv.mu.Lock()
	status := srv.vols["held"].Status
	srv.mu.Unlock()
	if status != structs.VolumeExtending {
		t.Fatalf("a volume an instance here holds went %s", status)
	}
	if got, _ := pool.VirtualSize(context.Background(), pool.VolumePath("held")); got != 1<<30 {
		t.Fatalf("a volume an instance here holds was grown to %d bytes", got)
	}
}
