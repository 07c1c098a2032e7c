package drivers

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/fake"
	"github.com/stratus-cloud/stratus/virt/ironic"
	"github.com/stratus-cloud/stratus/virt/libvirt"
	"github.com/stratus-cloud/stratus/virt/vmware"
)

// Names are the drivers New builds.
var Names = []string{"fake", "libvirt", "vmware", "ironic"}

// Check reports whether name is a driver New builds, in the words the
// agent's configuration errors use.
func Check(name string) error {
	if slices.Contains(Names, name) {
		return nil
	}
	return fmt.Errorf("virt driver %q is not available (available: %s)", name, strings.Join(Names, ", "))
}

// New builds the driver o names. None of them waits for its backend:
// libvirt dials in the background, VMware and Ironic connect when first
// used, so a caller retries registration until HostInfo answers. Bad
// options of the driver are its error.
func New(o Options) (virt.Driver, error) {
	if err := Check(o.Driver); err != nil {
		return nil, err
	}
	switch o.Driver {
	case "libvirt":
		l := o.Libvirt
		return libvirt.New(libvirt.Config{URI: l.URI, VNCListen: l.VNCListen, ImagesDir: l.ImagesDir,
			VirtType: l.VirtType, MigrationURI: l.MigrationURI, SharedStorage: l.SharedStorage, Namespace: l.Namespace,
			SoftRebootTimeout: l.SoftRebootTimeout, Logger: o.Logger})
	case "vmware":
		v := o.VMware
		return vmware.New(vmware.Config{URL: v.URL, Username: v.Username, Password: v.Password,
			Insecure: v.Insecure, CAFile: v.CAFile, Datacenter: v.Datacenter, Cluster: v.Cluster,
			Datastore: v.Datastore, ResourcePool: v.ResourcePool, Folder: v.Folder,
			VNCPortMin: v.VNCPortMin, VNCPortTotal: v.VNCPortTotal, Logger: o.Logger})
	case "ironic":
		return ironic.New(ironicConfig(o))
	default: // "fake"
		f := o.Fake
		return fake.Open(fake.Config{HostName: f.HostName, SpawnLatency: f.SpawnLatency, StatePath: f.StatePath})
	}
}

// ironicConfig is the Ironic driver's config of o.
func ironicConfig(o Options) ironic.Config {
	ic := o.Ironic
	cfg := ironic.Config{Endpoint: ic.Endpoint, AuthType: ic.AuthType,
		ResourceClassPrefix: ic.ResourceClassPrefix, PollInterval: ic.PollInterval,
		DeployTimeout: ic.DeployTimeout, Logger: o.Logger}
	k := ic.Keystone
	cfg.Keystone = ironic.KeystoneConfig{AuthURL: k.AuthURL, Username: k.Username, Password: k.Password,
		ProjectName: k.ProjectName, UserDomainName: k.UserDomainName,
		ProjectDomainName: k.ProjectDomainName, Region: k.Region}
	return cfg
}
