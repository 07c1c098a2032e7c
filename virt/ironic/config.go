package ironic

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/noauth"
	"github.com/hashicorp/go-hclog"
)

// Auth types.
const (
	AuthNoAuth   = "noauth"
	AuthKeystone = "keystone"
)

// Defaults of the Config fields left zero.
const (
	DefaultPollInterval  = 2 * time.Second
	DefaultDeployTimeout = 60 * time.Minute
	// APIMicroversion is the Bare Metal API version the driver asks for:
	// 1.50 has resource_class, traits and owner on nodes.
	APIMicroversion = "1.50"
)

// ImageSourceProperty is the image property whose value becomes the
// node's instance_info.image_source (a Glance id or an http(s) URL of
// the image); without it the instance's image id is used.
const ImageSourceProperty = "ironic_image_source"

// Config configures a Driver. Zero values take the defaults noted beside
// the fields.
type Config struct {
	// Endpoint is Ironic's API root, such as http://ironic:6385 (noauth;
	// with Keystone it overrides the catalog's endpoint when set).
	Endpoint string
	// AuthType is "noauth" (default) or "keystone".
	AuthType string
	// Keystone are the credentials of AuthType "keystone".
	Keystone KeystoneConfig
	// ResourceClassPrefix restricts the driver to the nodes whose
	// resource_class starts with it (empty: every node), so several
	// agents can share one Ironic.
	ResourceClassPrefix string
	// PollInterval is how often a deploy or tear-down is polled (default
	// 2s); retries after a 409 start at a tenth of it.
	PollInterval time.Duration
	// DeployTimeout bounds a deploy (default 60m).
	DeployTimeout time.Duration
	// Logger receives the driver's logs (default: discard).
	Logger hclog.Logger
}

// KeystoneConfig are the Keystone credentials of the service user.
type KeystoneConfig struct {
	AuthURL           string
	Username          string
	Password          string
	ProjectName       string
	UserDomainName    string
	ProjectDomainName string
	Region            string
}

// withDefaults checks cfg and fills in the defaults.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.AuthType == "" {
		cfg.AuthType = AuthNoAuth
	}
	var errs []error
	switch cfg.AuthType {
	case AuthNoAuth:
		if cfg.Endpoint == "" {
			errs = append(errs, errors.New("endpoint is required with auth_type noauth"))
		}
	case AuthKeystone:
		if cfg.Keystone.AuthURL == "" || cfg.Keystone.Username == "" || cfg.Keystone.Password == "" {
			errs = append(errs, errors.New("keystone auth needs auth_url, username and password"))
		}
	default:
		errs = append(errs, fmt.Errorf("auth_type %q is not noauth or keystone", cfg.AuthType))
	}
	if cfg.Endpoint != "" {
		if u, err := url.Parse(cfg.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("endpoint %q is not an http(s) URL", cfg.Endpoint))
		}
	}
	if cfg.PollInterval < 0 || cfg.DeployTimeout < 0 {
		errs = append(errs, errors.New("intervals must not be negative"))
	}
	if len(errs) > 0 {
		return cfg, fmt.Errorf("ironic config: %w", errors.Join(errs...))
	}
	if cfg.PollInterval == 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.DeployTimeout == 0 {
		cfg.DeployTimeout = DefaultDeployTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return cfg, nil
}

// v1Endpoint returns the endpoint with /v1/ appended once.
func v1Endpoint(ep string) string {
	ep = strings.TrimRight(ep, "/")
	if !strings.HasSuffix(ep, "/v1") {
		ep += "/v1"
	}
	return ep + "/"
}

// serviceClient builds the Bare Metal client the config asks for.
func serviceClient(ctx context.Context, cfg Config) (*gophercloud.ServiceClient, error) {
	var sc *gophercloud.ServiceClient
	switch cfg.AuthType {
	case AuthKeystone:
		k := cfg.Keystone
		pc, err := openstack.AuthenticatedClient(ctx, gophercloud.AuthOptions{
			IdentityEndpoint: k.AuthURL, Username: k.Username, Password: k.Password,
			DomainName: k.UserDomainName, AllowReauth: true,
			Scope: &gophercloud.AuthScope{ProjectName: k.ProjectName, DomainName: k.ProjectDomainName},
		})
		if err != nil {
			return nil, fmt.Errorf("ironic: keystone auth: %w", err)
		}
		if cfg.Endpoint != "" {
			// The configured endpoint wins over the catalog, which
			// then need not list Ironic at all.
			sc = &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: v1Endpoint(cfg.Endpoint), Type: "baremetal"}
			sc.ResourceBase = sc.Endpoint
			break
		}
		sc, err = openstack.NewBareMetalV1(pc, gophercloud.EndpointOpts{Region: k.Region})
		if err != nil {
			return nil, fmt.Errorf("ironic: find the baremetal endpoint in the catalog: %w", err)
		}
	default:
		var err error
		sc, err = noauth.NewBareMetalNoAuth(noauth.EndpointOpts{IronicEndpoint: v1Endpoint(cfg.Endpoint)})
		if err != nil {
			return nil, fmt.Errorf("ironic: %w", err)
		}
	}
	sc.Microversion = APIMicroversion
	return sc, nil
}
