package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/dataplane"
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
