package agent

import (
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsimple"

	"github.com/stratus-cloud/stratus/internal/httpx"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/server/scheduler"
	"github.com/stratus-cloud/stratus/tlsutil"
	"github.com/stratus-cloud/stratus/virt/drivers"
)

// Default ports, as in DESIGN.md: the HTTP API on Nova's own port.
const (
	DefaultHTTPPort   = 8774
	DefaultRPCPort    = 8776
	DefaultGossipPort = 8777
)

// Config is the agent's configuration. Fields carry HCL tags so a config
// file can set them; flags override the file.
type Config struct {
	NodeName  string `hcl:"name,optional"`
	Region    string `hcl:"region,optional"`
	AZ        string `hcl:"availability_zone,optional"`
	DataDir   string `hcl:"data_dir,optional"`
	BindAddr  string `hcl:"bind_addr,optional"`
	Advertise string `hcl:"advertise_addr,optional"`
	LogLevel  string `hcl:"log_level,optional"`
	// Encrypt is the gossip encryption key, base64 of 16, 24 or 32
	// bytes; every member of the pool needs the same one.
	Encrypt string `hcl:"encrypt,optional"`
	LogJSON bool   `hcl:"log_json,optional"`
	// LogFile, when set, is a file the log is written to as well as
	// stderr, rotated at LogRotateBytes (default 100 MiB) and every
	// LogRotateDuration ("24h"; default never), keeping
	// LogRotateMaxFiles old files (default 5; -1 keeps all).
	LogFile           string `hcl:"log_file,optional"`
	LogRotateBytes    int64  `hcl:"log_rotate_bytes,optional"`
	LogRotateDuration string `hcl:"log_rotate_duration,optional"`
	LogRotateMaxFiles int    `hcl:"log_rotate_max_files,optional"`
	// AccessLog is the level the HTTP APIs' access log is written at
	// ("trace", "debug", "info"; default "debug", so it shows with
	// log_level = "debug"), or "off".
	AccessLog string `hcl:"access_log,optional"`
	// EnableDebug serves the Go profiler at /v1/agent/pprof/ to admins
	// (Nomad's enable_debug); off by default.
	EnableDebug bool `hcl:"enable_debug,optional"`
	// PublicURL, when set, is the base URL clients reach the HTTP APIs
	// at ("https://cloud.example.com"): the Keystone catalog and every
	// link the APIs answer are built on it, whatever the request says.
	PublicURL string `hcl:"public_url,optional"`
	// HTTPTrustedProxies are the addresses (IPs or CIDR prefixes) of
	// reverse proxies whose X-Forwarded-Proto and X-Forwarded-Host are
	// believed when building links; the headers of any other client are
	// ignored. Empty trusts none.
	HTTPTrustedProxies []string `hcl:"http_trusted_proxies,optional"`

	Ports *PortsConfig `hcl:"ports,block"`

	TLS *TLSConfig `hcl:"tls,block"`

	Server *ServerConfig `hcl:"server,block"`
	Client *ClientConfig `hcl:"client,block"`

	// S3 configures the S3 API's dedicated listener (agent/s3.go).
	S3 *S3Config `hcl:"s3,block"`

	// Limits bounds HTTP requests: sizes, timeouts, rates (agent/limits.go).
	Limits *LimitsConfig `hcl:"limits,block"`

	// ACL configures authentication of the native API (agent/auth.go).
	ACL *ACLConfig `hcl:"acl,block"`

	// DevMode runs a single self-bootstrapping server with seeded
	// flavors. It is set by --dev, never by a file.
	DevMode bool
	// DevTLS, with DevMode, serves HTTPS with a CA and certificate made
	// in the data dir (dev_tls.go): `cloudctl agent --dev -tls`.
	DevTLS bool
	// DevImage is the bootable disk dev mode registers as image
	// "stratus-dev" (scripts/build-dev-image.sh builds it); empty looks
	// for build/dev-image/stratus-dev.img, and none is registered when
	// that file does not exist.
	DevImage string `hcl:"dev_image,optional"`
	// Version is the build version, advertised in gossip.
	Version string
	// LogBuffer, when set, holds the agent's recent log lines, which
	// GET /v1/agent/logs serves to admins. `cloudctl agent` sets it;
	// never a file.
	LogBuffer *LogBuffer

	// devTempDir is set when dev mode made DataDir itself and should
	// remove it on shutdown.
	devTempDir bool
}

