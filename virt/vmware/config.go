package vmware

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Image properties the driver reads.
const (
	// TemplateProperty names a template VM (inventory path or name)
	// to clone the instance from.
	TemplateProperty = "vmware_template"
	// ImagePathProperty names the local raw image file to upload as
	// the root disk (the same property the libvirt driver reads).
	ImagePathProperty = "stratus_image_path"
	// GuestIDProperty sets the VM's guest OS identifier (default
	// otherGuest64), Nova's vmware_ostype.
	GuestIDProperty = "vmware_ostype"
)

// ExtraConfig keys the driver sets on its VMs.
const (
	keyInstanceID = "stratus.instance_id"
	keyVNCEnabled = "RemoteDisplay.vnc.enabled"
	keyVNCPort    = "RemoteDisplay.vnc.port"
)

// Defaults of the Config fields left zero.
const (
	DefaultVNCPortMin       = 5900
	DefaultVNCPortTotal     = 10000
	DefaultShutdownTimeout  = 60 * time.Second
	DefaultGuestID          = "otherGuest64"
	DefaultImageCacheFolder = "stratus-images"
)

// Config configures a Driver. Zero values take the defaults noted beside
// the fields; empty inventory names pick the only one there is.
type Config struct {
	// URL is vCenter's SDK endpoint, https://vcenter/sdk.
	URL string
	// Username and Password log in (a user in the URL works too).
	Username, Password string
	// Insecure skips verifying vCenter's certificate.
	Insecure bool
	// CAFile is a PEM bundle of the CAs vCenter's certificate chains
	// to.
	CAFile string
	// Datacenter, Cluster, Datastore, ResourcePool and Folder are
	// inventory paths or names. ResourcePool defaults to the cluster's
	// root pool, Folder to the datacenter's VM folder.
	Datacenter, Cluster, Datastore, ResourcePool, Folder string
	// VNCPortMin and VNCPortTotal are the range of VNC ports handed
	// out to VMs (default 5900 and 10000, Nova's vnc_port and
	// vnc_port_total).
	VNCPortMin, VNCPortTotal int
	// Logger receives the driver's logs (default: discard).
	Logger hclog.Logger
}

// withDefaults checks cfg and fills in the defaults.
func (cfg Config) withDefaults() (Config, error) {
	var errs []error
	u, err := url.Parse(cfg.URL)
	if cfg.URL == "" || err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, fmt.Errorf("url %q is not vCenter's https://HOST/sdk", cfg.URL))
	}
	if cfg.VNCPortMin < 0 || cfg.VNCPortTotal < 0 || cfg.VNCPortMin+cfg.VNCPortTotal > 65536 {
		errs = append(errs, errors.New("vnc port range must lie within 1-65535"))
	}
	if len(errs) > 0 {
		return cfg, fmt.Errorf("vmware config: %w", errors.Join(errs...))
	}
	if cfg.VNCPortMin == 0 {
		cfg.VNCPortMin = DefaultVNCPortMin
	}
	if cfg.VNCPortTotal == 0 {
		cfg.VNCPortTotal = min(DefaultVNCPortTotal, 65536-cfg.VNCPortMin)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return cfg, nil
}
