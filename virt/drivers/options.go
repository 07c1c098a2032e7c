package drivers

import (
	"time"

	"github.com/hashicorp/go-hclog"
)

// Options say which driver to build and how. Only the block of the named
// driver is read; zero fields take that driver's defaults.
type Options struct {
	// Driver is the driver's name: one of Names.
	Driver string
	// Logger receives the driver's logs (default: discard). The fake
	// logs nothing.
	Logger hclog.Logger

	Fake    Fake
	Libvirt Libvirt
	VMware  VMware
	Ironic  Ironic
}

// Fake configures the simulated hypervisor.
type Fake struct {
	// HostName is the name the simulated host reports.
	HostName string
	// SpawnLatency delays each spawn, as a real hypervisor would.
	SpawnLatency time.Duration
	// StatePath is the file the fake keeps its guests in, so that they
	// outlive a restart of the agent as a real hypervisor's do.
	StatePath string
}

// Libvirt configures the libvirt driver (see libvirt.Config for each
// field's meaning and default).
type Libvirt struct {
	URI               string
	VNCListen         string
	ImagesDir         string
	VirtType          string
	MigrationURI      string
	SharedStorage     bool
	Namespace         string
	SoftRebootTimeout time.Duration
}

// VMware configures the VMware driver (see vmware.Config).
type VMware struct {
	URL, Username, Password string
	Insecure                bool
	CAFile                  string
	// Inventory paths or names; empty picks the only one there is.
	Datacenter, Cluster, Datastore, ResourcePool, Folder string
	// VNCPortMin and VNCPortTotal are the VNC port range for VMs.
	VNCPortMin, VNCPortTotal int
}

// Ironic configures the Ironic driver (see ironic.Config).
type Ironic struct {
	Endpoint            string
	AuthType            string
	Keystone            IronicKeystone
	ResourceClassPrefix string
	PollInterval        time.Duration
	DeployTimeout       time.Duration
}

// IronicKeystone are the service user's credentials for AuthType
// "keystone".
type IronicKeystone struct {
	AuthURL, Username, Password       string
	ProjectName                       string
	UserDomainName, ProjectDomainName string
	Region                            string
}