// ACLConfig configures the native API's authentication and, on a
// server, the check of every RPC against its rule
// (server/rpc_policy.go).
type ACLConfig struct {
	// Enabled makes every /v1 route but the public ones require a token
	// from the identity service, and a server check the credential of
	// every RPC. Unset means on, except in dev mode, whose native API is
	// open as Nomad's -dev (its Keystone, Nova, Glance and Neutron APIs
	// always require tokens). Every server of a cluster needs the same
	// setting.
	Enabled *bool `hcl:"enabled,optional"`
}

// ACLEnabled reports whether the native API requires tokens and a
// server enforces its RPC rules.
func (c *Config) ACLEnabled() bool {
	if c.ACL == nil || c.ACL.Enabled == nil {
		return !c.DevMode
	}
	return *c.ACL.Enabled
}

// PortsConfig sets the listening ports; 0 picks a free one.
type PortsConfig struct {
	HTTP   *int `hcl:"http,optional"`
	RPC    *int `hcl:"rpc,optional"`
	Gossip *int `hcl:"gossip,optional"`
}

// TLSConfig secures RPC and Raft between agents with mutual TLS, and
// the HTTP APIs (as Nomad's tls { http = true }).
type TLSConfig struct {
	// RPC turns TLS on for RPC and Raft; every agent then needs the CA.
	RPC bool `hcl:"rpc,optional"`
	// HTTP turns TLS on for the HTTP port (every API, the disk exports),
	// the S3 listener and the console proxy, with cert_file and
	// key_file (reloaded on SIGHUP); the metadata service stays plain on
	// its link-local address, as Nova's.
	HTTP bool `hcl:"http,optional"`
	// VerifyHTTPSClient makes the HTTPS listeners require a client
	// certificate signed by ca_file.
	VerifyHTTPSClient    bool   `hcl:"verify_https_client,optional"`
	CAFile               string `hcl:"ca_file,optional"`
	CertFile             string `hcl:"cert_file,optional"`
	KeyFile              string `hcl:"key_file,optional"`
	VerifyIncoming       bool   `hcl:"verify_incoming,optional"`
	VerifyServerHostname bool   `hcl:"verify_server_hostname,optional"`
	// CAKeyFile is the CA's private key. Servers that have it sign the
	// certificates of Nova's os-certificates API with the CA; without it
	// the cluster makes and replicates a CA of its own for that API.
	CAKeyFile string `hcl:"ca_key_file,optional"`
	// Domain is the domain of role names: with verify_server_hostname a
	// server must present server.<region>.<domain> (default "stratus").
	Domain string `hcl:"domain,optional"`
}

// rpcTLS returns the rpc package's view of the TLS config, or nil.
func (c *Config) rpcTLS() *rpc.TLSConfig {
	if c.TLS == nil || !c.TLS.RPC {
		return nil
	}
	t := &rpc.TLSConfig{
		CAFile: c.TLS.CAFile, CertFile: c.TLS.CertFile, KeyFile: c.TLS.KeyFile,
		VerifyIncoming: c.TLS.VerifyIncoming, VerifyServerHostname: c.TLS.VerifyServerHostname,
	}
	if t.VerifyServerHostname {
		t.ServerName = tlsutil.RoleName(tlsutil.RoleServer, c.Region, c.TLS.Domain)
	}
	return t
}

// raftPeerName is the name incoming Raft connections must present, or "".
func (c *Config) raftPeerName() string {
	if t := c.rpcTLS(); t != nil {
		return t.RaftPeerName()
	}
	return ""
}

// keyringFile is where the agent persists its gossip keyring.
func (c *Config) keyringFile() string {
	if c.DataDir == "" {
		return ""
	}
	return filepath.Join(c.DataDir, "gossip.keyring")
}

// tlsConfigs builds the server- and client-side TLS configurations for
// RPC, both nil when TLS is off.
func (c *Config) tlsConfigs() (server, client *tls.Config, err error) {
	t := c.rpcTLS()
	if t == nil {
		return nil, nil, nil
	}
	if server, err = t.ServerConfig(); err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	if client, err = t.ClientConfig(); err != nil {
		return nil, nil, fmt.Errorf("tls: %w", err)
	}
	return server, client, nil
}

