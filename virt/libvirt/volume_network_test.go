package libvirt

import (
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/virt"
)

// TestNetworkVolumeDisk: a network volume becomes a raw network disk
// with its servers, TLS and cephx secret by UUID (never the key), and
// bad sources are refused before anything is attached.
func TestNetworkVolumeDisk(t *testing.T) {
	t.Parallel()
	mv, err := newMetaVolume(&virt.Volume{ID: "vol-1", Network: &virt.NetworkDisk{
		Protocol: virt.NetworkRBD, Name: "volumes/vol-1", Hosts: []string{"10.0.0.1:6789", "10.0.0.2:6789"},
		User: "cinder", SecretUUID: "0f6c7c3e-2a3a-4b0e-9d7b-0c2e5b8f4a11",
	}}, "sdb")
	if err != nil {
		t.Fatal(err)
	}
	disk := volumeDisk(mv)
	doc, err := disk.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`type="raw"`, `protocol="rbd"`, `name="volumes/vol-1"`, `<host name="10.0.0.2" port="6789">`,
		`username="cinder"`, `type="ceph" uuid="0f6c7c3e-2a3a-4b0e-9d7b-0c2e5b8f4a11"`, `dev="sdb" bus="scsi"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("rbd disk lacks %s:\n%s", want, doc)
		}
	}
	nbd, err := newMetaVolume(&virt.Volume{ID: "vol-2", Network: &virt.NetworkDisk{
		Protocol: virt.NetworkNBD, Name: "att-1", Hosts: []string{"[::1]:10809"}, TLS: true,
	}}, "sdc")
	if err != nil {
		t.Fatal(err)
	}
	nbdDisk := volumeDisk(nbd)
	if doc, _ := nbdDisk.Marshal(); !strings.Contains(doc, `protocol="nbd" name="att-1" tls="yes"`) || !strings.Contains(doc, `name="::1" port="10809"`) {
		t.Errorf("nbd disk:\n%s", doc)
	}
	if !nbd.sameSource(&virt.Volume{ID: "vol-2", Network: &virt.NetworkDisk{Protocol: virt.NetworkNBD, Name: "att-1", Hosts: []string{"[::1]:10809"}}}) ||
		nbd.sameSource(&virt.Volume{ID: "vol-2", Path: "/x"}) {
		t.Error("sameSource")
	}
	for name, v := range map[string]*virt.Volume{
		"both":     {ID: "v", Path: "/x", Network: &virt.NetworkDisk{Protocol: "nbd", Name: "a", Hosts: []string{"h:1"}}},
		"neither":  {ID: "v"},
		"protocol": {ID: "v", Network: &virt.NetworkDisk{Protocol: "iscsi", Name: "a", Hosts: []string{"h:1"}}},
		"no host":  {ID: "v", Network: &virt.NetworkDisk{Protocol: "nbd", Name: "a"}},
		"bad host": {ID: "v", Network: &virt.NetworkDisk{Protocol: "nbd", Name: "a", Hosts: []string{"h"}}},
	} {
		if _, err := newMetaVolume(v, "sdb"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
