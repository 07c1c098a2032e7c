package dataplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// DefaultMetadataPort is the metadata service's port (Nova's 8775).
const DefaultMetadataPort = 8775

// Config configures a Plane.
type Config struct {
	// Owner names the plane (the host id): the bridges it makes are
	// marked with it, so it only ever removes its own, and its tenant
	// bridges' MACs derive from it, so the other hosts reach this one's
	// when it holds a router's SNAT (BridgeMAC). Required.
	//
	// A network namespace has one plane: the policy routing rules and
	// tables it owns (routing_plan.go) are the namespace's.
	Owner string
	// StateDir holds dnsmasq's files (one directory per network).
	// Required.
	StateDir string
	// Netns runs everything inside that network namespace ("": the
	// host's own).
	Netns string
	// TablePrefix names the nftables tables (<prefix>, <prefix>_l2,
	// <prefix>_nat; default "stratus").
	TablePrefix string
	// MetadataIP and MetadataPort are where 169.254.169.254:80 goes:
	// with MetadataIP empty, the port on the address of the bridge the
	// request came in on (the subnet's gateway). Port 0 means 8775; a
	// negative port turns the redirect off.
	MetadataIP   string
	MetadataPort int
	// TunnelIP is this host's tunnel endpoint (VTEP): the local address
	// of its VXLAN devices, which must be an address of the host (of
	// Netns). "" wires no overlay: VXLAN networks stay host-local.
	TunnelIP string
	// PhysicalInterfaces maps provider networks' physical_network names
	// to interfaces: a flat network's bridge gets the interface, a VLAN
	// network's the sub-interface <iface>.<vid> the plane makes.
	PhysicalInterfaces map[string]string
	// Logger receives the plane's logs (default: discard).
	Logger hclog.Logger
}

// Plane wires one host's (or one namespace's) networking.
type Plane struct {
	cfg    Config
	run    runner
	logger hclog.Logger

	// applyMu serializes Apply and Teardown, and guards warned: the
	// provider networks already logged as without an interface here.
	applyMu sync.Mutex
	warned  map[string]bool
	// mu guards last, the desired state last applied.
	mu   sync.Mutex
	last *Desired
}

