package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/stratus-cloud/stratus/virt"
	"github.com/stratus-cloud/stratus/virt/drivers"
)

// VMwareConfig is the client's vmware block (driver = "vmware"): the
// vCenter and the cluster this agent represents as one host.
type VMwareConfig struct {
	// URL is vCenter's SDK endpoint, https://vcenter.example.com/sdk.
	URL      string `hcl:"url"`
	Username string `hcl:"username,optional"`
	Password string `hcl:"password,optional"`
	// Insecure skips verifying vCenter's certificate; CAFile names the
	// PEM bundle to verify it with instead.
	Insecure bool   `hcl:"insecure,optional"`
	CAFile   string `hcl:"ca_file,optional"`
	// Inventory paths or names; empty picks the only one there is (the
	// cluster's root resource pool, the datacenter's VM folder).
	Datacenter   string `hcl:"datacenter,optional"`
	Cluster      string `hcl:"cluster,optional"`
	Datastore    string `hcl:"datastore,optional"`
	ResourcePool string `hcl:"resource_pool,optional"`
	Folder       string `hcl:"folder,optional"`
	// VNCPort and VNCPortTotal are the VNC port range handed to VMs
	// (Nova's vnc_port, vnc_port_total: 5900 and 10000).
	VNCPort      int `hcl:"vnc_port,optional"`
	VNCPortTotal int `hcl:"vnc_port_total,optional"`
}

// IronicConfig is the client's ironic block (driver = "ironic").
type IronicConfig struct {
	// Endpoint is Ironic's API, http://ironic:6385 (required with
	// noauth; with keystone it overrides the catalog).
	Endpoint string `hcl:"endpoint,optional"`
	// AuthType is noauth (default) or keystone.
	AuthType string `hcl:"auth_type,optional"`
	// Keystone are the service user's credentials for auth_type keystone.
	Keystone *IronicKeystoneConfig `hcl:"keystone,block"`
	// ResourceClassPrefix limits the agent to nodes whose resource_class
	// starts with it.
	ResourceClassPrefix string `hcl:"resource_class_prefix,optional"`
	// PollInterval is how often deploys are polled ("2s").
	PollInterval string `hcl:"poll_interval,optional"`
	// DeployTimeout bounds a deploy ("60m").
	DeployTimeout string `hcl:"deploy_timeout,optional"`
}

// IronicKeystoneConfig is the keystone block inside the ironic block.
type IronicKeystoneConfig struct {
	AuthURL           string `hcl:"auth_url"`
	Username          string `hcl:"username"`
	Password          string `hcl:"password"`
	ProjectName       string `hcl:"project_name,optional"`
	UserDomainName    string `hcl:"user_domain_name,optional"`
	ProjectDomainName string `hcl:"project_domain_name,optional"`
	Region            string `hcl:"region,optional"`
}

// checkRemoteDriver validates the vmware or ironic block of a client
// whose driver is one of them, by building (not connecting) the driver.
func checkRemoteDriver(cc *ClientConfig) error {
	switch cc.Driver {
	case "vmware":
		if cc.VMware == nil {
			return errors.New(`driver "vmware" needs a vmware { url = … } block in the client block`)
		}
	case "ironic":
		if cc.Ironic == nil {
			return errors.New(`driver "ironic" needs an ironic { endpoint = … } block in the client block`)
		}
	default:
		return nil
	}
	_, err := newRemoteDriver(cc, hclog.NewNullLogger())
	return err
}

// newRemoteDriver builds the vmware or ironic driver of a client config.
// Neither reaches its manager until first used: registration retries
// until HostInfo answers.
func newRemoteDriver(cc *ClientConfig, logger hclog.Logger) (virt.Driver, error) {
	opts := drivers.Options{Driver: cc.Driver, Logger: logger}
	switch cc.Driver {
	case "vmware":
		opts.VMware = vmwareOptions(cc.VMware)
	case "ironic":
		var err error
		if opts.Ironic, err = ironicOptions(cc.Ironic); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("virt driver %q is not a remote driver", cc.Driver)
	}
	return drivers.New(opts)
}

// vmwareOptions are the driver options of a vmware block.
func vmwareOptions(v *VMwareConfig) drivers.VMware {
	if v == nil {
		v = &VMwareConfig{}
	}
	return drivers.VMware{URL: v.URL, Username: v.Username, Password: v.Password,
		Insecure: v.Insecure, CAFile: v.CAFile, Datacenter: v.Datacenter, Cluster: v.Cluster,
		Datastore: v.Datastore, ResourcePool: v.ResourcePool, Folder: v.Folder,
		VNCPortMin: v.VNCPort, VNCPortTotal: v.VNCPortTotal}
}

// ironicOptions are the driver options of an ironic block, its
// durations parsed.
func ironicOptions(ic *IronicConfig) (drivers.Ironic, error) {
	if ic == nil {
		ic = &IronicConfig{}
	}
	poll, err := optionalDuration("ironic poll_interval", ic.PollInterval)
	if err != nil {
		return drivers.Ironic{}, err
	}
	deploy, err := optionalDuration("ironic deploy_timeout", ic.DeployTimeout)
	if err != nil {
		return drivers.Ironic{}, err
	}
	o := drivers.Ironic{Endpoint: ic.Endpoint, AuthType: ic.AuthType,
		ResourceClassPrefix: ic.ResourceClassPrefix, PollInterval: poll, DeployTimeout: deploy}
	if k := ic.Keystone; k != nil {
		o.Keystone = drivers.IronicKeystone{AuthURL: k.AuthURL, Username: k.Username, Password: k.Password,
			ProjectName: k.ProjectName, UserDomainName: k.UserDomainName,
			ProjectDomainName: k.ProjectDomainName, Region: k.Region}
	}
	return o, nil
}

// optionalDuration parses a positive duration; "" is zero (the default).
func optionalDuration(name, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s %q is not a positive duration such as 2s", name, s)
	}
	return d, nil
}
