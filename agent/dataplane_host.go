package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/dataplane"
	"github.com/stratus-cloud/stratus/structs"
)

// DataplaneConfig is the client's dataplane block: whether the agent
// wires this host's networking (Linux bridges, dnsmasq, nftables; see
// client/dataplane). Off by default: it needs root, and the fake driver's
// guests have no taps to wire.
type DataplaneConfig struct {
	Enabled bool `hcl:"enabled,optional"`
	// MetadataIP and MetadataPort are where guests' requests to
	// 169.254.169.254:80 go (default: port 8775 on the address of the
	// bridge they came in on).
	MetadataIP   string `hcl:"metadata_ip,optional"`
	MetadataPort int    `hcl:"metadata_port,optional"`
	// TablePrefix names the nftables tables (default "stratus").
	TablePrefix string `hcl:"table_prefix,optional"`
	// Netns runs the dataplane inside that (existing) network namespace
	// instead of the host's: for tests, and hosts whose guests' taps
	// live there.
	Netns string `hcl:"netns,optional"`
	// TunnelIP is this host's tunnel endpoint (VTEP): the underlay
	// address the other hosts send its tenant networks' VXLAN traffic
	// to, registered with the host (default: the agent's advertise
	// address).
	TunnelIP string `hcl:"tunnel_ip,optional"`
	// PhysicalInterfaces maps provider networks' physical_network names
	// to this host's interfaces ("physnet1" = "eth1"): a flat network's
	// bridge gets the interface, a VLAN network's a sub-interface
	// <iface>.<vid> of it.
	PhysicalInterfaces map[string]string `hcl:"physical_interfaces,optional"`
}

// checkDataplane fills in and checks the dataplane block: the tunnel
// endpoint defaults to the advertise address.
func (c *Config) checkDataplane() error {
	dc := c.Client.Dataplane
	if dc == nil || !dc.Enabled {
		return nil
	}
	if dc.TunnelIP == "" {
		dc.TunnelIP = c.Advertise
	}
	if err := structs.ValidTunnelIP(dc.TunnelIP); err != nil {
		return fmt.Errorf("client dataplane tunnel_ip: %w", err)
	}
	if err := dataplane.CheckPhysicalInterfaces(dc.PhysicalInterfaces); err != nil {
		return fmt.Errorf("client dataplane physical_interfaces: %w", err)
	}
	return nil
}

// tunnelIP is the tunnel endpoint the i-th host of the agent registers:
// the first host's, which the dataplane wires, when it is on.
func (a *Agent) tunnelIP(i int) string {
	if dc := a.config.Client.Dataplane; i == 0 && dc != nil && dc.Enabled {
		return dc.TunnelIP
	}
	return ""
}

// startDataplane starts the dataplane agent of a host's client when the
// config enables it; its files live in dir/dataplane.
func (a *Agent) startDataplane(c *client.Client, dir string) error {
	dc := a.config.Client.Dataplane
	if dc == nil || !dc.Enabled {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("start dataplane: it needs root (bridges, nftables, dnsmasq); turn client.dataplane off or run as root")
	}
	if missing := dataplane.Missing(); len(missing) > 0 {
		return fmt.Errorf("start dataplane: %s not found (scripts/netplane-setup.sh installs them)", strings.Join(missing, ", "))
	}
	plane, err := dataplane.New(dataplane.Config{Owner: c.HostID(), StateDir: filepath.Join(dir, "dataplane"),
		TablePrefix: dc.TablePrefix, MetadataIP: dc.MetadataIP, MetadataPort: dc.MetadataPort, Netns: dc.Netns,
		TunnelIP: dc.TunnelIP, PhysicalInterfaces: dc.PhysicalInterfaces,
		Logger: a.logger.Named("dataplane")})
	if err != nil {
		return fmt.Errorf("start dataplane: %w", err)
	}
	dp, err := dataplane.NewAgent(dataplane.AgentConfig{HostID: c.HostID(), NodeSecret: c.NodeSecret(), RPC: a.nodeRPC(), Plane: plane,
		Logger: a.logger})
	if err != nil {
		return fmt.Errorf("start dataplane: %w", err)
	}
	dp.Start()
	a.dataplanes = append(a.dataplanes, dp)
	return nil
}