var tableName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,40}$`)

// New checks cfg and returns a plane; it changes nothing.
func New(cfg Config) (*Plane, error) {
	if cfg.Owner == "" {
		return nil, errors.New("dataplane: an owner is required")
	}
	if cfg.StateDir == "" {
		return nil, errors.New("dataplane: a state dir is required")
	}
	if cfg.TablePrefix == "" {
		cfg.TablePrefix = "stratus"
	}
	if !tableName.MatchString(cfg.TablePrefix) {
		return nil, fmt.Errorf("dataplane: table prefix %q is not a valid nftables name", cfg.TablePrefix)
	}
	if err := cfg.checkOverlay(); err != nil {
		return nil, err
	}
	if cfg.MetadataPort == 0 {
		cfg.MetadataPort = DefaultMetadataPort
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		return nil, fmt.Errorf("dataplane: state dir: %w", err)
	}
	return &Plane{cfg: cfg, run: runner{netns: cfg.Netns}, logger: cfg.Logger}, nil
}

// Apply makes the dataplane what d says: bridges, addresses, taps on
// their bridges, dnsmasq per network, the nftables tables; and removes
// what the plane made that d no longer has. It is idempotent; after a
// failure a later Apply picks up where it stopped.
func (p *Plane) Apply(ctx context.Context, d *Desired) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("dataplane: %w", err)
	}
	p.applyMu.Lock()
	defer p.applyMu.Unlock()
	p.mu.Lock()
	p.last = d
	p.mu.Unlock()
	if err := p.sysctls(ctx, d); err != nil {
		return err
	}
	all, err := p.links(ctx, "")
	if err != nil {
		return err
	}
	links := make(map[string]ipLink, len(all))
	for _, l := range all {
		links[l.IfName] = l
	}
	var errs []error
	for i := range d.Networks {
		if err := p.ensureBridge(ctx, &d.Networks[i], links); err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.ensureOverlay(ctx, d, links); err != nil {
		errs = append(errs, err)
	}
	if err := p.ensureRouting(ctx, d); err != nil {
		errs = append(errs, err)
	}
	if err := p.plugTaps(ctx, d, links); err != nil {
		errs = append(errs, err)
	}
	if err := p.applyRules(ctx, d); err != nil {
		errs = append(errs, err)
	}
	for i := range d.Networks {
		if err := p.ensureDHCP(ctx, &d.Networks[i], d.Ports); err != nil {
			errs = append(errs, err)
		}
	}
	if err := p.removeStale(ctx, d); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// sysctls turns on what the rules need: bridged traffic through the
// inet hooks (security groups) and, when there is NAT, forwarding.
func (p *Plane) sysctls(ctx context.Context, d *Desired) error {
	if len(d.Ports) == 0 {
		return nil
	}
	settings := []string{"net.bridge.bridge-nf-call-iptables=1", "net.bridge.bridge-nf-call-ip6tables=1"}
	if len(d.FloatingIPs) > 0 || len(d.Routers) > 0 {
		settings = append(settings, "net.ipv4.ip_forward=1")
	}
	for _, s := range settings {
		if _, err := p.run.run(ctx, "sysctl", "-q", "-w", s); err != nil {
			return fmt.Errorf("dataplane: %w", err)
		}
	}
	return nil
}

// tables are the plane's nftables tables (family and name).
func (p *Plane) tables() [][2]string {
	pre := p.cfg.TablePrefix
	return [][2]string{{"inet", pre}, {"bridge", pre + "_l2"}, {"ip", pre + "_nat"}}
}

// applyRules replaces the plane's three tables in one transaction.
func (p *Plane) applyRules(ctx context.Context, d *Desired) error {
	var b strings.Builder
	for _, t := range p.tables() {
		// Declaring the table first makes the delete succeed when it
		// does not exist yet.
		fmt.Fprintf(&b, "table %s %s {}\ndelete table %s %s\n", t[0], t[1], t[0], t[1])
	}
	pre := p.cfg.TablePrefix
	b.WriteString(renderFilter(pre, d))
	b.WriteString(renderL2(pre+"_l2", d))
	b.WriteString(p.renderNAT(pre+"_nat", d))
	if _, err := p.run.runInput(ctx, []byte(b.String()), "nft", "-f", "-"); err != nil {
		return fmt.Errorf("dataplane: apply nftables rules: %w", err)
	}
	return nil
}

// removeStale removes the dnsmasqs and bridges of networks d does not
// have.
func (p *Plane) removeStale(ctx context.Context, d *Desired) error {
	var errs []error
	nets, err := p.dhcpNetworks()
	if err != nil {
		errs = append(errs, err)
	}
	for _, id := range nets {
		if n := d.network(id); n == nil || len(dhcpSubnets(n)) == 0 {
			if err := p.stopDHCP(ctx, id); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := p.removeStaleOverlay(ctx, d); err != nil {
		errs = append(errs, err)
	}
	owned, err := p.ownedBridges(ctx)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	want := map[string]bool{}
	for _, n := range d.Networks {
		want[BridgeName(n.ID)] = true
	}
	for br := range owned {
		if !want[br] {
			if err := p.deleteBridge(ctx, br); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Teardown removes everything the plane made: its dnsmasqs, bridges and
// tables (an agent taken off a host, a test's cleanup).
func (p *Plane) Teardown(ctx context.Context) error {
	p.applyMu.Lock()
	defer p.applyMu.Unlock()
	var errs []error
	if err := p.removeStale(ctx, &Desired{}); err != nil {
		errs = append(errs, err)
	}
	if err := p.ensureRouting(ctx, &Desired{}); err != nil {
		errs = append(errs, err)
	}
	var b strings.Builder
	for _, t := range p.tables() {
		fmt.Fprintf(&b, "table %s %s {}\ndelete table %s %s\n", t[0], t[1], t[0], t[1])
	}
	if _, err := p.run.runInput(ctx, []byte(b.String()), "nft", "-f", "-"); err != nil {
		errs = append(errs, fmt.Errorf("dataplane: remove nftables tables: %w", err))
	}
	p.mu.Lock()
	p.last = nil
	p.mu.Unlock()
	return errors.Join(errs...)
}
