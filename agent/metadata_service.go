package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	"github.com/stratus-cloud/stratus/agent/metadata"
)

// MetadataConfig is the client's metadata block: the metadata service
// each client agent runs for the instances it hosts (Nova's
// nova-api-metadata).
type MetadataConfig struct {
	// Disabled turns the service off.
	Disabled bool `hcl:"disabled,optional"`
	// Listen is the address to serve on (default bind_addr:8775; port 0
	// picks a free one). Guests reach it at 169.254.169.254:80 through
	// the dataplane's rules.
	Listen string `hcl:"listen,optional"`
	// ProxySharedSecret verifies requests from a metadata proxy (Nova's
	// metadata_proxy_shared_secret): X-Instance-ID signed with it.
	ProxySharedSecret string `hcl:"proxy_shared_secret,optional"`
	// CacheExpiration is how long an instance's answers are reused
	// ("15s", Nova's metadata_cache_expiration; "0s" keeps the default,
	// a negative duration turns the cache off).
	CacheExpiration string `hcl:"cache_expiration,optional"`
}

// checkMetadata checks the client's metadata block.
func (c *ClientConfig) checkMetadata() error {
	m := c.Metadata
	if m == nil {
		return nil
	}
	if m.Listen != "" {
		if _, port, err := net.SplitHostPort(m.Listen); err != nil {
			return fmt.Errorf("metadata listen %q is not host:port: %w", m.Listen, err)
		} else if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			return fmt.Errorf("metadata listen %q has no valid port", m.Listen)
		}
	}
	if m.CacheExpiration != "" {
		if _, err := time.ParseDuration(m.CacheExpiration); err != nil {
			return fmt.Errorf("metadata cache_expiration %q is not a duration such as 15s", m.CacheExpiration)
		}
	}
	return nil
}

// startMetadata starts the metadata service of a client agent. An
// explicitly configured address that cannot be bound is an error; the
// default port already in use (another agent on this machine) only
// leaves the service off, with a warning.
func (a *Agent) startMetadata() error {
	cfg := a.config
	m := cfg.Client.Metadata
	if m == nil {
		m = &MetadataConfig{}
	}
	if !cfg.IsClient() || m.Disabled {
		return nil
	}
	listen := m.Listen
	if listen == "" {
		listen = net.JoinHostPort(cfg.BindAddr, strconv.Itoa(metadata.DefaultPort))
	}
	ttl, _ := time.ParseDuration(m.CacheExpiration) // checked by Finalize
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		if m.Listen == "" && errors.Is(err, syscall.EADDRINUSE) {
			a.logger.Warn("metadata service not started: its default address is in use; set client.metadata.listen",
				"address", listen)
			return nil
		}
		return fmt.Errorf("listen for the metadata service: %w", err)
	}
	a.metadata = metadata.New(metadata.Config{Call: a.nodeRPC().RPC, HostIDs: a.localHostIDs, Member: cfg.NodeName,
		SharedSecret: m.ProxySharedSecret, CacheTTL: ttl, Logger: a.logger.Named("metadata")})
	a.metadataAddr = ln.Addr().String()
	a.bgWG.Add(1)
	go func() {
		defer a.bgWG.Done()
		if err := a.metadata.Serve(ln); err != nil {
			a.logger.Error("metadata service stopped", "error", err)
		}
	}()
	a.logger.Info("metadata service started", "address", a.metadataAddr)
	return nil
}

// stopMetadata stops the metadata service.
func (a *Agent) stopMetadata() {
	if a.metadata == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = a.metadata.Shutdown(ctx)
}

// MetadataAddr is the host:port the metadata service listens on, "" when
// it is not running.
func (a *Agent) MetadataAddr() string { return a.metadataAddr }