// ServerConfig enables and tunes the server role.
type ServerConfig struct {
	Enabled         bool     `hcl:"enabled,optional"`
	BootstrapExpect int      `hcl:"bootstrap_expect,optional"`
	RetryJoin       []string `hcl:"retry_join,optional"`
	// NumSchedulers is the number of scheduler workers (default: CPUs).
	NumSchedulers int `hcl:"num_schedulers,optional"`
	// RaftTimeScale multiplies Raft's heartbeat and election timeouts
	// (default 1, tuned for a LAN); raise it for slow networks or
	// overloaded machines, at the cost of slower failover.
	RaftTimeScale float64 `hcl:"raft_time_scale,optional"`
	// HeartbeatTTL is how long a silent host stays up, e.g. "10s".
	HeartbeatTTL string `hcl:"heartbeat_ttl,optional"`
	// MaxHeartbeatsPerSecond caps all agents' heartbeats together; with
	// more hosts the TTL grows past heartbeat_ttl (default 50).
	MaxHeartbeatsPerSecond float64 `hcl:"max_heartbeats_per_second,optional"`
	// MaxBuildAttempts is Nova's max_attempts (default 3).
	MaxBuildAttempts int `hcl:"max_build_attempts,optional"`
	// ResizeConfirmWindow confirms finished resizes and migrations after
	// this long, e.g. "1h" (Nova's resize_confirm_window; "0" never).
	ResizeConfirmWindow string `hcl:"resize_confirm_window,optional"`
	// ShelvedOffloadTime is how long a shelved instance keeps its host
	// (Nova's shelved_offload_time: "0" offloads at once, "-1" never).
	ShelvedOffloadTime string `hcl:"shelved_offload_time,optional"`
	// AllowResizeToSameHost lets a resize stay on the instance's host,
	// resized in place (Nova's allow_resize_to_same_host, default
	// false).
	AllowResizeToSameHost bool `hcl:"allow_resize_to_same_host,optional"`
	// ReclaimInstanceInterval makes deletes soft and restorable for this
	// long (Nova's reclaim_instance_interval; "0", the default, deletes
	// at once).
	ReclaimInstanceInterval string `hcl:"reclaim_instance_interval,optional"`
	// VolumeBuildTimeout is how long a server booting from volumes it
	// makes waits for them before it goes to ERROR, e.g. "30m" (default
	// 10m; Nova's block_device_allocate_retries times their interval).
	VolumeBuildTimeout string `hcl:"volume_build_timeout,optional"`
	// DeletedRetention is how long a deleted instance's records (its
	// actions, usage record and migrations) are kept before the leader
	// purges them, e.g. "72h" (default 24h; "0" or "forever" keeps them,
	// as Nova does until nova-manage db purge).
	DeletedRetention string `hcl:"deleted_retention,optional"`
	// EvalGCThreshold is how long a finished evaluation is kept, e.g.
	// "1h" (the default, as Nomad's eval_gc_threshold).
	EvalGCThreshold string `hcl:"eval_gc_threshold,optional"`
	// IdempotencyKeyTTL is how long a create's Idempotency-Key is
	// remembered, e.g. "1h" (the default); keep it longer than clients
	// retry.
	IdempotencyKeyTTL string `hcl:"idempotency_key_ttl,optional"`

	Scheduler *SchedulerConfig `hcl:"scheduler,block"`
	// Network segments tenant networks (config_network.go).
	Network *ServerNetworkConfig `hcl:"network,block"`
}

// SchedulerConfig tunes the weighers, with Nova's option names.
type SchedulerConfig struct {
	HostSubsetSize               *int     `hcl:"host_subset_size,optional"`
	RAMWeightMultiplier          *float64 `hcl:"ram_weight_multiplier,optional"`
	CPUWeightMultiplier          *float64 `hcl:"cpu_weight_multiplier,optional"`
	DiskWeightMultiplier         *float64 `hcl:"disk_weight_multiplier,optional"`
	BuildFailureWeightMultiplier *float64 `hcl:"build_failure_weight_multiplier,optional"`
}

