package libvirt

import (
	"slices"
	"testing"
)

// TestOwnDiskTargets: a block migration copies the instance's own
// writable disks, never its volumes (a network disk, a volume's file)
// nor the read-only config drive.
func TestOwnDiskTargets(t *testing.T) {
	m := &instanceMeta{Disks: []metaDisk{
		{Role: diskRoot, Path: "/pool/i+a-root"}, {Role: diskEphemeral, Path: "/pool/i+a-ephemeral"},
		{Role: diskConfig, Path: "/pool/i+a-config"},
	}, Volumes: []metaVolume{{ID: "v1", Path: "/volumes/v1.qcow2"}}}
	x := `<domain type='qemu'><name>i</name><devices>
	<disk type='file' device='disk'><source file='/pool/i+a-root'/><target dev='vda' bus='virtio'/></disk>
	<disk type='file' device='disk'><source file='/pool/i+a-ephemeral'/><target dev='vdb' bus='virtio'/></disk>
	<disk type='file' device='cdrom'><source file='/pool/i+a-config'/><target dev='hda' bus='ide'/><readonly/></disk>
	<disk type='network' device='disk'><source protocol='nbd' name='volume-v2-a2' tls='yes'><host name='10.0.0.9' port='10809'/></source><target dev='sdb' bus='scsi'/></disk>
	<disk type='file' device='disk'><source file='/volumes/v1.qcow2'/><target dev='sdc' bus='scsi'/></disk>
	</devices></domain>`
	got, err := ownDiskTargets(x, m)
	if err != nil || !slices.Equal(got, []string{"vda", "vdb"}) {
		t.Fatalf("disks to copy %v (%v), want vda and vdb", got, err)
	}
}
