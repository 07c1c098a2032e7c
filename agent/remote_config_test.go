package agent

import (
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
)

// TestRemoteDriverConfig: the vmware and ironic blocks parse, build
// their drivers without reaching vCenter or Ironic, and bad values are
// refused by Finalize with a message that names them.
func TestRemoteDriverConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ driver, block string }{
		{"vmware", `vmware {
    url        = "https://vcenter.invalid/sdk"
    username   = "stratus@vsphere.local"
    password   = "secret"
    insecure   = true
    datacenter = "DC0"
    cluster    = "DC0_C0"
    datastore  = "LocalDS_0"
    vnc_port   = 6000
  }`},
		{"ironic", `ironic {
    endpoint              = "http://ironic.invalid:6385"
    resource_class_prefix = "baremetal"
    poll_interval         = "1s"
    keystone {
      auth_url = "https://keystone.invalid/v3"
      username = "stratus"
      password = "secret"
    }
  }`},
	} {
		path := dir + "/" + tc.driver + ".hcl"
		writeFile(t, path, `
name = "hv1"
data_dir = "`+dir+`"
client {
  enabled = true
  driver  = "`+tc.driver+`"
  `+tc.block+`
}
`)
		c, err := LoadConfigFile(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.driver, err)
		}
		if err := c.Finalize(); err != nil {
			t.Fatalf("%s: %v", tc.driver, err)
		}
		drv, err := newDriver(c.Client, "hv1", dir, false, hclog.NewNullLogger())
		if err != nil || drv.Name() != tc.driver {
			t.Fatalf("%s: driver %v, %v", tc.driver, drv, err)
		}
	}

	for _, bad := range []struct {
		cc   ClientConfig
		want string
	}{
		{ClientConfig{Driver: "vmware"}, "needs a vmware"},
		{ClientConfig{Driver: "vmware", VMware: &VMwareConfig{URL: "vcenter"}}, "is not vCenter's"},
		{ClientConfig{Driver: "ironic"}, "needs an ironic"},
		{ClientConfig{Driver: "ironic", Ironic: &IronicConfig{}}, "endpoint is required"},
		{ClientConfig{Driver: "ironic", Ironic: &IronicConfig{Endpoint: "http://i:6385", AuthType: "basic"}}, `auth_type "basic"`},
		{ClientConfig{Driver: "ironic", Ironic: &IronicConfig{Endpoint: "http://i:6385", AuthType: "keystone"}}, "keystone auth needs"},
		{ClientConfig{Driver: "ironic", Ironic: &IronicConfig{Endpoint: "http://i:6385", PollInterval: "often"}}, "poll_interval"},
	} {
		cc := bad.cc
		cc.Enabled = true
		c := &Config{NodeName: "x", DataDir: dir, Client: &cc}
		if err := c.Finalize(); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: Finalize = %v, want %q", bad.cc, err, bad.want)
		}
	}
}