// ClientConfig enables the hypervisor-agent role.
type ClientConfig struct {
	Enabled bool `hcl:"enabled,optional"`
	// Driver is the virt driver: fake (default), libvirt, vmware or
	// ironic.
	Driver string `hcl:"driver,optional"`
	// Libvirt configures the libvirt driver (driver = "libvirt").
	Libvirt *LibvirtConfig `hcl:"libvirt,block"`
	// Metadata configures the metadata service (agent/metadata_service.go).
	Metadata *MetadataConfig `hcl:"metadata,block"`
	// Dataplane wires the host's networking (agent/dataplane_host.go).
	Dataplane *DataplaneConfig `hcl:"dataplane,block"`
	// VMware and Ironic configure those drivers (agent/drivers_remote.go).
	VMware *VMwareConfig `hcl:"vmware,block"`
	Ironic *IronicConfig `hcl:"ironic,block"`
	// ImageCache configures the cache of image files that drivers
	// building disks from images (libvirt) boot from.
	ImageCache *ImageCacheConfig `hcl:"image_cache,block"`
	// Storage makes the agent's host a storage host: it keeps a volume
	// pool for the Block Storage API (agent/storage.go).
	Storage *StorageConfig `hcl:"storage,block"`
	// Ceph is the Ceph cluster the host's RBD volumes live in: the
	// storage agent's with storage { backend = "rbd" }, and every
	// hypervisor host's that attaches RBD volumes (agent/config_ceph.go).
	Ceph *CephConfig `hcl:"ceph,block"`
	// SimulatedHosts adds that many fake hosts behind this agent, for
	// watching scheduling across many hosts (--dev-hosts).
	SimulatedHosts int      `hcl:"simulated_hosts,optional"`
	Servers        []string `hcl:"servers,optional"`
	RetryJoin      []string `hcl:"retry_join,optional"`
	// IntroToken, or the file IntroTokenFile names, is the node
	// introduction token (cloudctl operator node-intro create) the first
	// registration of this agent's hosts carries; $STRATUS_INTRO_TOKEN
	// otherwise (agent/node_intro.go).
	IntroToken     string `hcl:"intro_token,optional"`
	IntroTokenFile string `hcl:"intro_token_file,optional"`
	// Inventory tuning with Nova's option names; zero keeps Nova's
	// defaults (CPU 4.0, RAM 1.0, disk 1.0, 512 MB reserved).
	CPUAllocationRatio   float64 `hcl:"cpu_allocation_ratio,optional"`
	RAMAllocationRatio   float64 `hcl:"ram_allocation_ratio,optional"`
	DiskAllocationRatio  float64 `hcl:"disk_allocation_ratio,optional"`
	ReservedHostMemoryMB int64   `hcl:"reserved_host_memory_mb,optional"`
	ReservedHostCPUs     int64   `hcl:"reserved_host_cpus,optional"`
	ReservedHostDiskGB   int64   `hcl:"reserved_host_disk_gb,optional"`
	// FakeSpawnLatency makes the fake driver's spawns take this long
	// ("3s"), to watch BUILD in dev mode or to test interruptions.
	FakeSpawnLatency string `hcl:"fake_spawn_latency,optional"`
	// Console configures the console proxies (see ConsoleConfig).
	Console *ConsoleConfig `hcl:"console,block"`
}

// StorageConfig is the client's storage block.
type StorageConfig struct {
	// PoolDir holds the volumes and snapshots (qcow2 files). Required
	// by the file backend.
	PoolDir string `hcl:"pool_dir,optional"`
	// Backend is what keeps the volumes: "file" (the default, PoolDir)
	// or "rbd" (the client's ceph block).
	Backend string `hcl:"backend,optional"`
	// BackendName is the name volume types choose this host's backend
	// by (their volume_backend_name extra spec); empty is chosen only by
	// types that name none.
	BackendName string `hcl:"backend_name,optional"`
	// CapacityGB is how much the pool may hold; 0 is the size of the
	// file system under PoolDir.
	CapacityGB int64 `hcl:"capacity_gb,optional"`
	// NBDAddress (host:port, reachable from the other hosts) is where
	// the storage agent serves its volumes to instances on other hosts,
	// as NBD exports over TLS with the tls block's CA, certificate and
	// key. Empty serves no other host: volumes attach only to instances
	// on this host.
	NBDAddress string `hcl:"nbd_address,optional"`
	// NBDSharedClientCert admits, besides the hosts' own certificates
	// (cloudctl tls cert create -client -host), the subject every
	// client agent shared before them (client.<region>.<domain>) to
	// every export: for an upgrade, until each hypervisor host presents
	// its own certificate. Off by default: a shared certificate is
	// refused.
	NBDSharedClientCert bool `hcl:"nbd_shared_client_cert,optional"`
}

// ImageCacheConfig is the client's image_cache block.
type ImageCacheConfig struct {
	// Dir holds the cached images (default <data_dir>/client/image-cache).
	Dir string `hcl:"dir,optional"`
	// MaxSizeMB bounds the cache; past it, the least recently used
	// images no instance uses are removed (default 20480; 0 keeps the
	// default, a negative value means unbounded).
	MaxSizeMB int64 `hcl:"max_size_mb,optional"`
}

