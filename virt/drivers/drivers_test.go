package drivers_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratus-cloud/stratus/virt/drivers"
)

func TestNewBuildsByName(t *testing.T) {
	d, err := drivers.New(drivers.Options{Driver: "fake",
		Fake: drivers.Fake{HostName: "hv1", StatePath: filepath.Join(t.TempDir(), "fake.json")}})
	if err != nil || d.Name() != "fake" {
		t.Fatalf("fake: %v, %v", d, err)
	}
	d, err = drivers.New(drivers.Options{Driver: "ironic", Ironic: drivers.Ironic{Endpoint: "http://ironic:6385"}})
	if err != nil || d.Name() != "ironic" {
		t.Fatalf("ironic: %v, %v", d, err)
	}
	d, err = drivers.New(drivers.Options{Driver: "vmware", VMware: drivers.VMware{URL: "https://vcenter/sdk"}})
	if err != nil || d.Name() != "vmware" {
		t.Fatalf("vmware: %v, %v", d, err)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		o    drivers.Options
		want string
	}{
		{drivers.Options{Driver: "hyperv"}, `virt driver "hyperv" is not available (available: fake, libvirt, vmware, ironic)`},
		{drivers.Options{Driver: ""}, `virt driver "" is not available`},
		{drivers.Options{Driver: "vmware", VMware: drivers.VMware{URL: "vcenter"}}, "is not vCenter's"},
		{drivers.Options{Driver: "ironic"}, "endpoint is required"},
		{drivers.Options{Driver: "libvirt", Libvirt: drivers.Libvirt{ImagesDir: "relative"}}, "images"},
	} {
		if _, err := drivers.New(tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}
