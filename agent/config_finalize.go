package agent

import (
	"fmt"
	"net"
	"os"
	"time"
)

// finalizeDev fills in what -dev implies: a client and a single-node
// server, a temporary data dir and node name "dev", the dev TLS files
// (-tls) and the dev storage pool.
func (c *Config) finalizeDev() error {
	if c.DevMode {
		c.Client.Enabled = true
		if c.DataDir == "" {
			dir, err := os.MkdirTemp("", "stratus-dev-")
			if err != nil {
				return fmt.Errorf("dev mode data dir: %w", err)
			}
			c.DataDir, c.devTempDir = dir, true
		}
		if c.NodeName == "" {
			c.NodeName = "dev"
		}
		c.Server.Enabled = true
		if c.Server.BootstrapExpect == 0 {
			c.Server.BootstrapExpect = 1
		}
		if c.DevTLS {
			if err := c.devTLSFiles(); err != nil {
				return err
			}
		}
		c.devStorage()
	} else if c.DevTLS {
		return fmt.Errorf("-tls makes a dev cloud's certificates: it needs -dev (give a tls block otherwise)")
	}
	return nil
}

// finalizeAddresses defaults the region, zone, bind and advertise
// addresses, and checks the ports.
func (c *Config) finalizeAddresses() error {
	if c.Region == "" {
		c.Region = "global"
	}
	if c.AZ == "" {
		c.AZ = "nova"
	}
	if c.BindAddr == "" {
		c.BindAddr = "127.0.0.1"
		if !c.DevMode {
			c.BindAddr = "0.0.0.0"
		}
	}
	if net.ParseIP(c.BindAddr) == nil {
		return fmt.Errorf("bind address %q is not an IP address", c.BindAddr)
	}
	if c.Advertise == "" && (c.BindAddr == "0.0.0.0" || c.BindAddr == "::") {
		ip, err := firstPrivateIP()
		if err != nil {
			return fmt.Errorf("bind address is %s and no advertise address was given: %w", c.BindAddr, err)
		}
		c.Advertise = ip
	}
	if c.Advertise == "" {
		c.Advertise = c.BindAddr
	}
	for name, p := range map[string]int{"http": c.HTTPPort(), "rpc": c.RPCPort(), "gossip": c.GossipPort()} {
		if p < 0 || p > 65535 {
			return fmt.Errorf("%s port %d is out of range", name, p)
		}
	}
	return nil
}

// checkServer checks the server block's numbers and durations.
func (c *Config) checkServer() error {
	if c.Server.BootstrapExpect < 0 {
		return fmt.Errorf("bootstrap_expect must not be negative")
	}
	if c.Server.MaxHeartbeatsPerSecond < 0 {
		return fmt.Errorf("max_heartbeats_per_second must not be negative")
	}
	if c.Server.HeartbeatTTL != "" {
		if d, err := time.ParseDuration(c.Server.HeartbeatTTL); err != nil || d <= 0 {
			return fmt.Errorf("heartbeat_ttl %q is not a positive duration such as 10s", c.Server.HeartbeatTTL)
		}
	}
	for name, v := range map[string]string{"resize_confirm_window": c.Server.ResizeConfirmWindow,
		"shelved_offload_time": c.Server.ShelvedOffloadTime, "reclaim_instance_interval": c.Server.ReclaimInstanceInterval} {
		if _, err := lifecycleDuration(v, name == "shelved_offload_time"); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if _, err := deletedRetention(c.Server.DeletedRetention); err != nil {
		return fmt.Errorf("deleted_retention: %w", err)
	}
	for name, v := range map[string]string{"eval_gc_threshold": c.Server.EvalGCThreshold, "idempotency_key_ttl": c.Server.IdempotencyKeyTTL,
		"volume_build_timeout": c.Server.VolumeBuildTimeout} {
		if d, err := lifecycleDuration(v, false); err != nil || (v != "" && d <= 0) {
			return fmt.Errorf("%s: %q is not a positive duration such as 1h", name, v)
		}
	}
	if c.Server.RaftTimeScale < 0 || c.Server.RaftTimeScale > 100 {
		return fmt.Errorf("raft_time_scale must be between 0 (the default, 1) and 100")
	}
	if c.Server.NumSchedulers < 0 || c.Server.MaxBuildAttempts < 0 {
		return fmt.Errorf("num_schedulers and max_build_attempts must not be negative")
	}
	return nil
}

// checkClient checks the client block's driver settings, services,
// limits, latencies and allocation ratios.
func (c *Config) checkClient() error {
	if lc := c.Client.Libvirt; lc != nil && lc.SoftRebootTimeout != "" {
		if d, err := time.ParseDuration(lc.SoftRebootTimeout); err != nil || d <= 0 {
			return fmt.Errorf("libvirt soft_reboot_timeout %q is not a positive duration such as 60s", lc.SoftRebootTimeout)
		}
	}
	if err := c.Client.checkMetadata(); err != nil {
		return err
	}
	if err := c.checkDataplane(); err != nil {
		return err
	}
	if err := c.Client.checkConsole(); err != nil {
		return err
	}
	if err := c.finalizeLimits(); err != nil {
		return err
	}
	if c.Client.FakeSpawnLatency != "" {
		if d, err := time.ParseDuration(c.Client.FakeSpawnLatency); err != nil || d < 0 {
			return fmt.Errorf("fake_spawn_latency %q is not a duration such as 3s", c.Client.FakeSpawnLatency)
		}
	}
	if c.Client.CPUAllocationRatio < 0 || c.Client.RAMAllocationRatio < 0 || c.Client.DiskAllocationRatio < 0 ||
		c.Client.ReservedHostCPUs < 0 || c.Client.ReservedHostDiskGB < 0 {
		return fmt.Errorf("allocation ratios and reservations must not be negative")
	}
	return nil
}

// checkTLS checks that the tls block's files go together.
func (c *Config) checkTLS() error {
	if t := c.TLS; t != nil && t.CAKeyFile != "" && t.CAFile == "" {
		return fmt.Errorf("tls ca_key_file needs ca_file, the CA certificate it belongs to")
	}
	if t := c.TLS; t != nil && t.HTTP && (t.CertFile == "" || t.KeyFile == "") {
		return fmt.Errorf("tls http needs cert_file and key_file")
	}
	if t := c.TLS; t != nil && t.VerifyHTTPSClient && (!t.HTTP || t.CAFile == "") {
		return fmt.Errorf("tls verify_https_client needs http = true and ca_file, the CA client certificates are checked against")
	}
	return nil
}