// LibvirtConfig is the client's libvirt block; empty fields keep the
// driver's defaults (see virt/libvirt.Config).
type LibvirtConfig struct {
	// URI is libvirtd's connection URI (default qemu:///system).
	URI string `hcl:"uri,optional"`
	// VNCListen is the address guests' VNC servers bind (127.0.0.1).
	VNCListen string `hcl:"vnc_listen,optional"`
	// ImagesDir holds the storage pool: cached base images and the
	// instances' disks (/var/lib/stratus/libvirt/images).
	ImagesDir string `hcl:"images_dir,optional"`
	// VirtType forces kvm or qemu (TCG); empty picks kvm when usable.
	VirtType string `hcl:"virt_type,optional"`
	// MigrationURI is how other hosts' libvirtds reach this one for live
	// migration; setting it turns live migration on.
	MigrationURI string `hcl:"migration_uri,optional"`
	// SharedStorage says the hosts share images_dir (and the console
	// directory beside it) at the same paths: live migration then
	// copies no disks.
	SharedStorage bool `hcl:"shared_storage,optional"`
	// Namespace isolates agents that share one libvirtd.
	Namespace string `hcl:"namespace,optional"`
	// SoftRebootTimeout is how long a guest gets to shut down for a soft
	// reboot or a resize before it is forced ("60s").
	SoftRebootTimeout string `hcl:"soft_reboot_timeout,optional"`
}

// LoadConfigFile parses an HCL config file. Unknown blocks and attributes
// are errors that name the file, line and column.
func LoadConfigFile(path string) (*Config, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	var c Config
	if err := hclsimple.Decode(path+".hcl", src, nil, &c); err != nil {
		var diags hcl.Diagnostics
		if errors.As(err, &diags) {
			return nil, fmt.Errorf("config %s: %s", path, strings.ReplaceAll(diags.Error(), path+".hcl", path))
		}
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return &c, nil
}

// HTTPPort, RPCPort and GossipPort return the configured ports or defaults.
func (c *Config) HTTPPort() int {
	return portOr(c.Ports, func(p *PortsConfig) *int { return p.HTTP }, DefaultHTTPPort)
}
func (c *Config) RPCPort() int {
	return portOr(c.Ports, func(p *PortsConfig) *int { return p.RPC }, DefaultRPCPort)
}
func (c *Config) GossipPort() int {
	return portOr(c.Ports, func(p *PortsConfig) *int { return p.Gossip }, DefaultGossipPort)
}

func portOr(p *PortsConfig, get func(*PortsConfig) *int, def int) int {
	if p == nil || get(p) == nil {
		return def
	}
	return *get(p)
}

// IsServer and IsClient report the roles this agent runs.
func (c *Config) IsServer() bool { return c.Server != nil && c.Server.Enabled }

// IsClient reports whether this agent runs the hypervisor-agent role.
func (c *Config) IsClient() bool { return c.Client != nil && c.Client.Enabled }

// Finalize applies defaults and checks the result.
func (c *Config) Finalize() error {
	if c.Server == nil {
		c.Server = &ServerConfig{}
	}
	if c.Client == nil {
		c.Client = &ClientConfig{}
	}
	if err := c.finalizeDev(); err != nil {
		return err
	}
	if !c.IsServer() && !c.IsClient() {
		return fmt.Errorf("agent must run as a server (--server), a client (--client), or both (--dev)")
	}
	if err := c.finalizeAddresses(); err != nil {
		return err
	}
	if c.Client.Driver == "" {
		c.Client.Driver = "fake"
	}
	if err := c.checkStorage(); err != nil {
		return err
	}
	if err := c.checkNBD(); err != nil {
		return err
	}
	if c.Client.SimulatedHosts < 0 || c.Client.SimulatedHosts > 10000 {
		return fmt.Errorf("simulated hosts must be between 0 and 10000")
	}
	if err := c.checkServer(); err != nil {
		return err
	}
	if _, err := c.netSegments(); err != nil {
		return err
	}
	if s := c.Server.Scheduler; s != nil && s.HostSubsetSize != nil && *s.HostSubsetSize < 1 {
		return fmt.Errorf("host_subset_size must be at least 1")
	}
	if err := drivers.Check(c.Client.Driver); err != nil {
		return err
	}
	if err := checkRemoteDriver(c.Client); err != nil {
		return err
	}
	if err := c.checkClient(); err != nil {
		return err
	}
	if c.Encrypt != "" {
		if _, err := c.gossipKey(); err != nil {
			return err
		}
	}
	if err := c.checkTLS(); err != nil {
		return err
	}
	if _, err := httpx.NewForwarding(c.HTTPTrustedProxies, c.PublicURL); err != nil {
		return err
	}
	switch c.AccessLog {
	case "", "off", "trace", "debug", "info":
	default:
		return fmt.Errorf("access_log %q: want off, trace, debug or info", c.AccessLog)
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.NodeName == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("no node name given and hostname failed: %w", err)
		}
		c.NodeName = host
	}
	return nil
}

