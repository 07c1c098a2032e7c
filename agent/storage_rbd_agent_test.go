package agent

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/stratus-cloud/stratus/internal/cephtest"
	"github.com/stratus-cloud/stratus/structs"
)

// testCephBlock is a ceph block for the cluster scripts/ceph-setup.sh
// runs (STRATUS_CEPH_DIR, default /var/lib/stratus-ceph); without one
// that answers the test fails under CI=true and skips elsewhere.
func testCephBlock(t *testing.T) *CephConfig {
	t.Helper()
	c := cephtest.Need(t)
	return &CephConfig{Pool: cephtest.Pool, User: cephtest.User, Conf: c.Conf, Keyring: c.Keyring,
		MonHosts: []string{c.Mon}, SecretUUID: uuid.NewString()}
}

// TestAgentKeepsVolumesInRBD: an agent with storage { backend = "rbd",
// backend_name = "ceph" } advertises its backend; a volume of a type
// whose volume_backend_name is "ceph" is placed on it and made as an
// image in the real cluster, attaches to an instance on another host (a
// simulated one) through Ceph, without any NBD export, detaches, and
// goes with its image when deleted. A type naming another backend finds
// no host, and a server cannot be created with an RBD volume yet.
func TestAgentKeepsVolumesInRBD(t *testing.T) {
	cc := testCephBlock(t)
	a := testAgent(t, func(c *Config) {
		c.Client = &ClientConfig{SimulatedHosts: 1, Ceph: cc,
			Storage: &StorageConfig{Backend: "rbd", BackendName: "ceph", CapacityGB: 20}}
	})
	for _, vt := range []*structs.VolumeType{
		{Name: "ceph", IsPublic: true, ExtraSpecs: map[string]string{"volume_backend_name": "ceph"}},
		{Name: "lvm", IsPublic: true, ExtraSpecs: map[string]string{"volume_backend_name": "lvm"}},
	} {
		if err := a.rpc.RPC("Volume.TypeUpsert", &structs.VolumeTypeUpsertRequest{Type: vt}, &structs.SingleVolumeTypeResponse{}); err != nil {
			t.Fatal(err)
		}
	}
	create := func(typ string) *structs.Volume {
		t.Helper()
		var vr structs.SingleVolumeResponse
		if err := a.rpc.RPC("Volume.Create", &structs.VolumeCreateRequest{ProjectID: "p1",
			Volume: &structs.Volume{Name: "v-" + typ, SizeGB: 1, VolumeTypeID: typ}}, &vr); err != nil {
			t.Fatal(err)
		}
		return vr.Volume
	}
	if v := create("lvm"); v.Status != structs.VolumeError || v.Host != "" {
		t.Fatalf("a volume of a type no host serves: status %s on %q", v.Status, v.Host)
	}
	vol := waitVolumeRPC(t, a, create("ceph").ID, structs.VolumeAvailable)
	image := "volume-" + vol.ID
	rbd := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("rbd", append([]string{"-c", cc.Conf, "--id", "cinder"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("rbd %v: %v: %s", args, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		_ = exec.Command("rbd", "-c", cc.Conf, "--id", "cinder", "rm", "volumes/"+image).Run()
	})
	if vol.Backend != structs.VolumeBackendRBD || vol.Format != "raw" || vol.ProviderLocation != "volumes/"+image {
		t.Fatalf("volume kept as %s/%s at %q", vol.Backend, vol.Format, vol.ProviderLocation)
	}
	if !strings.Contains(rbd("ls", "volumes"), image) {
		t.Fatalf("no image %s in the pool", image)
	}

	_, volTask := bootBesideVolume(t, a, vol)
	// The storage host has no NBD server: only Ceph reaches the other host.
	volTask(structs.OpAttachVolume)
	waitVolumeRPC(t, a, vol.ID, structs.VolumeInUse)
	volTask(structs.OpDetachVolume)
	waitVolumeRPC(t, a, vol.ID, structs.VolumeAvailable)

	if err := a.rpc.RPC("Volume.Delete", &structs.VolumeDeleteRequest{VolumeID: vol.ID, ProjectID: "p1"}, &structs.GenericResponse{}); err != nil {
		t.Fatal(err)
	}
	waitLong(t, "the image deleted", func() error {
		if strings.Contains(rbd("ls", "volumes"), image) {
			return fmt.Errorf("image %s is still in the pool", image)
		}
		return nil
	})
}