// firstPrivateIP finds an address to advertise when binding everywhere.
func firstPrivateIP() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("no non-loopback IPv4 address found")
}

// nodeID returns the agent's persistent id, creating it in the data dir
// on first start so a restart keeps its Raft identity.
func nodeID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, "node-id")
	if b, err := os.ReadFile(path); err == nil {
		id := strings.TrimSpace(string(b))
		if len(id) == 36 {
			return id, nil
		}
		return "", fmt.Errorf("node id file %s is corrupt", path)
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("read node id: %w", err)
	}
	id, err := newUUID()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return "", fmt.Errorf("create data dir: %w", err)
	}
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write node id: %w", err)
	}
	return id, nil
}

func newUUID() (string, error) {
	id, err := uuid.NewRandom()
	if err != nil {
		return "", fmt.Errorf("generate node id: %w", err)
	}
	return id.String(), nil
}

// schedulerConfig turns the scheduler block into the scheduler's config
// over Nova's defaults.
func (c *Config) schedulerConfig() scheduler.Config {
	out := scheduler.DefaultConfig()
	s := c.Server.Scheduler
	if s == nil {
		return out
	}
	if s.HostSubsetSize != nil {
		out.HostSubsetSize = *s.HostSubsetSize
	}
	for _, f := range []struct {
		src *float64
		dst *float64
	}{
		{s.RAMWeightMultiplier, &out.RAMWeightMultiplier},
		{s.CPUWeightMultiplier, &out.CPUWeightMultiplier},
		{s.DiskWeightMultiplier, &out.DiskWeightMultiplier},
		{s.BuildFailureWeightMultiplier, &out.BuildFailureWeightMultiplier},
	} {
		if f.src != nil {
			*f.dst = *f.src
		}
	}
	return out
}

// heartbeatTTL returns the configured TTL, or zero for the default.
func (c *Config) heartbeatTTL() time.Duration {
	d, _ := time.ParseDuration(c.Server.HeartbeatTTL)
	return d
}

// lifecycleDuration parses one of Nova's lifecycle timers: a duration
// such as "1h", or a number of seconds as Nova writes them; "-1" (never)
// only where allowNever.
func lifecycleDuration(v string, allowNever bool) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		n, nerr := strconv.Atoi(v)
		if nerr != nil {
			return 0, fmt.Errorf("%q is not a duration such as 1h or a number of seconds", v)
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 && !allowNever {
		return 0, fmt.Errorf("%q must not be negative", v)
	}
	if d < 0 {
		d = -1
	}
	return d, nil
}

// deletedRetention parses deleted_retention for the server's
// DeletedRetention: "" is the default (0), "0", "-1" or "forever" keep
// deleted instances' records forever (-1), else a positive duration or
// number of seconds.
func deletedRetention(v string) (time.Duration, error) {
	switch v {
	case "":
		return 0, nil
	case "forever":
		return -1, nil
	}
	d, err := lifecycleDuration(v, true)
	if err != nil {
		return 0, fmt.Errorf("%w (or \"forever\")", err)
	}
	if d <= 0 {
		return -1, nil
	}
	return d, nil
}

// gossipKey decodes the gossip encryption key (nil when unset).
func (c *Config) gossipKey() ([]byte, error) {
	if c.Encrypt == "" {
		return nil, nil
	}
	key, err := base64.StdEncoding.DecodeString(c.Encrypt)
	if err != nil || (len(key) != 16 && len(key) != 24 && len(key) != 32) {
		return nil, fmt.Errorf("encrypt must be base64 of a 16, 24 or 32 byte key")
	}
	return key, nil
}

// mustRetention parses a deleted_retention Validate already accepted.
func mustRetention(v string) time.Duration {
	d, _ := deletedRetention(v)
	return d
}

// mustDuration parses a lifecycle timer Validate already accepted.
func mustDuration(v string) time.Duration {
	d, _ := lifecycleDuration(v, true)
	return d
}
